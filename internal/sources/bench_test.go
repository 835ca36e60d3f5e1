package sources_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/sources"
)

// benchEntries is the manifest size the target names: 10,000
// entries catalogued at ≥ 1,000 agents/s on a first crawl.
const benchEntries = 10_000

// BenchmarkFirstCrawl resolves and catalogues a manifest of 10,000 A2A
// entries served by a loopback fleet (one server, a card per path), into
// a fresh catalog each iteration, and then re-checks it: agents/s is the
// first crawl's rate (the manifest fetch, 10,000 card fetches, parses and
// batched writes with provenance), recheck_requests what the unchanged
// re-check cost the fleet.
func BenchmarkFirstCrawl(b *testing.B) {
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			var cardHits, manifestHits atomic.Int64
			var srv *httptest.Server
			var manifest []byte
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if name, ok := strings.CutPrefix(r.URL.Path, "/cards/"); ok {
					cardHits.Add(1)
					w.Header().Set("Cache-Control", "max-age=3600")
					fmt.Fprintf(w, cardTmpl, name)
					return
				}
				manifestHits.Add(1)
				w.Header().Set("ETag", `"m1"`)
				if r.Header.Get("If-None-Match") == `"m1"` {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				w.Write(manifest)
			}))
			defer srv.Close()
			entries := make([]entry, benchEntries)
			for i := range entries {
				name := fmt.Sprintf("agent-%05d", i)
				entries[i] = entry{Identifier: "urn:air:127.0.0.1:bench:" + name, DisplayName: name, Type: sources.TypeA2ACard,
					URL: srv.URL + "/cards/" + name, Tags: []string{"bench"}, Queries: []string{"find " + name, "ask " + name}}
			}
			manifest, _ = json.Marshal(map[string]any{"entries": entries})
			client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
				MaxBodyBytes: 8 << 20, MaxIdleConnsPerHost: 64})
			defer client.CloseIdleConnections()

			var total time.Duration
			for b.Loop() {
				b.StopTimer()
				var s *catalog.Store
				if db == "sqlite" {
					s = catalogtest.SQLite(b)
				} else {
					s = catalogtest.Postgres(b)
				}
				reg := crawler.NewRegistrar(crawler.NewFetcher(client, 0), s, card.Limits{}, nil)
				svc := sources.New(s, reg, crawler.NewFetcher(client, 8<<20), client, sources.Config{MaxEntries: benchEntries}, nil)
				src, err := svc.Add(b.Context(), person, srv.URL+"/ard.json")
				if err != nil {
					b.Fatal(err)
				}
				cardHits.Store(0)
				b.StartTimer()
				start := time.Now()
				got, err := svc.Refresh(b.Context(), src.ID)
				total += time.Since(start)
				b.StopTimer()
				if err != nil || got.Status != catalog.SourceOK || !strings.HasPrefix(got.Message, fmt.Sprintf("%d A2A entries: %d catalogued", benchEntries, benchEntries)) {
					b.Fatalf("first crawl: %+v, %v", got, err)
				}
				if cardHits.Load() != benchEntries {
					b.Fatalf("%d card fetches, want %d", cardHits.Load(), benchEntries)
				}
				before, cardsBefore := manifestHits.Load(), cardHits.Load()
				again, err := svc.Refresh(b.Context(), src.ID)
				if err != nil || again.Status != catalog.SourceOK {
					b.Fatalf("re-check: %+v, %v", again, err)
				}
				b.ReportMetric(float64(manifestHits.Load()-before+cardHits.Load()-cardsBefore), "recheck_requests")
				b.StartTimer()
			}
			b.ReportMetric(float64(benchEntries)*float64(b.N)/total.Seconds(), "agents/s")
		})
	}
}
