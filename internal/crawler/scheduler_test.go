package crawler

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/a2aregistry/registry/internal/background"
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

type concurrencyMeter struct {
	mu      sync.Mutex
	cur     map[string]int
	maxHost map[string]int
	total   int
	maxAll  int
}

func newConcurrencyMeter() *concurrencyMeter {
	return &concurrencyMeter{cur: map[string]int{}, maxHost: map[string]int{}}
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

// The tests below exercise the scheduling alone: checks are fakes that
// take time on the fake clock of a synctest bubble, so waits and
// deadlines are exact and a goroutine left running fails the test.

// schedCrawler is a Crawler whose scheduled checks are check.
func schedCrawler(store CrawlStore, cfg Config, check func(context.Context, catalog.CrawlTarget) catalog.FetchOutcome) *Crawler {
	c := New(cfg, store, nil, nil)
	c.check = check
	return c
}

// checkTaking is a check that takes d and succeeds, due again in an hour
// (as a card served with max-age=3600). Cancelled, it fails the way a
// cut-off fetch does. A nil meter is not used.
func checkTaking(d time.Duration, meter *concurrencyMeter) func(context.Context, catalog.CrawlTarget) catalog.FetchOutcome {
	return func(ctx context.Context, t catalog.CrawlTarget) catalog.FetchOutcome {
		host := hostKey(t.CardURL)
		if meter != nil {
			meter.enter(host)
			defer meter.leave(host)
		}
		o := catalog.FetchOutcome{AgentID: t.AgentID, URL: t.CardURL}
		select {
		case <-time.After(d):
		case <-ctx.Done():
			o.At, o.Class = time.Now(), ClassTimeout
			return o
		}
		o.At = time.Now()
		o.NextCheckAt, o.Health = o.At.Add(time.Hour), catalog.HealthUp
		return o
	}
}

func TestRunLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		meter := newConcurrencyMeter()
		store := &memStore{}
		// The first host has most agents and comes first in claim order: if
		// a saturated host blocked the queue, the others would wait behind
		// it.
		hosts := []struct {
			name   string
			agents int
		}{{"a.example", 24}, {"b.example", 4}, {"c.example", 4}, {"d.example", 4}}
		total := 0
		for _, h := range hosts {
			for i := range h.agents {
				store.add(catalog.CrawlTarget{AgentID: fmt.Sprintf("%s-%d", h.name, i), CardURL: fmt.Sprintf("https://%s:%d/agents/%d/card.json", h.name, 8000+i, i)})
				total++
			}
		}
		done := make(chan struct{})
		store.onRecorded = func(n int) {
			if n == total {
				close(done)
			}
		}
		const checkTime = 20 * time.Millisecond
		c := schedCrawler(store, Config{Concurrency: 5, PerHost: 2, BatchSize: 16, PollInterval: 10 * time.Millisecond, FlushSize: 4},
			checkTaking(checkTime, meter))
		ctx, cancel := context.WithCancel(t.Context())
		runErr := make(chan error, 1)
		start := time.Now()
		go func() { runErr <- c.Run(ctx) }()
		<-done
		elapsed := time.Since(start)
		cancel()
		if err := <-runErr; err != nil {
			t.Fatalf("Run: %v", err)
		}

		seen := map[string]int{}
		for _, o := range store.outcomes() {
			seen[o.AgentID]++
		}
		if len(seen) != total {
			t.Errorf("%d distinct agents checked, want %d", len(seen), total)
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("agent %s checked %d times before its next check was due", id, n)
			}
		}
		// Ports differ, hosts do not: the cap is per host name.
		for _, h := range hosts {
			if n := meter.maxHost[h.name]; n != 2 {
				t.Errorf("host %s saw at most %d concurrent checks, want the cap, 2", h.name, n)
			}
		}
		if meter.maxAll != 5 {
			t.Errorf("at most %d concurrent checks, want the concurrency, 5", meter.maxAll)
		}
		// The busiest host alone needs 24/2 rounds; the others fit beside
		// it, plus at most one flush interval for the last batch.
		if limit := 12*checkTime + DefaultFlushInterval; elapsed > limit {
			t.Errorf("all checks took %v, want at most %v: hosts did not run side by side", elapsed, limit)
		}
	})
}

// TestRunShutdown cancels Run while every worker is stuck in a check and
// the dispatcher is blocked handing the next target over.
func TestRunShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var started atomic.Int32
		stuck := func(ctx context.Context, t catalog.CrawlTarget) catalog.FetchOutcome {
			started.Add(1)
			<-ctx.Done()
			return catalog.FetchOutcome{AgentID: t.AgentID, URL: t.CardURL, At: time.Now(), Class: ClassTimeout}
		}
		store := &memStore{}
		for i := range 10 {
			store.add(catalog.CrawlTarget{AgentID: fmt.Sprint(i), CardURL: fmt.Sprintf("https://a.example/%d.json", i)})
		}
		c := schedCrawler(store, Config{Concurrency: 2, PerHost: 10, BatchSize: 10}, stuck)
		ctx, cancel := context.WithCancel(t.Context())
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(ctx) }()
		// Both workers in a check, the dispatcher blocked on the hand-off.
		synctest.Wait()
		if n := started.Load(); n != 2 {
			t.Errorf("%d checks started with concurrency 2", n)
		}
		cancel()
		if err := <-runErr; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := store.outcomes(); len(got) != 0 {
			t.Errorf("recorded %+v: checks cut short by shutdown must be left to their lease", got)
		}
	})
}

// TestRunFlushesOnShutdown: completed outcomes still waiting for a batch
// are written at shutdown, with a context that is not the cancelled one.
func TestRunFlushesOnShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &memStore{}
		for i := range 7 {
			store.add(catalog.CrawlTarget{AgentID: fmt.Sprint(i), CardURL: fmt.Sprintf("https://a.example/%d.json", i)})
		}
		var checked atomic.Int32
		check := checkTaking(0, nil)
		c := schedCrawler(store, Config{Concurrency: 3, PerHost: 3, FlushSize: 100, FlushInterval: time.Hour},
			func(ctx context.Context, t catalog.CrawlTarget) catalog.FetchOutcome {
				defer checked.Add(1)
				return check(ctx, t)
			})
		ctx, cancel := context.WithCancel(t.Context())
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(ctx) }()
		synctest.Wait() // every check done, every outcome with the writer
		if n := checked.Load(); n != 7 {
			t.Fatalf("%d checks, want 7", n)
		}
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
	})
}

func TestRunStoreFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &memStore{claimErr: errors.New("database is locked")}
		store.add(catalog.CrawlTarget{AgentID: "a", CardURL: "https://a.example/a.json"})
		recorded := make(chan struct{})
		store.onRecorded = func(int) { close(recorded) }
		const poll = 20 * time.Millisecond
		c := schedCrawler(store, Config{PollInterval: poll, FlushInterval: 10 * time.Millisecond}, checkTaking(0, nil))
		ctx, cancel := context.WithCancel(t.Context())
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(ctx) }()
		// A failed claim is retried after the poll interval, not at once
		// and not never: claims at 0, 20, 40, 60 and 80 ms.
		time.Sleep(5*poll - time.Millisecond)
		synctest.Wait()
		store.mu.Lock()
		claims := store.claims
		store.claimErr = nil
		store.mu.Unlock()
		if claims != 5 {
			t.Errorf("%d claims in 99 ms with a 20 ms poll interval after errors, want 5", claims)
		}
		<-recorded
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
	})
}

func TestRunTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := schedCrawler(&memStore{}, Config{PollInterval: time.Hour}, checkTaking(0, nil))
		ctx, cancel := context.WithCancel(t.Context())
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(ctx) }()
		synctest.Wait()
		if err := c.Run(ctx); !errors.Is(err, ErrRunning) {
			t.Errorf("second concurrent Run: %v, want ErrRunning", err)
		}
		cancel()
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
	})
}

func TestRefreshNow(t *testing.T) {
	srv := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(testCard))
	}))
	store := &memStore{}
	store.add(catalog.CrawlTarget{AgentID: "a", CardURL: srv.URL + "/a.json", NextCheckAt: t0.Add(time.Hour)})
	store.add(catalog.CrawlTarget{AgentID: "b", CardURL: srv.URL + "/b.json", NextCheckAt: t0.Add(time.Hour)})
	c := testCrawler(t, store, loopback, Config{})

	res, err := c.RefreshNow(t.Context(), catalog.System("test"), "a")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome.Card == nil || res.Outcome.Health != catalog.HealthUp || !res.Stored.NewVersion || res.Stored.Agent.ID != "a" {
		t.Errorf("result %+v", res)
	}
	if n := len(store.outcomes()); n != 1 {
		t.Errorf("%d outcomes recorded", n)
	}
	if _, err := c.RefreshNow(t.Context(), catalog.System("test"), "nope"); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("unknown agent: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.RefreshNow(ctx, catalog.System("test"), "b"); !errors.Is(err, ErrRefreshCanceled) {
		t.Errorf("cancelled: %v", err)
	}
	if n := len(store.outcomes()); n != 1 {
		t.Errorf("a cancelled refresh was recorded")
	}
}

// TestRefreshNowThrottled: an attack run made 1,000 outbound requests in
// 1.9 s through the refresh endpoint. On-demand checks obey the minimum
// interval and the per-host cap, and a refused one fetches nothing.
func TestRefreshNowThrottled(t *testing.T) {
	var fetches atomic.Int32
	srv := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		w.Write([]byte(testCard))
	}))
	now := t0
	tests := []struct {
		name        string
		lastCheck   time.Time
		busySlots   int
		wantRetry   time.Duration
		wantBusy    bool
		wantFetches int32
	}{
		{name: "never checked", wantFetches: 1},
		{name: "checked long ago", lastCheck: now.Add(-6 * time.Minute), wantFetches: 1},
		{name: "checked a minute ago", lastCheck: now.Add(-time.Minute), wantRetry: 4 * time.Minute},
		{name: "checked just now", lastCheck: now, wantRetry: 5 * time.Minute},
		{name: "host at its cap", busySlots: 2, wantRetry: hostBusyRetry, wantBusy: true},
		{name: "host with a free slot", busySlots: 1, wantFetches: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fetches.Store(0)
			store := &memStore{}
			store.add(catalog.CrawlTarget{AgentID: "a", CardURL: srv.URL + "/a.json", LastCheckAt: tt.lastCheck})
			c := testCrawler(t, store, loopback, Config{PerHost: 2, MinInterval: 5 * time.Minute,
				Now: func() time.Time { return now }})
			for range tt.busySlots {
				c.tryReserve(hostKey(srv.URL))
			}
			_, err := c.RefreshNow(t.Context(), catalog.System("test"), "a")
			var te *ThrottledError
			if tt.wantRetry == 0 {
				if err != nil {
					t.Fatalf("RefreshNow: %v", err)
				}
			} else if !errors.As(err, &te) || !errors.Is(err, ErrRefreshThrottled) ||
				te.RetryAfter != tt.wantRetry || te.HostBusy != tt.wantBusy {
				t.Fatalf("err = %v, want a ThrottledError retry %v busy %v", err, tt.wantRetry, tt.wantBusy)
			}
			if got := fetches.Load(); got != tt.wantFetches {
				t.Errorf("%d fetches, want %d", got, tt.wantFetches)
			}
			if tt.wantRetry != 0 && len(store.outcomes()) != 0 {
				t.Errorf("a refused refresh was recorded")
			}
		})
	}
}

// The writer stores a batch only in a background turn: while requests
// people wait for hold the only turn, checked outcomes wait, and they are
// written once it is free.
func TestRunWritesInABackgroundTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &memStore{}
		for i := range 4 {
			store.add(catalog.CrawlTarget{AgentID: fmt.Sprint(i), CardURL: fmt.Sprintf("https://a.example/%d.json", i)})
		}
		p := background.NewPriority(1)
		_, end, err := p.Turn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		c := schedCrawler(store, Config{Concurrency: 2, PerHost: 2, FlushSize: 1, Priority: p}, checkTaking(0, nil))
		ctx, cancel := context.WithCancel(t.Context())
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(ctx) }()
		synctest.Wait()
		if n := len(store.outcomes()); n != 0 {
			t.Fatalf("%d outcomes written while another held the only turn", n)
		}
		end()
		synctest.Wait()
		if n := len(store.outcomes()); n != 4 {
			t.Fatalf("%d outcomes written once the turn was free, want 4", n)
		}
		cancel()
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
	})
}
