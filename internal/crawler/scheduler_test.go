package crawler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
)

// memStore is an in-memory CrawlStore that leases like the catalog does.
type memStore struct {
	mu         sync.Mutex
	targets    []*memTarget
	recorded   []catalog.FetchOutcome
	claimErr   error
	recordErr  error
	claims     int
	onRecorded func(total int)
}

type memTarget struct {
	t          catalog.CrawlTarget
	leaseUntil time.Time
}

func (s *memStore) add(t catalog.CrawlTarget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.targets = append(s.targets, &memTarget{t: t})
}

func (s *memStore) ClaimDue(ctx context.Context, now time.Time, limit int, owner string, lease time.Duration) ([]catalog.CrawlTarget, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claims++
	if s.claimErr != nil {
		return nil, s.claimErr
	}
	var out []catalog.CrawlTarget
	for _, m := range s.targets {
		if len(out) == limit {
			break
		}
		if !m.t.NextCheckAt.After(now) && !m.leaseUntil.After(now) {
			m.leaseUntil = now.Add(lease)
			out = append(out, m.t)
		}
	}
	return out, nil
}

func (s *memStore) RecordFetches(ctx context.Context, _ catalog.Actor, outs []catalog.FetchOutcome) ([]catalog.UpsertResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.recordErr != nil {
		s.mu.Unlock()
		return nil, s.recordErr
	}
	res := make([]catalog.UpsertResult, len(outs))
	for i, o := range outs {
		for _, m := range s.targets {
			if m.t.AgentID == o.AgentID {
				applyOutcome(&m.t, o)
				m.leaseUntil = time.Time{}
				res[i] = catalog.UpsertResult{Agent: catalog.Agent{ID: o.AgentID, Health: o.Health}, NewVersion: o.Card != nil}
			}
		}
	}
	s.recorded = append(s.recorded, outs...)
	total, cb := len(s.recorded), s.onRecorded
	s.mu.Unlock()
	if cb != nil {
		cb(total)
	}
	return res, nil
}

func (s *memStore) CrawlTarget(ctx context.Context, agentID string) (catalog.CrawlTarget, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.targets {
		if m.t.AgentID == agentID {
			return m.t, nil
		}
	}
	return catalog.CrawlTarget{}, fmt.Errorf("agent %s: %w", agentID, catalog.ErrNotFound)
}

func (s *memStore) outcomes() []catalog.FetchOutcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]catalog.FetchOutcome(nil), s.recorded...)
}

// serveOn starts h on a loopback address of its own (all of 127/8 is
// loopback on Linux), so each server is a distinct host to the per-host
// limit.
func serveOn(t *testing.T, ip string, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// checkNoLeak waits for the goroutine count to come back to base.
func checkNoLeak(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= base {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after Run, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type concurrencyMeter struct {
	mu      sync.Mutex
	cur     map[string]int
	maxHost map[string]int
	total   int
	maxAll  int
}

func (m *concurrencyMeter) enter(host string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cur[host]++
	m.total++
	m.maxHost[host] = max(m.maxHost[host], m.cur[host])
	m.maxAll = max(m.maxAll, m.total)
}

func (m *concurrencyMeter) leave(host string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cur[host]--
	m.total--
}

func TestRunLimits(t *testing.T) {
	meter := &concurrencyMeter{cur: map[string]int{}, maxHost: map[string]int{}}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		meter.enter(host)
		defer meter.leave(host)
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Write([]byte(testCard))
	})
	store := &memStore{}
	// The first host has most agents and comes first in claim order: if a
	// saturated host blocked the queue, the others would wait behind it.
	perHostAgents := map[string]int{"127.0.0.2": 24, "127.0.0.3": 4, "127.0.0.4": 4, "127.0.0.5": 4}
	total := 0
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		srv := serveOn(t, ip, handler)
		for i := range perHostAgents[ip] {
			store.add(catalog.CrawlTarget{AgentID: fmt.Sprintf("%s-%d", ip, i), CardURL: fmt.Sprintf("%s/agents/%d/card.json", srv.URL, i)})
			total++
		}
	}
	done := make(chan struct{})
	store.onRecorded = func(n int) {
		if n == total {
			close(done)
		}
	}
	base := runtime.NumGoroutine()
	c := testCrawler(t, store, loopback, Config{Concurrency: 5, PerHost: 2, BatchSize: 16, PollInterval: 10 * time.Millisecond, FlushSize: 4})
	ctx, cancel := context.WithCancel(t.Context())
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(ctx) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("only %d of %d outcomes recorded", len(store.outcomes()), total)
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	c.fetcher.client.CloseIdleConnections()
	checkNoLeak(t, base)

	seen := map[string]int{}
	for _, o := range store.outcomes() {
		seen[o.AgentID]++
		if o.Class != "" || o.Card == nil || o.Health != catalog.HealthUp || o.NextCheckAt.Sub(o.At) != time.Hour {
			t.Errorf("outcome %+v", o)
		}
	}
	if len(seen) != total {
		t.Errorf("%d distinct agents checked, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("agent %s checked %d times before its next check was due", id, n)
		}
	}
	for host, n := range meter.maxHost {
		if n > 2 {
			t.Errorf("host %s saw %d concurrent requests, cap 2", host, n)
		}
	}
	if meter.maxAll > 5 {
		t.Errorf("%d concurrent requests, cap 5", meter.maxAll)
	}
	if meter.maxAll <= 2 {
		t.Errorf("at most %d concurrent requests: hosts did not run side by side", meter.maxAll)
	}
}

// TestRunShutdown cancels Run while every worker is stuck in a fetch and
// the dispatcher is blocked handing the next target over.
func TestRunShutdown(t *testing.T) {
	var started atomic.Int32
	inFlight := make(chan struct{}, 16)
	srv := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Add(1)
		inFlight <- struct{}{}
		<-r.Context().Done()
	}))
	store := &memStore{}
	for i := range 10 {
		store.add(catalog.CrawlTarget{AgentID: fmt.Sprint(i), CardURL: fmt.Sprintf("%s/%d.json", srv.URL, i)})
	}
	base := runtime.NumGoroutine()
	c := testCrawler(t, store, loopback, Config{Concurrency: 2, PerHost: 10, BatchSize: 10})
	ctx, cancel := context.WithCancel(t.Context())
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(ctx) }()
	<-inFlight
	<-inFlight
	time.Sleep(50 * time.Millisecond) // let the dispatcher block on the hand-off
	cancel()
	select {
	case err := <-runErr:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if got := store.outcomes(); len(got) != 0 {
		t.Errorf("recorded %+v: checks cut short by shutdown must be left to their lease", got)
	}
	if n := started.Load(); n != 2 {
		t.Errorf("%d fetches started with concurrency 2", n)
	}
	c.fetcher.client.CloseIdleConnections()
	checkNoLeak(t, base)
}

// TestRunFlushesOnShutdown: completed outcomes still waiting for a batch
// are written at shutdown, with a context that is not the cancelled one.
func TestRunFlushesOnShutdown(t *testing.T) {
	var served atomic.Int32
	srv := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Write([]byte(testCard))
	}))
	store := &memStore{}
	for i := range 7 {
		store.add(catalog.CrawlTarget{AgentID: fmt.Sprint(i), CardURL: fmt.Sprintf("%s/%d.json", srv.URL, i)})
	}
	c := testCrawler(t, store, loopback, Config{Concurrency: 3, PerHost: 3, FlushSize: 100, FlushInterval: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for served.Load() < 7 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // outcomes reach the writer
	if n := len(store.outcomes()); n != 0 {
		t.Fatalf("%d outcomes written before the batch was full or due", n)
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
	if n := len(store.outcomes()); n != 7 {
		t.Errorf("%d outcomes flushed at shutdown, want 7", n)
	}
}

func TestRunStoreFailures(t *testing.T) {
	srv := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(testCard))
	}))
	store := &memStore{claimErr: errors.New("database is locked")}
	store.add(catalog.CrawlTarget{AgentID: "a", CardURL: srv.URL + "/a.json"})
	c := testCrawler(t, store, loopback, Config{PollInterval: 20 * time.Millisecond, FlushInterval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(ctx) }()
	time.Sleep(100 * time.Millisecond)
	store.mu.Lock()
	claims := store.claims
	store.claimErr = nil
	store.mu.Unlock()
	if claims < 2 || claims > 8 {
		t.Errorf("%d claims in 100 ms with a 20 ms poll interval after errors", claims)
	}
	deadline := time.Now().Add(3 * time.Second)
	for len(store.outcomes()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
	if n := len(store.outcomes()); n != 1 {
		t.Errorf("%d outcomes after the store recovered, want 1", n)
	}
	// Run again after the first returned is allowed.
	if err := c.Run(ctx); err != nil {
		t.Errorf("second Run: %v", err)
	}
}

func TestRunTwice(t *testing.T) {
	c := testCrawler(t, &memStore{}, loopback, Config{PollInterval: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(ctx) }()
	time.Sleep(20 * time.Millisecond)
	if err := c.Run(ctx); !errors.Is(err, ErrRunning) {
		t.Errorf("second concurrent Run: %v, want ErrRunning", err)
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
}

func TestRefreshNow(t *testing.T) {
	srv := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(testCard))
	}))
	store := &memStore{}
	store.add(catalog.CrawlTarget{AgentID: "a", CardURL: srv.URL + "/a.json", NextCheckAt: t0.Add(time.Hour)})
	c := testCrawler(t, store, loopback, Config{})

	res, err := c.RefreshNow(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome.Card == nil || res.Outcome.Health != catalog.HealthUp || !res.Stored.NewVersion || res.Stored.Agent.ID != "a" {
		t.Errorf("result %+v", res)
	}
	if n := len(store.outcomes()); n != 1 {
		t.Errorf("%d outcomes recorded", n)
	}
	if _, err := c.RefreshNow(t.Context(), "nope"); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("unknown agent: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.RefreshNow(ctx, "a"); !errors.Is(err, ErrRefreshCanceled) {
		t.Errorf("cancelled: %v", err)
	}
	if n := len(store.outcomes()); n != 1 {
		t.Errorf("a cancelled refresh was recorded")
	}
}
