package web

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/synth"
)

// synthConsole is a console over a synthetic catalog of n agents.
func synthConsole(tb testing.TB, n int) (*fixture, *synth.Generator) {
	tb.Helper()
	store := catalogtest.SQLite(tb)
	g := synth.New(1)
	ctx := context.Background()
	const batch = 500
	for i := 0; i < n; i += batch {
		var ins []catalog.UpsertInput
		for j := i; j < min(i+batch, n); j++ {
			c, err := card.Parse(g.Card(j), card.DefaultLimits())
			if err != nil {
				tb.Fatalf("synthetic card %d: %v", j, err)
			}
			ins = append(ins, catalog.UpsertInput{CardURL: g.CardURL(j), Card: c, Source: catalog.SourceImport, ReceivedAt: t0})
		}
		if _, err := store.UpsertBatch(ctx, catalog.System("test"), ins); err != nil {
			tb.Fatal(err)
		}
	}
	if err := store.WarmIndex(ctx); err != nil {
		tb.Fatal(err)
	}
	f := &fixture{store: store, console: New(Options{Searcher: store, Agents: store}), e: echo.New()}
	f.console.Mount(f.e)
	return f, g
}

// TestFirstVisitWeight: a first visit to the search page (a full page of
// results, every facet field filled) and to an agent page transfers less
// than 100 KB: the HTML as sent plus the gzipped stylesheet and htmx.
func TestFirstVisitWeight(t *testing.T) {
	f, g := synthConsole(t, 300)
	assets := 0
	for _, u := range []string{f.console.assets.cssURL, f.console.assets.jsURL} {
		rec := f.get(t, u, map[string]string{"Accept-Encoding": "gzip"})
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", u, rec.Code)
		}
		assets += rec.Body.Len()
	}
	ag, err := f.store.AgentByURL(context.Background(), g.CardURL(7))
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/", "/?q=invoice", "/agents/" + ag.ID} {
		rec := f.get(t, target, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", target, rec.Code)
		}
		total := rec.Body.Len() + assets
		t.Logf("GET %s: HTML %d B + assets %d B = %d B", target, rec.Body.Len(), assets, total)
		if total >= 100_000 {
			t.Errorf("first visit to %s transfers %d bytes, want < 100 KB", target, total)
		}
	}
}

// BenchmarkPages measures server-side rendering (search and render) over
// a synthetic catalog of REGISTRY_BENCH_AGENTS agents (default 2,000).
func BenchmarkPages(b *testing.B) {
	n := 2000
	if s := os.Getenv("REGISTRY_BENCH_AGENTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	f, g := synthConsole(b, n)
	ag, err := f.store.AgentByURL(context.Background(), g.CardURL(7))
	if err != nil {
		b.Fatal(err)
	}
	for _, target := range []string{"/", "/?q=invoice", "/?q=invoice&input_mode=application%2Fpdf&binding=JSONRPC", "/agents/" + ag.ID} {
		b.Run(target, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if rec := f.get(b, target, nil); rec.Code != http.StatusOK {
					b.Fatalf("GET %s = %d", target, rec.Code)
				}
				lat = append(lat, time.Since(start))
			}
			b.ReportMetric(float64(percentile(lat, 50).Microseconds()), "p50-µs")
			b.ReportMetric(float64(percentile(lat, 99).Microseconds()), "p99-µs")
		})
	}
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
