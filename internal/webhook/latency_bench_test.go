package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/webhook"
)

// Open-loop load of BenchmarkDeliveryLatency: events arrive at a fixed
// rate whatever the registry does with them, as they do in production,
// so a dispatcher that falls behind shows as latency, not as a slower
// generator. REGISTRY_BENCH_WEBHOOK_SECONDS and _RATE override them.
const (
	latencyRate     = 1000 // events/s
	latencySeconds  = 20
	latencyTick     = 50 * time.Millisecond // one batch of registrations a tick
	latencySearches = 50                    // searches/s beside them
	latencyCatalog  = 2000                  // agents before the load starts
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkDeliveryLatency measures event-to-delivery latency (the
// event's time in the payload to its arrival at a loopback receiver)
// under a sustained open-loop stream of health changes (1,000 events/s
// by default, one agent.health event each, written as a crawl batch every
// 50 ms over 2,000 agents), with the dispatcher at its production defaults, and search
// latency (50 searches/s, open loop) in the same run. Each database runs
// twice on a fresh catalog: "deliveries" with a subscription and the
// dispatcher running, "baseline" with the same writes and searches and
// no subscription, so search p99 with and without deliveries compare.
// Run with -benchtime=1x.
func BenchmarkDeliveryLatency(b *testing.B) {
	rate := envInt("REGISTRY_BENCH_WEBHOOK_RATE", latencyRate)
	seconds := envInt("REGISTRY_BENCH_WEBHOOK_SECONDS", latencySeconds)
	for _, db := range []struct {
		name string
		open func(testing.TB) *catalog.Store
	}{{"sqlite", catalogtest.SQLite}, {"postgres", catalogtest.Postgres}} {
		for _, withHooks := range []bool{false, true} {
			name := db.name + "/baseline"
			if withHooks {
				name = db.name + "/deliveries"
			}
			b.Run(name, func(b *testing.B) {
				for range b.N {
					runLatency(b, db.open(b), withHooks, rate, seconds)
				}
			})
		}
	}
}

func runLatency(b *testing.B, s *catalog.Store, withHooks bool, rate, seconds int) {
	ctx := context.Background()
	var (
		mu        sync.Mutex
		latencies []time.Duration
	)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		var p struct {
			Timestamp time.Time `json:"timestamp"`
		}
		if err := json.NewDecoder(r.Body).Decode(&p); err == nil {
			mu.Lock()
			latencies = append(latencies, arrived.Sub(p.Timestamp))
			mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()

	b.StopTimer()
	perTick := rate * int(latencyTick) / int(time.Second)
	ticks := seconds * int(time.Second/latencyTick)
	parse := func(i int) *card.Card {
		c, err := card.Parse([]byte(fmt.Sprintf(cardJSON, fmt.Sprint(i), "1.0.0")), card.DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	input := func(i int) catalog.UpsertInput {
		return catalog.UpsertInput{CardURL: fmt.Sprintf("https://a%d.example.org/.well-known/agent-card.json", i), Card: parse(i),
			Source: catalog.SourceURL}
	}
	var pre []catalog.UpsertInput
	for i := range latencyCatalog {
		pre = append(pre, input(i))
	}
	for chunk := range slices.Chunk(pre, 500) {
		if _, err := s.UpsertBatch(ctx, catalog.System("bench"), chunk); err != nil {
			b.Fatal(err)
		}
	}
	ids := make([]string, 0, latencyCatalog)
	page, err := s.Search(ctx, catalog.Query{Limit: catalog.MaxLimit, Scope: catalog.ScopeAll})
	if err != nil {
		b.Fatal(err)
	}
	for len(ids) < latencyCatalog {
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		if page.NextCursor == "" || len(page.Items) == 0 {
			break
		}
		if page, err = s.Search(ctx, catalog.Query{Limit: catalog.MaxLimit, Scope: catalog.ScopeAll, Cursor: page.NextCursor}); err != nil {
			b.Fatal(err)
		}
	}
	if len(ids) < perTick {
		b.Fatalf("%d agents to change, want %d", len(ids), perTick)
	}
	// Batch t flips the health of perTick agents, in turn: each is one
	// agent.health event, a light write, so the generator keeps its rate
	// and what is measured is the dispatcher.
	outcomes := func(t int) []catalog.FetchOutcome {
		now := time.Now()
		out := make([]catalog.FetchOutcome, perTick)
		for k := range out {
			n := t*perTick + k
			o := catalog.FetchOutcome{AgentID: ids[n%len(ids)], At: now, Status: 200, Health: catalog.HealthUp,
				NextCheckAt: now.Add(time.Hour)}
			if (n/len(ids))%2 == 0 {
				o.Status, o.Class, o.Message, o.Health, o.ConsecutiveFailures = 503, "http_5xx", "HTTP 503", catalog.HealthDown, 1
			}
			out[k] = o
		}
		return out
	}
	if withHooks {
		if err := s.CreateWebhook(ctx, catalog.System("bench"), catalog.Webhook{ID: webhook.NewID(), URL: rcv.URL,
			EventTypes: []string{webhook.EventHealth}, CreatedAt: time.Now()}, webhook.NewSecret()); err != nil {
			b.Fatal(err)
		}
	}
	client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Timeout: 10 * time.Second, MaxIdleConnsPerHost: 128})
	defer client.CloseIdleConnections()
	runCtx, cancel := context.WithCancel(ctx)
	var bg sync.WaitGroup
	defer bg.Wait()
	defer cancel()
	if withHooks {
		d := webhook.New(s, client, slog.New(slog.DiscardHandler), webhook.Config{})
		bg.Go(func() { d.Run(runCtx) })
	}

	var (
		smu      sync.Mutex
		searches []time.Duration
		sfailed  int
		writeLag time.Duration
	)
	search := func(i int) {
		start := time.Now()
		_, err := s.Search(runCtx, catalog.Query{Text: "polyglot " + strconv.Itoa(i%latencyCatalog), Limit: 20,
			Filters: map[string][]string{catalog.FieldHealth: {catalog.HealthUnknown, catalog.HealthUp}}})
		smu.Lock()
		defer smu.Unlock()
		if err != nil {
			sfailed++
			return
		}
		searches = append(searches, time.Since(start))
	}
	b.StartTimer()
	start := time.Now()
	var writes, searchers sync.WaitGroup
	searchers.Go(func() {
		every := time.Second / latencySearches
		for i := 0; ; i++ {
			next := start.Add(time.Duration(i) * every)
			if time.Until(next) > 0 {
				time.Sleep(time.Until(next))
			}
			if time.Since(start) > time.Duration(seconds)*time.Second {
				return
			}
			searchers.Go(func() { search(i) })
		}
	})
	// The writes, open loop: batch t is due at start + t·tick and is
	// written then (concurrently with a late one), whatever came before.
	for t := range ticks {
		due := start.Add(time.Duration(t) * latencyTick)
		time.Sleep(time.Until(due))
		if lag := time.Since(due); lag > writeLag {
			writeLag = lag
		}
		writes.Go(func() {
			if _, err := s.RecordFetches(ctx, catalog.System("bench"), outcomes(t)); err != nil {
				b.Error(err)
			}
		})
	}
	writes.Wait()
	searchers.Wait()
	written := time.Since(start)
	events := ticks * perTick
	if withHooks {
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			mu.Lock()
			n := len(latencies)
			mu.Unlock()
			if n >= events {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	drained := time.Since(start)
	b.StopTimer()
	cancel()

	pct := func(ds []time.Duration, p float64) float64 {
		if len(ds) == 0 {
			return 0
		}
		slices.Sort(ds)
		return float64(ds[min(len(ds)-1, int(float64(len(ds))*p))].Microseconds()) / 1000
	}
	smu.Lock()
	b.ReportMetric(pct(searches, 0.50), "search_p50_ms")
	b.ReportMetric(pct(searches, 0.99), "search_p99_ms")
	b.ReportMetric(float64(len(searches))/written.Seconds(), "searches/s")
	b.ReportMetric(float64(sfailed), "search_errors")
	smu.Unlock()
	b.ReportMetric(float64(events)/written.Seconds(), "events/s")
	b.ReportMetric(float64(writeLag.Microseconds())/1000, "max_write_lag_ms")
	if withHooks {
		mu.Lock()
		b.ReportMetric(float64(len(latencies))/drained.Seconds(), "deliveries/s")
		b.ReportMetric(float64(len(latencies))/float64(events), "delivered_fraction")
		b.ReportMetric(pct(latencies, 0.50), "delivery_p50_ms")
		b.ReportMetric(pct(latencies, 0.99), "delivery_p99_ms")
		b.ReportMetric(pct(latencies, 1), "delivery_max_ms")
		mu.Unlock()
	}
}
