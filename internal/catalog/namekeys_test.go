package catalog_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// TestNameKeys: a report on an agent's current version replaces its name
// keys, one on another version leaves them alone, and a deleted agent's
// keys go with it; on both databases.
func TestNameKeys(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			s := catalogtest.Open(t, dsn(t))
			ctx := context.Background()
			a := upsert(t, s, "https://weather.example.com/.well-known/agent-card.json", v02Card).Agent
			b := upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card).Agent
			now := time.Now().UTC()
			report := func(ag catalog.Agent, version int, keys ...catalog.NameKey) {
				t.Helper()
				err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: ag.ID, Version: version,
					Status: catalog.SignatureUnsigned, Report: json.RawMessage(`{}`), VerifiedAt: now, RecheckAt: now.Add(time.Hour),
					NameKeys: keys}})
				if err != nil {
					t.Fatal(err)
				}
			}
			lookup := func(keys ...string) []string {
				t.Helper()
				ms, err := s.AgentsByNameKey(ctx, keys)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, m := range ms {
					got = append(got, m.Key+"="+m.AgentID+"@"+m.CardURL+":"+m.Text)
				}
				return got
			}
			report(a, a.CurrentVersion, catalog.NameKey{Key: "name:weather", Text: "Weather"},
				catalog.NameKey{Key: "provider:acme", Text: "Acme"}, catalog.NameKey{Key: "name:weather", Text: "dup"})
			report(b, b.CurrentVersion, catalog.NameKey{Key: "name:weather", Text: "Wеather"})
			report(b, b.CurrentVersion+1, catalog.NameKey{Key: "name:older", Text: "not current"})

			want := []string{
				"name:weather=" + a.ID + "@" + a.CardURL + ":Weather",
				"name:weather=" + b.ID + "@" + b.CardURL + ":Wеather",
				"provider:acme=" + a.ID + "@" + a.CardURL + ":Acme",
			}
			if got := lookup("name:weather", "name:none", "provider:acme"); !slices.Equal(got, want) {
				t.Errorf("lookup = %q, want %q", got, want)
			}
			if got := lookup("name:older"); len(got) != 0 {
				t.Errorf("keys of a version that is not current were stored: %q", got)
			}

			report(a, a.CurrentVersion, catalog.NameKey{Key: "name:renamed", Text: "Renamed"})
			if got := lookup("name:weather", "provider:acme"); len(got) != 1 || got[0] != want[1] {
				t.Errorf("after a new report: %q, want only %q", got, want[1])
			}
			if err := s.RemoveAgent(ctx, testActor, a.ID); err != nil {
				t.Fatal(err)
			}
			if got := lookup("name:renamed"); len(got) != 0 {
				t.Errorf("a removed agent's keys are still found: %q", got)
			}
			if got, err := s.AgentsByNameKey(ctx, nil); err != nil || got != nil {
				t.Errorf("empty lookup = %v, %v", got, err)
			}
		})
	}
}
