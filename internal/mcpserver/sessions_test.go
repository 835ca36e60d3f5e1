package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// concurrentSessions is how many MCP sessions the issue asks the door to
// hold at once.
const concurrentSessions = 200

// sessionsRun is what holding concurrentSessions sessions cost and left.
type sessionsRun struct {
	errors                            []error
	goroutinesBefore, goroutinesAfter int
	heapBefore, heapHeld, heapAfter   uint64
}

// settle collects garbage until the live heap stops shrinking, and
// returns it with the goroutine count.
func settle() (uint64, int) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}

// holdSessions opens n sessions at once against srv, each calling
// search_agents, holds them all open while each calls it again, then
// closes them, and measures the heap and goroutines before, while held
// and after.
func holdSessions(t testing.TB, srv *httptest.Server, n int) sessionsRun {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	hc := &http.Client{Transport: tr}
	connect := func() (*mcp.ClientSession, error) {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		return c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + Path, HTTPClient: hc}, nil)
	}
	search := func(cs *mcp.ClientSession, q string) error {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolSearch, Arguments: map[string]any{"query": q}})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("search_agents: %v", res.Content)
		}
		return nil
	}
	// One session first, so that what the first call builds once (the
	// search index, the SDK's schema caches) is in the baseline.
	cs, err := connect()
	if err != nil {
		t.Fatal(err)
	}
	if err := search(cs, "currency"); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	tr.CloseIdleConnections()
	var r sessionsRun
	waitGoroutines(0)
	r.heapBefore, r.goroutinesBefore = settle()

	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		r.errors = append(r.errors, err)
		mu.Unlock()
	}
	sessions := make([]*mcp.ClientSession, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			cs, err := connect()
			if err != nil {
				fail(fmt.Errorf("session %d: connect: %w", i, err))
				return
			}
			sessions[i] = cs
			if err := search(cs, "currency converter"); err != nil {
				fail(fmt.Errorf("session %d: %w", i, err))
			}
		})
	}
	wg.Wait()
	// All n are open: each searches once more while the others are held.
	for i, cs := range sessions {
		if cs == nil {
			continue
		}
		wg.Go(func() {
			if err := search(cs, "translate documents"); err != nil {
				fail(fmt.Errorf("session %d, second call: %w", i, err))
			}
		})
	}
	wg.Wait()
	r.heapHeld, _ = settle()
	for i, cs := range sessions {
		if cs == nil {
			continue
		}
		wg.Go(func() {
			if err := cs.Close(); err != nil {
				fail(fmt.Errorf("session %d: close: %w", i, err))
			}
		})
	}
	wg.Wait()
	tr.CloseIdleConnections()
	r.goroutinesAfter = waitGoroutines(r.goroutinesBefore)
	r.heapAfter, _ = settle()
	return r
}

// waitGoroutines waits up to 10 s for the goroutine count to fall to want
// (0: until it stops falling), as closed connections' goroutines end, and
// returns the count.
func waitGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for range 100 {
		time.Sleep(100 * time.Millisecond)
		m := runtime.NumGoroutine()
		if want > 0 && m <= want || want == 0 && m == n {
			return m
		}
		n = m
	}
	return n
}

// TestConcurrentSessionsHoldAndRelease holds 200 sessions at once with
// calls on every one, and checks that none fails and that closing them
// gives back their goroutines and memory: a session the server forgot
// would keep its goroutines and its state until the idle timeout.
func TestConcurrentSessionsHoldAndRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("200 sessions")
	}
	st := catalogtest.SQLite(t)
	seed(t, st)
	srv := httptest.NewServer(New(Options{Catalog: st, Open: true}))
	defer srv.Close()
	r := holdSessions(t, srv, concurrentSessions)
	for _, err := range r.errors {
		t.Error(err)
	}
	if r.goroutinesAfter > r.goroutinesBefore {
		t.Errorf("%d goroutines before the sessions, %d after they closed", r.goroutinesBefore, r.goroutinesAfter)
	}
	// A session holds far more than 8 KB while open; what is left after
	// closing must be well under that per session.
	if grown := int64(r.heapAfter) - int64(r.heapBefore); grown > concurrentSessions*8<<10 {
		t.Errorf("live heap grew by %d KB after %d sessions closed (%d KB before, %d KB while held)",
			grown>>10, concurrentSessions, r.heapBefore>>10, r.heapHeld>>10)
	}
}

// BenchmarkConcurrentSessions reports what holding 200 sessions costs
// and what is left once they close: live heap before, while held and
// after (MB), goroutines before and after.
//
//	go test -run '^$' -bench ConcurrentSessions -benchtime 3x ./internal/mcpserver
func BenchmarkConcurrentSessions(b *testing.B) {
	st := catalogtest.SQLite(b)
	seed(b, st)
	srv := httptest.NewServer(New(Options{Catalog: st, Open: true}))
	defer srv.Close()
	var r sessionsRun
	for b.Loop() {
		r = holdSessions(b, srv, concurrentSessions)
		for _, err := range r.errors {
			b.Error(err)
		}
	}
	mb := func(v uint64) float64 { return float64(v) / (1 << 20) }
	b.ReportMetric(mb(r.heapBefore), "heap-before-MB")
	b.ReportMetric(mb(r.heapHeld), "heap-held-MB")
	b.ReportMetric(mb(r.heapAfter), "heap-after-MB")
	b.ReportMetric(float64(r.goroutinesBefore), "goroutines-before")
	b.ReportMetric(float64(r.goroutinesAfter), "goroutines-after")
	b.ReportMetric(float64(len(r.errors)), "errors")
}
