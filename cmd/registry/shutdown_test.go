package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/synth"
)

// TestShutdownReturnsLeases stops serve while its crawler waits on agents
// that never answer: serve must return within its deadline, and every
// lease it held (checks in flight, agents claimed but not started) must be
// back in the catalog for the other replicas.
func TestShutdownReturnsLeases(t *testing.T) {
	const agents = 24
	gen := synth.New(3)
	var mu sync.Mutex
	seen := map[string]bool{}
	var hanging atomic.Int64
	fleet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := !seen[r.URL.Path]
		seen[r.URL.Path] = true
		mu.Unlock()
		if !first {
			// The crawler's check: hang until the registry gives up.
			hanging.Add(1)
			<-r.Context().Done()
			return
		}
		var i int
		fmt.Sscanf(r.URL.Path, "/agents/%d/card.json", &i)
		w.Header().Set("Cache-Control", "max-age=0")
		w.Header().Set("Content-Type", "application/json")
		w.Write(gen.Card(i))
	}))
	defer fleet.Close()

	dir := t.TempDir()
	var lines []string
	for i := range agents {
		lines = append(lines, fmt.Sprintf("%s/agents/%d/card.json", fleet.URL, i))
	}
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, "catalog.db")
	cfg := config.Default()
	cfg.Server.Listen = "127.0.0.1:0"
	cfg.Storage.DB = "sqlite:" + dbPath
	cfg.Storage.ImportExamples = false
	cfg.Verify.Fetch = false
	cfg.Outbound.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Crawl.Seeds = seeds
	cfg.Crawl.Concurrency, cfg.Crawl.PerHost = 4, 4
	cfg.Crawl.MinInterval, cfg.Crawl.MaxInterval = time.Second, time.Second
	cfg.Server.ShutdownTimeout = 5 * time.Second
	cfg.Crawl.Instance = "shutdown-test"

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, cfg, slog.New(slog.DiscardHandler), func(net.Addr) {}) }()

	db, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=10000&mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	leases := func() int {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM crawl_state WHERE lease_owner <> ''").Scan(&n); err != nil {
			return -1
		}
		return n
	}
	// Every worker stuck on a check, and more agents claimed behind them.
	waitUntil(t, 30*time.Second, "checks in flight and claims waiting", func() bool {
		return hanging.Load() >= int64(cfg.Crawl.Concurrency) && leases() > cfg.Crawl.Concurrency
	})
	stopped := time.Now()
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(cfg.Server.ShutdownTimeout + leaseReturnTimeout):
		t.Fatal("serve did not stop within its deadline")
	}
	t.Logf("stopped in %v", time.Since(stopped))
	if n := leases(); n != 0 {
		t.Errorf("%d leases held after shutdown; want all returned", n)
	}
}
