package catalog

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/synth"
)

// openSQLite opens a migrated store on path (catalogtest imports this
// package, so internal tests open stores themselves).
func openSQLite(t *testing.T, path string, log *slog.Logger) *Store {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, Config{DSN: "sqlite:" + path, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func loadSynth(t *testing.T, s *Store, from, n int) {
	t.Helper()
	gen := synth.New(5)
	var batch []UpsertInput
	for i := from; i < from+n; i++ {
		c, err := card.Parse(gen.Card(i), card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, UpsertInput{CardURL: gen.CardURL(i), Card: c})
	}
	if _, err := s.UpsertBatch(context.Background(), System("test"), batch); err != nil {
		t.Fatal(err)
	}
}

// afterClose counts log records made once Close has returned.
type afterClose struct {
	closed, late atomic.Bool
}

func (h *afterClose) Enabled(context.Context, slog.Level) bool { return true }
func (h *afterClose) Handle(context.Context, slog.Record) error {
	if h.closed.Load() {
		h.late.Store(true)
	}
	return nil
}
func (h *afterClose) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *afterClose) WithGroup(string) slog.Handler      { return h }

// Close must stop the index build and wait for it: once it returns,
// nothing the Store started runs, logs or touches the database.
func TestCloseEndsIndexBuild(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	loadSynth(t, openSQLite(t, path, nil), 0, 3000)

	h := &afterClose{}
	s := openSQLite(t, path, slog.New(h))
	b := s.startBuild()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	h.closed.Store(true)
	select {
	case <-b.done:
	default:
		t.Fatal("Close returned while the index build was still running")
	}
	if s.startBuild() != nil {
		t.Fatal("a closed Store started an index build")
	}
	if err := s.WarmIndex(context.Background()); err == nil {
		t.Fatal("WarmIndex on a closed Store succeeded")
	}
	if h.late.Load() {
		t.Fatal("the Store logged after Close returned")
	}
}

// Sync loads only what other writers changed: rows this Store wrote are
// already indexed at their seq.
func TestSyncSkipsOwnWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	a, b := openSQLite(t, path, nil), openSQLite(t, path, nil)
	ctx := context.Background()
	for _, s := range []*Store{a, b} {
		if err := s.WarmIndex(ctx); err != nil {
			t.Fatal(err)
		}
	}
	loadSynth(t, a, 0, 20)
	since := a.syncedAt.Add(-syncOverlap)
	own, _, err := a.staleDocs(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(own) != 0 {
		t.Fatalf("writer's sync would reload its own %d agents", len(own))
	}
	other, _, err := b.staleDocs(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(other) != 20 {
		t.Fatalf("replica's sync would load %d agents, want 20", len(other))
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	after, _, err := b.staleDocs(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 0 {
		t.Fatalf("replica would reload %d agents again after syncing", len(after))
	}
	if got, want := b.IndexState().Agents, 20; got != want {
		t.Fatalf("replica indexes %d agents, want %d", got, want)
	}
}

// Past its grace period, a search refuses at once with ErrIndexNotReady
// while the index is built, and answers once it is.
func TestSearchBeforeIndexReady(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	loadSynth(t, openSQLite(t, path, nil), 0, 50)
	s := openSQLite(t, path, nil)
	s.indexGrace = 0
	ctx := context.Background()
	if _, err := s.Search(ctx, Query{}); !errors.Is(err, ErrIndexNotReady) {
		t.Fatalf("search before the build: err = %v, want ErrIndexNotReady", err)
	}
	if err := s.WarmIndex(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := s.Search(ctx, Query{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 50 {
		t.Fatalf("total = %d, want 50", p.Total)
	}
}
