package catalog_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// The key-change day of an agent is the day its current card came when
// that card's report holds signing_key_changed, the same whether the
// index learnt it from the report as it was recorded or built it from the
// database (a restart, another replica); a new version without a report
// is off the days.
func TestKeyChangedDays(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dsn := dsn(t)
			s := catalogtest.Open(t, dsn)
			now := time.Now()
			stored := func(url, raw string, at time.Time, codes ...string) string {
				t.Helper()
				res, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: url, Card: mustParse(t, raw), Source: catalog.SourceURL, ReceivedAt: at})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: res.Agent.ID, Version: res.Agent.CurrentVersion,
					Status: catalog.SignatureVerified, Report: []byte(`{}`), VerifiedAt: now, RecheckAt: now.Add(time.Hour), AuditCodes: codes}}); err != nil {
					t.Fatal(err)
				}
				return res.Agent.ID
			}
			recent := stored("https://recent.example/.well-known/agent-card.json", v10Card, now.AddDate(0, 0, -3), "signing_key_changed")
			stored("https://old.example/.well-known/agent-card.json", v03Card, now.AddDate(0, 0, -60), "signing_key_changed")
			stored("https://same.example/.well-known/agent-card.json", v02Card, now, "no_security")
			moved := stored("https://moved.example/.well-known/agent-card.json", v10Card, now.AddDate(0, 0, -1), "signing_key_changed")
			if _, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: "https://moved.example/.well-known/agent-card.json",
				Card: mustParse(t, v03Card), Source: catalog.SourceURL, ReceivedAt: now}); err != nil {
				t.Fatal(err)
			}
			listed := func(s *catalog.Store, since time.Time) []string {
				t.Helper()
				page, err := s.Search(ctx, catalog.Query{Scope: catalog.ScopeAll, AnyOf: []catalog.FilterGroup{catalog.KeyChangedSince(since, now)}})
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, it := range page.Items {
					ids = append(ids, it.ID)
				}
				return ids
			}
			for _, st := range []*catalog.Store{s, catalogtest.Open(t, dsn)} {
				if got := listed(st, now.AddDate(0, 0, -29)); !slices.Equal(got, []string{recent}) {
					t.Errorf("key changes of the last 30 days = %v, want %v (not %s, whose new version is not verified)", got, []string{recent}, moved)
				}
				if got := listed(st, now.AddDate(0, 0, -2)); len(got) != 0 {
					t.Errorf("key changes of the last 3 days = %v, want none", got)
				}
			}
			if g := catalog.KeyChangedSince(now.AddDate(-5, 0, 0), now); len(g.Values) != catalog.MaxKeyChangedDays ||
				g.Values[len(g.Values)-1] != now.UTC().Format(time.DateOnly) {
				t.Errorf("five years of days = %d values ending %v", len(g.Values), g.Values[len(g.Values)-1:])
			}
			if g := catalog.KeyChangedSince(now.AddDate(0, 0, 1), now); len(g.Values) != 0 {
				t.Errorf("days since tomorrow = %v", g.Values)
			}
		})
	}
}
