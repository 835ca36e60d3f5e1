package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/synth"
	"github.com/a2aregistry/registry/internal/webhook"
)

// TestWebhookCrashSafety kills `registry serve` with SIGKILL while its
// webhook deliveries are in flight (the receiver holds every request),
// checks that none is lost, and restarts it: every delivery arrives, the
// ones in flight at the kill again under the same webhook-id (at least
// once). The leases of the killed process are cleared by hand instead of
// waiting their two minutes out (TestDeliverySurvivesRestart in
// internal/webhook tests the expiry).
func TestWebhookCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	const agents = 20
	gen := synth.New(5)
	fleet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // /agents/{i}/card.json
		i, err := strconv.Atoi(parts[min(1, len(parts)-1)])
		if len(parts) != 3 || err != nil || i < 0 || i >= agents {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(gen.Card(i))
	}))
	defer fleet.Close()

	var (
		mu       sync.Mutex
		hold     = true
		received = map[string]int{} // webhook-id → requests
		release  = make(chan struct{})
	)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		received[r.Header.Get("webhook-id")]++
		h := hold
		mu.Unlock()
		if h {
			<-release // in flight until the test ends
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	defer close(release)

	dir := t.TempDir()
	dbPath := filepath.Join(dir, "catalog.db")
	ctx := context.Background()
	store, err := catalog.Open(ctx, catalog.Config{DSN: "sqlite:" + dbPath})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateWebhook(ctx, catalog.System("test"), catalog.Webhook{ID: webhook.NewID(), URL: rcv.URL,
		EventTypes: []string{webhook.EventRegistered}, CreatedAt: time.Now()}, webhook.NewSecret()); err != nil {
		t.Fatal(err)
	}
	store.Close()
	seeds := filepath.Join(dir, "seeds.txt")
	var lines []string
	for i := range agents {
		lines = append(lines, fmt.Sprintf("%s/agents/%d/card.json", fleet.URL, i))
	}
	if err := os.WriteFile(seeds, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--listen", "127.0.0.1:0", "--db", "sqlite:" + dbPath, "--import-examples=false",
		"--seeds", seeds, "--allow-networks", "127.0.0.0/8", "--log-level", "warn", "--verify-fetch=false"}

	db, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string) int {
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			return -1
		}
		return n
	}
	inFlight := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range received {
			out[k] = v
		}
		return out
	}

	child := startServeProcess(t, args)
	waitUntil(t, 90*time.Second, "every agent registered and deliveries in flight", func() bool {
		return count("SELECT COUNT(*) FROM agents") == agents && len(inFlight()) > 0
	})
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	atKill := inFlight()
	if n := count("SELECT COUNT(*) FROM webhook_deliveries WHERE state <> 'pending'"); n != 0 {
		t.Fatalf("%d deliveries finished while the receiver held every request", n)
	}
	if n := count("SELECT COUNT(*) FROM webhook_deliveries"); n > agents {
		t.Fatalf("%d deliveries for %d registrations", n, agents)
	}

	mu.Lock()
	hold = false
	mu.Unlock()
	if _, err := db.Exec("UPDATE webhook_deliveries SET lease_until = NULL"); err != nil {
		t.Fatal(err)
	}
	child = startServeProcess(t, args)
	waitUntil(t, 90*time.Second, "every registration delivered after the restart", func() bool {
		return count("SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'delivered'") == agents
	})
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	child.Wait()

	got := inFlight()
	rows, err := db.Query("SELECT pk FROM webhook_deliveries")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var pk int64
		if err := rows.Scan(&pk); err != nil {
			t.Fatal(err)
		}
		id := webhook.MessageID(pk)
		if got[id] == 0 {
			t.Errorf("delivery %s never arrived", id)
		}
		if atKill[id] > 0 && got[id] < 2 {
			t.Errorf("delivery %s, in flight at the kill, was not sent again under its id", id)
		}
	}
	if len(atKill) == 0 {
		t.Fatal("nothing was in flight at the kill")
	}
	t.Logf("%d deliveries in flight at the kill, %d delivered after the restart", len(atKill), len(got))
}
