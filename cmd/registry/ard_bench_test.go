package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/synth"
)

// benchAgents is the catalog size of the ARD benchmarks (issue 24);
// REGISTRY_ARD_BENCH_AGENTS sets another, to see how a figure scales.
var benchAgents = func() int {
	if n, err := strconv.Atoi(os.Getenv("REGISTRY_ARD_BENCH_AGENTS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}()

// benchStore opens a SQLite catalog of n synthetic agents, built once
// under the system temporary directory and reused by later runs (building
// 100,000 takes minutes).
func benchStore(b *testing.B, n int) *catalog.Store {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("registry-ard-bench-%d.db", n))
	_, err := os.Stat(path)
	fresh := os.IsNotExist(err)
	store := catalogtest.Open(b, "sqlite:"+path)
	if !fresh {
		return store
	}
	gen := synth.New(1)
	ctx := context.Background()
	batch := make([]catalog.UpsertInput, 0, 500)
	for i := range n {
		c, err := card.Parse(gen.Card(i), card.DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		batch = append(batch, catalog.UpsertInput{CardURL: gen.CardURL(i), Card: c, Source: catalog.SourceImport})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := store.UpsertBatch(ctx, catalog.System("bench"), batch); err != nil {
				os.Remove(path)
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return store
}

// BenchmarkARDSearchOverhead runs the same searches through the JSON API
// (GET /api/v1/agents?q=…) and the ARD door (POST /ard/v1/search), in
// process over one catalog of 100,000 agents, in pairs (each first half
// the time), and reports
// each one's p50 and the ARD door's p50 overhead.
func BenchmarkARDSearchOverhead(b *testing.B) {
	store := benchStore(b, benchAgents)
	h := newHandler(handlerDeps{log: slog.New(slog.DiscardHandler), store: store, agents: store, ardStore: store})
	texts := []string{"invoice pdf", "translate documents", "weather forecast", "code review", "customer support tickets",
		"schedule meetings", "fraud detection", "image classification"}
	do := func(req *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%s %s: %d %s", req.Method, req.URL, rec.Code, rec.Body)
		}
	}
	var api, ard []time.Duration
	i := 0
	for b.Loop() {
		text := texts[i%len(texts)]
		apiFirst := i%2 == 0
		i++
		timeAPI := func() {
			t := time.Now()
			do(httptest.NewRequest("GET", "/api/v1/agents?limit=10&q="+url.QueryEscape(text), nil))
			api = append(api, time.Since(t))
		}
		timeARD := func() {
			req := httptest.NewRequest("POST", "/ard/v1/search", strings.NewReader(`{"query":{"text":"`+text+`"},"pageSize":10}`))
			req.Header.Set("Content-Type", "application/json")
			t := time.Now()
			do(req)
			ard = append(ard, time.Since(t))
		}
		// Each goes first half the time: the second of a pair finds the
		// page's summaries cached by the first.
		if apiFirst {
			timeAPI()
			timeARD()
		} else {
			timeARD()
			timeAPI()
		}
	}
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	a, r := p50(api), p50(ard)
	b.ReportMetric(a, "api-p50-ms")
	b.ReportMetric(r, "ard-p50-ms")
	b.ReportMetric(r-a, "overhead-p50-ms")
}

// discard is a ResponseWriter that keeps nothing, so that what the
// benchmark measures is the server's memory, not a recorder's copy.
type discard struct {
	h http.Header
	n atomic.Int64
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(p []byte) (int, error) { d.n.Add(int64(len(p))); return len(p), nil }

// BenchmarkARDManifest streams /.well-known/ard.json publishing 100,000
// approved agents and reports the manifest's size and the largest growth
// of the live heap while it streams (after a collection, every 200 ms: the
// heap before a collection holds garbage up to GOGC's headroom, which says
// nothing of what the stream keeps): flat memory means the growth stays
// far below the size. It also times the 304 a client with the current
// ETag gets.
func BenchmarkARDManifest(b *testing.B) {
	store := benchStore(b, benchAgents)
	h := newHandler(handlerDeps{log: slog.New(slog.DiscardHandler), store: store, agents: store, ardStore: store,
		ard: ardPublish(config.ARD{Publish: config.ARDPublishApproved})})
	var (
		peaks []int64
		size  int64
		etag  string
	)
	for b.Loop() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := int64(ms.HeapAlloc)
		var (
			high atomic.Int64
			stop = make(chan struct{})
			wg   sync.WaitGroup
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					runtime.GC()
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					if d := int64(m.HeapAlloc) - base; d > high.Load() {
						high.Store(d)
					}
				}
			}
		}()
		w := &discard{h: http.Header{}}
		h.ServeHTTP(w, httptest.NewRequest("GET", "/.well-known/ard.json", nil))
		close(stop)
		wg.Wait()
		peaks, size, etag = append(peaks, high.Load()), w.n.Load(), w.h.Get("ETag")
	}
	b.ReportMetric(float64(size)/(1<<20), "manifest-MB")
	// The first stream also fills SQLite's page cache (64 MiB,
	// catalog.Store's _cache_size), which stays: the later ones show what
	// a stream itself holds.
	b.ReportMetric(float64(peaks[0])/(1<<20), "first-heap-growth-MB")
	if len(peaks) > 1 {
		b.ReportMetric(float64(slices.Max(peaks[1:]))/(1<<20), "warm-heap-growth-MB")
	}
	start := time.Now()
	const n = 50
	for range n {
		req := httptest.NewRequest("GET", "/.well-known/ard.json", nil)
		req.Header.Set("If-None-Match", etag)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotModified {
			b.Fatalf("If-None-Match: %d", rec.Code)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/n, "304-ms")
}
