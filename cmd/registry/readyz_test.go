package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

type fakeReadinessStore struct {
	pingErr    error
	have, want int64
	versionErr error
}

func (f fakeReadinessStore) Ping(context.Context) error { return f.pingErr }
func (f fakeReadinessStore) SchemaVersion(context.Context) (int64, int64, error) {
	return f.have, f.want, f.versionErr
}

func TestReadyz(t *testing.T) {
	down := errors.New("connection refused")
	tests := []struct {
		name       string
		store      fakeReadinessStore
		indexReady bool
		code       int
		reason     string
	}{
		{"ready", fakeReadinessStore{have: 8, want: 8}, true, http.StatusOK, ""},
		{"database down", fakeReadinessStore{pingErr: down}, true, http.StatusServiceUnavailable, notReadyDatabase},
		{"version unreadable", fakeReadinessStore{versionErr: down}, true, http.StatusServiceUnavailable, notReadySchemaUnknown},
		{"not yet migrated", fakeReadinessStore{have: 7, want: 8}, true, http.StatusServiceUnavailable, notReadySchemaBehind},
		{"migrated by a newer release", fakeReadinessStore{have: 9, want: 8}, true, http.StatusServiceUnavailable, notReadySchemaAhead},
		{"index building", fakeReadinessStore{have: 8, want: 8}, false, http.StatusServiceUnavailable, notReadyIndex},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(handlerDeps{log: slog.New(slog.DiscardHandler),
				ready: &readiness{store: tt.store, indexReady: func() bool { return tt.indexReady }, log: slog.New(slog.DiscardHandler)}})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			var body readyBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tt.code || body.Reason != tt.reason {
				t.Fatalf("GET /readyz = %d %+v; want %d reason %q", rec.Code, body, tt.code, tt.reason)
			}
			// Liveness never asks the database.
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("GET /healthz = %d", rec.Code)
			}
		})
	}
}

// TestReadyzServe checks that a real server becomes ready once its index
// is built, on both databases.
func TestReadyzServe(t *testing.T) {
	for _, db := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return catalogtest.SQLiteDSN(t) }},
		{"postgres", func(t *testing.T) string { return catalogtest.PostgresDSN(t) }},
	} {
		t.Run(db.name, func(t *testing.T) {
			base := startServe(t, db.dsn(t))
			var body readyBody
			waitUntil(t, 20*time.Second, "/readyz to answer 200", func() bool {
				resp, err := http.Get(base + "/readyz")
				if err != nil {
					return false
				}
				defer resp.Body.Close()
				return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&body) == nil
			})
			if body.Status != "ready" || body.SchemaVersion != body.BinaryVersion || body.SchemaVersion == 0 {
				t.Fatalf("ready body %+v", body)
			}
		})
	}
}
