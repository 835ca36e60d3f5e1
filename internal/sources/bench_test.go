package sources_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
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
				src, err := svc.Add(b.Context(), person, sources.Request{URL: srv.URL + "/ard.json"})
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

// benchPeerAgents is the peer size the federation target names:
// a first sync from a peer of 100,000 agents in under 5 minutes.
const benchPeerAgents = 100_000

// BenchmarkFederationFirstSync follows a loopback peer registry's change
// feed of 100,000 agents (pages of 1,000, as this registry's own feed
// serves them) whose cards a loopback fleet serves, into a fresh catalog
// each iteration: first_sync_s is the time until all of them are
// catalogued with provenance federatedFrom (every card fetched, parsed
// and stored here), checks how many checks that took (the per-sync cap
// continues at once), then follow_s the next sync after 100 agents were
// added and 100 removed at the peer.
func BenchmarkFederationFirstSync(b *testing.B) {
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			var cardHits atomic.Int64
			type item struct {
				Seq     int64  `json:"seq"`
				Kind    string `json:"kind"`
				AgentID string `json:"agent_id"`
				CardURL string `json:"card_url"`
			}
			var (
				srv   *httptest.Server
				feed  []item
				feedM = make(chan struct{}, 1)
			)
			feedM <- struct{}{}
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if name, ok := strings.CutPrefix(r.URL.Path, "/cards/"); ok {
					cardHits.Add(1)
					w.Header().Set("Cache-Control", "max-age=3600")
					fmt.Fprintf(w, cardTmpl, name)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/.well-known/ard.json":
					fmt.Fprintf(w, `{"entries":[{"identifier":"urn:air:127.0.0.1:registry:ard","displayName":"peer","type":%q,"url":%q,"metadata":{"change_feed":%q,"registry_id":"peer"}}]}`,
						sources.TypeRegistry, srv.URL+"/ard/v1/", srv.URL+"/api/v1/changes")
				case "/api/v1/changes":
					since, _ := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
					limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
					<-feedM
					page := feed[min(int(since), len(feed)):min(int(since)+limit, len(feed))]
					next := since
					if len(page) > 0 {
						next = page[len(page)-1].Seq
					}
					body, _ := json.Marshal(map[string]any{"items": page, "next_since": next})
					feedM <- struct{}{}
					w.Write(body)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			add := func(kind, name string) {
				feed = append(feed, item{Seq: int64(len(feed) + 1), Kind: kind, AgentID: name, CardURL: srv.URL + "/cards/" + name})
			}
			client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
				MaxBodyBytes: 8 << 20, MaxIdleConnsPerHost: 64})
			defer client.CloseIdleConnections()

			var first, follow time.Duration
			for b.Loop() {
				b.StopTimer()
				<-feedM
				feed = feed[:0]
				for i := range benchPeerAgents {
					add(catalog.ChangeCreated, fmt.Sprintf("peer-%06d", i))
				}
				feedM <- struct{}{}
				var s *catalog.Store
				if db == "sqlite" {
					s = catalogtest.SQLite(b)
				} else {
					s = catalogtest.Postgres(b)
				}
				reg := crawler.NewRegistrar(crawler.NewFetcher(client, 0), s, card.Limits{}, nil)
				svc := sources.New(s, reg, crawler.NewFetcher(client, 8<<20), client, sources.Config{}, nil)
				src, err := svc.Add(b.Context(), person, sources.Request{URL: srv.URL, Kind: catalog.SourceRegistry})
				if err != nil {
					b.Fatal(err)
				}
				cardHits.Store(0)
				b.StartTimer()
				start := time.Now()
				checks := 0
				var got catalog.Source
				for got.Cursor != strconv.Itoa(benchPeerAgents) {
					checks++
					if got, err = svc.Refresh(b.Context(), src.ID); err != nil || got.Status != catalog.SourceOK {
						b.Fatalf("sync: %+v, %v", got, err)
					}
				}
				first += time.Since(start)
				b.StopTimer()
				if cardHits.Load() != benchPeerAgents || got.EntryCount != benchPeerAgents {
					b.Fatalf("%d card fetches, %d entries; want %d", cardHits.Load(), got.EntryCount, benchPeerAgents)
				}
				b.ReportMetric(float64(checks), "checks")
				<-feedM
				for i := range 100 {
					add(catalog.ChangeCreated, fmt.Sprintf("new-%03d", i))
					add(catalog.ChangeRemoved, fmt.Sprintf("peer-%06d", i))
				}
				feedM <- struct{}{}
				start = time.Now()
				got, err = svc.Refresh(b.Context(), src.ID)
				follow += time.Since(start)
				if err != nil || got.Status != catalog.SourceOK || got.EntryCount != benchPeerAgents || !strings.Contains(got.Message, "100 catalogued") {
					b.Fatalf("follow-up sync: %+v, %v", got, err)
				}
				page, err := s.Search(b.Context(), catalog.Query{Scope: catalog.ScopeAll, Limit: 1,
					Filters: map[string][]string{catalog.FieldProvenance: {catalog.RelationFederatedFrom}}})
				if err != nil || page.Total != benchPeerAgents {
					b.Fatalf("%d agents federatedFrom after the follow-up, %v", page.Total, err)
				}
				b.StartTimer()
			}
			b.ReportMetric(first.Seconds()/float64(b.N), "first_sync_s")
			b.ReportMetric(follow.Seconds()/float64(b.N), "follow_s")
			b.ReportMetric(float64(benchPeerAgents)*float64(b.N)/first.Seconds(), "agents/s")
		})
	}
}
