package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/a2aregistry/registry/internal/config"
)

// levelRecorder keeps the levels of the records it is given.
type levelRecorder struct{ levels []slog.Level }

func (r *levelRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *levelRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.levels = append(r.levels, rec.Level)
	return nil
}
func (r *levelRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *levelRecorder) WithGroup(string) slog.Handler      { return r }

// TestWarnUnsealedSecrets: a deployment without a secret key is warned, a
// loopback developer run gets a note, and a configured key says nothing.
func TestWarnUnsealedSecrets(t *testing.T) {
	signIn := config.Default()
	signIn.Auth.Issuer, signIn.Auth.ClientID = "https://id.example.com", "registry"
	keyed := config.Default()
	keyed.Storage.SecretKeyFile = "/run/secrets/registry-keys"
	for _, tc := range []struct {
		name string
		cfg  config.Config
		host string
		want []slog.Level
	}{
		{"loopback", config.Default(), "127.0.0.1", []slog.Level{slog.LevelInfo}},
		{"remote", config.Default(), "0.0.0.0", []slog.Level{slog.LevelWarn}},
		{"sign-in", signIn, "127.0.0.1", []slog.Level{slog.LevelWarn}},
		{"key file", keyed, "0.0.0.0", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &levelRecorder{}
			warnUnsealedSecrets(slog.New(rec), tc.cfg, tc.host)
			if len(rec.levels) != len(tc.want) || len(tc.want) == 1 && rec.levels[0] != tc.want[0] {
				t.Errorf("levels %v, want %v", rec.levels, tc.want)
			}
		})
	}
}
