package report_test

import (
	"context"
	"sync"
	"testing"
	"time"

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

// TestSnapshotKeepsReportColumns: a day of the history keeps the report's
// findings by severity, plain-http interfaces and key changes of the
// last 30 days, on both databases.
func TestSnapshotKeepsReportColumns(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		addAt(t, s, "http", "clear", "", catalog.SignatureUnsigned)
		keyed := add(t, s, "keyed", "", catalog.SignatureVerified)
		now := time.Now()
		if err := s.RecordVerifications(ctx, actor, []catalog.VerificationInput{{AgentID: keyed, Version: 1,
			Status: catalog.SignatureVerified, Report: []byte(`{}`), VerifiedAt: now, RecheckAt: now.Add(time.Hour),
			AuditCodes: []string{"signing_key_changed", "content_zero_width", "no_security"},
			Severities: []string{"error", "warning"}}}); err != nil {
			t.Fatal(err)
		}
		if n, err := report.Snapshot(ctx, s, s, now); err != nil || n != 2 {
			t.Fatalf("snapshot wrote %d rows, %v", n, err)
		}
		days, err := report.History(ctx, s, catalog.ScopeAll, now)
		if err != nil || len(days) != 1 {
			t.Fatalf("history = %+v, %v", days, err)
		}
		d := days[0]
		if d.FindingsError != 1 || d.FindingsWarning != 1 || d.FindingsInfo != 0 || d.PlainHTTP != 1 || d.KeyChanges30d != 1 {
			t.Errorf("day = %+v, want 1 error, 1 warning, 0 info, 1 plain http, 1 key change in 30 days", d)
		}
	})
}
