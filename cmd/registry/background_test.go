package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
)

// logRecorder keeps log records so a test can tell what was logged when.
type logRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

func (r *logRecorder) records() []slog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.recs)
}

// TestBackgroundStopsBeforeClose runs serve's background work (index
// build and sync, crawler, fetch-log pruning, verification, seed file) on
// a fake clock, stops it the way serve does, closes the store, and then
// lets hours pass: nothing may run any more. A job still running would
// fail against the closed store and log it, and synctest fails the test
// if any goroutine started in the bubble is left behind.
func TestBackgroundStopsBeforeClose(t *testing.T) {
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte("# no seeds yet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Storage.DB = "sqlite:" + filepath.Join(dir, "reg.db")
	cfg.Verify.Fetch = false
	cfg.Crawl.Enabled = true
	cfg.Crawl.Seeds = seeds

	synctest.Test(t, func(t *testing.T) {
		rec := &logRecorder{}
		log := slog.New(rec)
		ctx := t.Context()
		a, err := newApp(ctx, cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		bg, err := a.startBackground(ctx)
		if err != nil {
			a.close()
			t.Fatal(err)
		}
		// Long enough for every periodic job to run more than once.
		time.Sleep(2*fetchLogPruneInterval + time.Second)
		synctest.Wait()
		for _, r := range rec.records() {
			if r.Level >= slog.LevelWarn {
				t.Errorf("while running: %s %s", r.Level, r.Message)
			}
		}

		bg.Stop()
		a.close()
		closed := len(rec.records())
		time.Sleep(24 * time.Hour)
		synctest.Wait()
		for _, r := range rec.records()[closed:] {
			t.Errorf("logged after the store closed: %s %s", r.Level, r.Message)
		}
	})
}

// TestBackgroundPrunesSessions: with sign-in configured, sessions past
// their expiry are dropped by the background work, and live ones kept.
func TestBackgroundPrunesSessions(t *testing.T) {
	cfg := config.Default()
	cfg.Storage.DB = "sqlite:" + filepath.Join(t.TempDir(), "reg.db")
	cfg.Crawl.Enabled, cfg.Verify.Fetch = false, false
	// Never contacted: the provider is discovered on the first sign-in.
	cfg.Auth.Issuer, cfg.Auth.ClientID, cfg.Server.PublicURL = "https://id.example.com", "registry", "https://registry.example.com"

	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		a, err := newApp(ctx, cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer a.close()
		now := time.Now()
		for _, s := range []catalog.Session{
			{IDHash: "dying", Subject: "a", Role: "viewer", CreatedAt: now, LastSeenAt: now,
				IdleExpiresAt: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour)},
			{IDHash: "living", Subject: "b", Role: "viewer", CreatedAt: now, LastSeenAt: now,
				IdleExpiresAt: now.Add(24 * time.Hour), ExpiresAt: now.Add(48 * time.Hour)},
		} {
			if err := a.store.CreateSession(ctx, catalog.System("test"), s); err != nil {
				t.Fatal(err)
			}
		}
		bg, err := a.startBackground(ctx)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(sessionPruneInterval + time.Minute)
		synctest.Wait()
		bg.Stop()
		if _, err := a.store.Session(ctx, "dying"); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("expired session: %v, want pruned", err)
		}
		if _, err := a.store.Session(ctx, "living"); err != nil {
			t.Errorf("live session: %v, want kept", err)
		}
	})
}
