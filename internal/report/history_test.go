package report_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/report"
)

// TestSnapshotOncePerDayAcrossReplicas: two replicas of one database
// snapshot the same day at once, and again later that day; the history
// holds one row per scope, the first written, and a caller reads the
// history of their own scope only (the public one never counts a pending
// agent).
func TestSnapshotOncePerDayAcrossReplicas(t *testing.T) {
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", catalogtest.SQLiteDSN}, {"postgres", catalogtest.PostgresDSN}} {
		t.Run(db.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := db.dsn(t)
			a, b := catalogtest.Open(t, dsn), catalogtest.Open(t, dsn)
			add(t, a, "open", "", catalog.SignatureUnsigned, "no_security")
			add(t, a, "keyed", `"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}`, catalog.SignatureVerified, "signing_key_changed")
			hidden := add(t, a, "hidden", "", catalog.SignatureInvalid, "no_security")
			if _, err := a.SetListing(ctx, actor, catalog.ScopeAll, hidden, catalog.ListingChange{State: catalog.ListingPending, Reason: "test"}); err != nil {
				t.Fatal(err)
			}
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			day1 := time.Date(2026, 11, 26, 0, 5, 0, 0, time.UTC)
			var wg sync.WaitGroup
			written := make([]int, 2)
			for i, s := range []*catalog.Store{a, b} {
				wg.Go(func() {
					n, err := report.Snapshot(ctx, s, s, day1.Add(time.Duration(i)*time.Second))
					if err != nil {
						t.Error(err)
					}
					written[i] = n
				})
			}
			wg.Wait()
			if written[0]+written[1] != 2 {
				t.Errorf("replicas wrote %v rows, want 2 in all (one per scope)", written)
			}
			// Later the same day the numbers changed; the day keeps its first row.
			add(t, b, "late", "", catalog.SignatureUnsigned)
			for _, s := range []*catalog.Store{a, b} {
				if n, err := report.Snapshot(ctx, s, s, day1.Add(20*time.Hour)); err != nil || n != 0 {
					t.Errorf("second snapshot of the day wrote %d rows, %v; want none", n, err)
				}
			}
			if n, err := report.Snapshot(ctx, b, b, day1.AddDate(0, 0, 1)); err != nil || n != 2 {
				t.Errorf("next day's snapshot wrote %d rows, %v; want 2", n, err)
			}
			for _, tc := range []struct {
				scope  catalog.Scope
				agents []int
				unsign []int
			}{
				{catalog.Scope{}, []int{2, 3}, []int{1, 2}},
				{catalog.Scope{Review: true}, []int{2, 3}, []int{1, 2}},
				{catalog.ScopeAll, []int{3, 4}, []int{1, 2}},
			} {
				days, err := report.History(ctx, a, tc.scope, day1.AddDate(0, 0, 1))
				if err != nil {
					t.Fatal(err)
				}
				if len(days) != 2 || days[0].Day != "2026-11-26" || days[1].Day != "2026-11-27" {
					t.Fatalf("scope %+v: history %+v, want 2026-11-26 and 2026-11-27", tc.scope, days)
				}
				for i, d := range days {
					if d.Agents != tc.agents[i] || d.Unsigned != tc.unsign[i] || d.KeyChanges != 1 || d.SignatureVerified != 1 {
						t.Errorf("scope %+v, %s: %+v, want %d agents, %d unsigned, 1 key change, 1 verified",
							tc.scope, d.Day, d, tc.agents[i], tc.unsign[i])
					}
				}
			}
			if days, err := report.History(ctx, a, catalog.ScopeAll, day1.AddDate(0, 0, report.HistoryDays+1)); err != nil || len(days) != 0 {
				t.Errorf("history %d days later = %d rows, %v; want none", report.HistoryDays+1, len(days), err)
			}
		})
	}
}

// TestRecentKeyChanges: an agent counts when a version received in the
// last 30 days was signed by a new key, even after a later version
// dropped the finding; an older change does not count, nor an agent
// hidden from the caller.
func TestRecentKeyChanges(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		now := time.Now().UTC()
		version := func(name string, at time.Time, n int, codes ...string) string {
			t.Helper()
			raw := fmt.Sprintf(`{"name": %q, "description": "version %d", "version": "1.0.%d",
  "supportedInterfaces": [{"url": "https://agents.example/%s/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
  "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []}`, name, n, n, name)
			c, err := card.Parse([]byte(raw), card.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Upsert(ctx, actor, catalog.UpsertInput{CardURL: "https://agents.example/" + name + "/card.json", Card: c,
				Source: catalog.SourceURL, ReceivedAt: at})
			if err != nil {
				t.Fatal(err)
			}
			findings := "[]"
			if len(codes) > 0 {
				findings = fmt.Sprintf(`[{"code":%q,"severity":"warning","path":"$.signatures","message":"m"}]`, codes[0])
			}
			if err := s.RecordVerifications(ctx, actor, []catalog.VerificationInput{{AgentID: res.Agent.ID, Version: n,
				Status: catalog.SignatureVerified, Report: []byte(`{"security_findings":` + findings + `}`), VerifiedAt: at,
				RecheckAt: at.Add(time.Hour), AuditCodes: codes}}); err != nil {
				t.Fatal(err)
			}
			return res.Agent.ID
		}
		version("recent", now.Add(-48*time.Hour), 1)
		version("recent", now.Add(-24*time.Hour), 2, "signing_key_changed")
		version("recent", now.Add(-time.Hour), 3) // same new key: the finding is gone
		version("old", now.AddDate(0, 0, -60), 1)
		version("old", now.AddDate(0, 0, -40), 2, "signing_key_changed")
		version("lookalike", now.Add(-time.Hour), 1, "signing_key_changed_not")
		version("hidden", now.Add(-48*time.Hour), 1)
		hidden := version("hidden", now.Add(-24*time.Hour), 2, "signing_key_changed")
		if _, err := s.SetListing(ctx, actor, catalog.ScopeAll, hidden, catalog.ListingChange{State: catalog.ListingPending, Reason: "test"}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			scope catalog.Scope
			want  int
		}{{catalog.Scope{}, 1}, {catalog.ScopeAll, 2}} {
			if n, err := report.RecentKeyChanges(ctx, s, tc.scope, now); err != nil || n != tc.want {
				t.Errorf("scope %+v: %d recent key changes, %v; want %d", tc.scope, n, err, tc.want)
			}
		}
	})
}
