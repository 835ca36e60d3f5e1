package catalog_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

func newSession(hash string, created time.Time, idle, max time.Duration) catalog.Session {
	return catalog.Session{
		IDHash: hash, Subject: "sub-" + hash, Email: hash + "@example.com", Name: "User " + hash,
		Role: "editor", Groups: []string{"eng", "ops"},
		CreatedAt: created, LastSeenAt: created, IdleExpiresAt: created.Add(idle), ExpiresAt: created.Add(max),
	}
}

func TestSessionLifecycle(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 3, 1, 9, 0, 0, 123456000, time.UTC)
		want := newSession("h1", t0, time.Hour, 8*time.Hour)
		if err := s.CreateSession(ctx, catalog.System("test"), want); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateSession(ctx, catalog.System("test"), want); !errors.Is(err, catalog.ErrConflict) {
			t.Errorf("second CreateSession = %v, want ErrConflict", err)
		}
		got, err := s.Session(ctx, "h1")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Session = %+v\nwant %+v", got, want)
		}

		// Touch moves the idle expiry, but never past the absolute one.
		seen := t0.Add(30 * time.Minute)
		if err := s.TouchSession(ctx, "h1", seen, seen.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Session(ctx, "h1")
		if !got.LastSeenAt.Equal(seen) || !got.IdleExpiresAt.Equal(seen.Add(time.Hour)) {
			t.Errorf("after touch: last seen %v, idle expiry %v; want %v, %v", got.LastSeenAt, got.IdleExpiresAt, seen, seen.Add(time.Hour))
		}
		late := t0.Add(7*time.Hour + 30*time.Minute)
		if err := s.TouchSession(ctx, "h1", late, late.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Session(ctx, "h1")
		if !got.IdleExpiresAt.Equal(want.ExpiresAt) {
			t.Errorf("idle expiry %v moved past the absolute expiry %v", got.IdleExpiresAt, want.ExpiresAt)
		}

		if err := s.DeleteSession(ctx, catalog.System("test"), "h1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Session(ctx, "h1"); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("Session after delete = %v, want ErrNotFound", err)
		}
		if err := s.TouchSession(ctx, "h1", late, late); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("TouchSession after delete = %v, want ErrNotFound", err)
		}
		if err := s.DeleteSession(ctx, catalog.System("test"), "h1"); err != nil {
			t.Errorf("deleting a deleted session: %v", err)
		}
		if err := s.CreateSession(ctx, catalog.System("test"), catalog.Session{IDHash: "x"}); !errors.Is(err, catalog.ErrInvalidQuery) {
			t.Errorf("CreateSession without subject = %v, want ErrInvalidQuery", err)
		}
	})
}

func TestPruneSessions(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		sessions := []struct {
			s     catalog.Session
			alive bool
		}{
			{newSession("live", now.Add(-time.Hour), 2*time.Hour, 8*time.Hour), true},
			{newSession("idle", now.Add(-3*time.Hour), 2*time.Hour, 8*time.Hour), false},
			{newSession("old", now.Add(-9*time.Hour), 10*time.Hour, 8*time.Hour), false},
			{newSession("edge", now.Add(-2*time.Hour), 2*time.Hour, 8*time.Hour), false},
		}
		for _, ss := range sessions {
			if err := s.CreateSession(ctx, catalog.System("test"), ss.s); err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.PruneSessions(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Errorf("pruned %d sessions, want 3", n)
		}
		for _, ss := range sessions {
			_, err := s.Session(ctx, ss.s.IDHash)
			if alive := err == nil; alive != ss.alive {
				t.Errorf("session %s: alive %v (err %v), want %v", ss.s.IDHash, alive, err, ss.alive)
			}
		}
	})
}
