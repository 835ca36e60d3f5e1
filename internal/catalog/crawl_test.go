package catalog_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

func TestClaimDueLeases(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		res := upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card)
		// An imported card is an offline copy: never claimed.
		if _, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: "https://weather.example.com/.well-known/agent.json",
			Card: mustParse(t, v02Card), Source: catalog.SourceImport, Paused: true}); err != nil {
			t.Fatal(err)
		}
		now := time.Now().Add(time.Second)
		got, err := s.ClaimDue(ctx, now, 10, "a", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].AgentID != res.Agent.ID || got[0].CardURL != res.Agent.CardURL {
			t.Fatalf("claimed %+v", got)
		}
		if again, _ := s.ClaimDue(ctx, now, 10, "b", time.Minute); len(again) != 0 {
			t.Fatalf("leased agent claimed twice: %+v", again)
		}
		if later, _ := s.ClaimDue(ctx, now.Add(2*time.Minute), 10, "host1/b", time.Minute); len(later) != 1 {
			t.Fatalf("expired lease not reclaimed: %+v", later)
		}
		// A restarted crawler on the same host takes its leases back at once.
		if n, err := s.ReleaseLeases(ctx, "host1/", "host1/c"); err != nil || n != 1 {
			t.Fatalf("ReleaseLeases = %d, %v", n, err)
		}
		if again, _ := s.ClaimDue(ctx, now.Add(2*time.Minute), 10, "host1/c", time.Minute); len(again) != 1 {
			t.Fatalf("released lease not claimable: %+v", again)
		}
		// Recording the outcome releases the lease and schedules the next check.
		if _, err := s.RecordFetches(ctx, testActor, []catalog.FetchOutcome{{AgentID: res.Agent.ID, At: now, Status: 304,
			NotModified: true, Health: catalog.HealthUp, NextCheckAt: now.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		if due, _ := s.ClaimDue(ctx, now.Add(30*time.Minute), 10, "c", time.Minute); len(due) != 0 {
			t.Fatalf("claimed before its next check: %+v", due)
		}
		due, _ := s.ClaimDue(ctx, now.Add(61*time.Minute), 10, "c", time.Minute)
		if len(due) != 1 {
			t.Fatalf("not due after its next check: %+v", due)
		}
		// Registering the imported agent by URL starts crawling it.
		upsert(t, s, "https://weather.example.com/.well-known/agent.json", v02Card)
		due, _ = s.ClaimDue(ctx, now.Add(2*time.Hour), 10, "d", time.Minute)
		if len(due) != 2 {
			t.Fatalf("registered agent not resumed: %+v", due)
		}
	})
}

// Replicas claiming at once never get the same agent.
func TestClaimDueConcurrent(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			stores := []*catalog.Store{catalogtest.Open(t, d), catalogtest.Open(t, d), catalogtest.Open(t, d)}
			ctx := context.Background()
			var batch []catalog.UpsertInput
			for i := range 60 {
				raw := strings.Replace(v03Card, "Invoice Extractor", fmt.Sprintf("Invoice %d", i), 1)
				batch = append(batch, catalog.UpsertInput{CardURL: fmt.Sprintf("https://a%d.example/", i), Card: mustParse(t, raw)})
			}
			if _, err := stores[0].UpsertBatch(ctx, testActor, batch); err != nil {
				t.Fatal(err)
			}
			now := time.Now().Add(time.Second)
			var mu sync.Mutex
			seen := map[string]string{}
			var wg sync.WaitGroup
			for i, s := range stores {
				wg.Add(1)
				go func() {
					defer wg.Done()
					owner := fmt.Sprint("replica-", i)
					for {
						got, err := s.ClaimDue(ctx, now, 7, owner, time.Minute)
						if err != nil {
							t.Error(err)
							return
						}
						if len(got) == 0 {
							return
						}
						mu.Lock()
						for _, g := range got {
							if prev, dup := seen[g.AgentID]; dup {
								t.Errorf("%s claimed by %s and %s", g.AgentID, prev, owner)
							}
							seen[g.AgentID] = owner
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if len(seen) != 60 {
				t.Fatalf("claimed %d of 60 agents", len(seen))
			}
		})
	}
}

func TestRecordFetchesHealthVersionsAndFeed(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		res := upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card)
		id := res.Agent.ID
		if err := s.WarmIndex(ctx); err != nil {
			t.Fatal(err)
		}
		base := time.Now().UTC().Truncate(time.Second)
		record := func(o catalog.FetchOutcome) []catalog.UpsertResult {
			t.Helper()
			o.AgentID = id
			if o.NextCheckAt.IsZero() {
				o.NextCheckAt = o.At.Add(time.Hour)
			}
			r, err := s.RecordFetches(ctx, testActor, []catalog.FetchOutcome{o})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		count := func(health string) int {
			t.Helper()
			p, err := s.Search(ctx, catalog.Query{Filters: map[string][]string{"health": {health}}})
			if err != nil {
				t.Fatal(err)
			}
			return p.Total
		}

		// A changed card is a new version; the same bytes are not.
		changed := mustParse(t, strings.Replace(v03Card, "2.1.0", "3.0.0", 1))
		r := record(catalog.FetchOutcome{At: base, Status: 200, Card: changed, ETag: `"v3"`, Health: catalog.HealthUp})
		if !r[0].NewVersion || r[0].Agent.CurrentVersion != 2 {
			t.Fatalf("changed card: %+v", r[0])
		}
		// The first check's health is written with the new version, in
		// the database and in the index.
		if tgt, err := s.CrawlTarget(ctx, id); err != nil || tgt.Health != catalog.HealthUp {
			t.Fatalf("after the first check: %+v, %v", tgt, err)
		}
		if count(catalog.HealthUp) != 1 {
			t.Fatal("after the first check, health=up does not find the agent")
		}
		r = record(catalog.FetchOutcome{At: base.Add(time.Minute), Status: 200, Card: changed, ETag: `"v3"`, Health: catalog.HealthUp})
		if r[0].NewVersion {
			t.Fatal("identical bytes made a version")
		}
		if count(catalog.HealthUp) != 1 {
			t.Fatal("health=up does not find the agent")
		}
		// Failures: stale, then down, with the reason kept.
		record(catalog.FetchOutcome{At: base.Add(2 * time.Minute), Status: 503, Class: "http_5xx", Message: "503 Service Unavailable",
			Health: catalog.HealthStale, ConsecutiveFailures: 1})
		record(catalog.FetchOutcome{At: base.Add(3 * time.Minute), Class: "timeout", Message: "no answer in 10s",
			Health: catalog.HealthDown, ConsecutiveFailures: 2})
		if count(catalog.HealthDown) != 1 || count(catalog.HealthUp) != 0 {
			t.Fatal("health facet did not follow the crawler")
		}
		h, err := s.AgentHealth(ctx, id, base.Add(4*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if h.State != catalog.HealthDown || h.ConsecutiveFailures != 2 || h.LastError == nil || h.LastError.Class != "timeout" ||
			h.LastSuccessAt == nil || !h.LastSuccessAt.Equal(base.Add(time.Minute)) || h.Uptime24h == nil || *h.Uptime24h != 0.5 {
			t.Fatalf("health report: %+v (last error %+v)", h, h.LastError)
		}
		tgt, err := s.CrawlTarget(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if tgt.ETag != `"v3"` || tgt.ConsecutiveFailures != 2 {
			t.Fatalf("crawl target: %+v", tgt)
		}
		// 410: removed from default results and announced in the feed.
		record(catalog.FetchOutcome{At: base.Add(5 * time.Minute), Status: 410, Class: "http_410", Removed: true,
			Health: catalog.HealthDown, ConsecutiveFailures: 3})
		if p, _ := s.Search(ctx, catalog.Query{}); p.Total != 0 {
			t.Fatalf("removed agent still listed: %d", p.Total)
		}
		if count(catalog.HealthRemoved) != 1 {
			t.Fatal("health=removed does not find the agent")
		}
		feed, err := s.Changes(ctx, catalog.ScopeAll, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, c := range feed {
			kinds = append(kinds, fmt.Sprintf("%s:%d", c.Kind, c.Version))
		}
		if want := []string{"created:1", "updated:2", "removed:2"}; !slices.Equal(kinds, want) {
			t.Fatalf("feed = %v, want %v", kinds, want)
		}
		rest, err := s.Changes(ctx, catalog.ScopeAll, feed[0].Seq, 100)
		if err != nil || len(rest) != 2 {
			t.Fatalf("feed after the first entry: %v %v", rest, err)
		}
		n, err := s.PruneFetchLog(ctx, base.Add(150*time.Second))
		if err != nil || n != 3 {
			t.Fatalf("pruned %d, %v", n, err)
		}
		// Outcomes for unknown agents are skipped, not errors.
		if _, err := s.RecordFetches(ctx, testActor, []catalog.FetchOutcome{{AgentID: "gone", NextCheckAt: base}}); err != nil {
			t.Fatal(err)
		}
	})
}
