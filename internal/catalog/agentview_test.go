package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/synth"
)

// AgentView reads in one statement what AgentViewComposed reads in
// several inside one transaction; for agents in every state it shows, and
// for every kind of scope, both must return the same view or the same
// error.
func TestAgentViewMatchesComposedReads(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		now := time.Now()
		plain := upsert(t, s, "https://plain.example.com/.well-known/agent-card.json", v03Card).Agent

		// Two versions, failed and good checks, a report on the current
		// version, annotations, paused.
		busy := upsert(t, s, "https://busy.example.com/.well-known/agent-card.json", v03Card).Agent
		busy = upsert(t, s, busy.CardURL, strings.Replace(v03Card, "Invoice Extractor", "Invoice Reader", 1)).Agent
		if busy.CurrentVersion != 2 {
			t.Fatalf("busy agent at version %d, want 2", busy.CurrentVersion)
		}
		if _, err := s.RecordFetches(ctx, testActor, []catalog.FetchOutcome{
			{AgentID: busy.ID, At: now.Add(-30 * time.Hour), Status: 200, NotModified: true, Health: catalog.HealthUp, NextCheckAt: now},
			{AgentID: busy.ID, At: now.Add(-2 * time.Hour), Status: 503, Class: "http_5xx", Message: "unavailable", Health: catalog.HealthDown, NextCheckAt: now.Add(time.Hour)},
			{AgentID: busy.ID, At: now.Add(-time.Hour), Status: 200, NotModified: true, Health: catalog.HealthUp, NextCheckAt: now.Add(time.Hour)},
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: busy.ID, Version: 2,
			Status: catalog.SignatureUnsigned, Report: json.RawMessage(`{"checks":[]}`), VerifiedAt: now,
			KeysExpireAt: now.Add(48 * time.Hour), RecheckAt: now.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetAnnotations(ctx, testActor, catalog.ScopeAll, busy.ID, catalog.Annotations{OwnerTeam: "Payments",
			Classification: "internal", Labels: map[string]string{"env": "prod"}, Notes: "on call: ann"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetPaused(ctx, testActor, busy.ID, true); err != nil {
			t.Fatal(err)
		}

		// Only in a restricted collection; in both a public and a
		// restricted one.
		secret := upsert(t, s, "https://secret.example.com/.well-known/agent-card.json", v03Card).Agent
		mixed := upsert(t, s, "https://mixed.example.com/.well-known/agent-card.json", v03Card).Agent
		for _, c := range []catalog.Collection{{Name: "Open"}, {Name: "Secret", Groups: []string{"sec"}}} {
			if _, _, err := s.SaveCollection(ctx, testActor, c); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.AddToCollection(ctx, testActor, "open", mixed.ID, plain.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.AddToCollection(ctx, testActor, "secret", secret.ID, mixed.ID); err != nil {
			t.Fatal(err)
		}

		// Deprecated in favour of an agent some scopes do not see, and of
		// one everyone sees.
		var deprecated []string
		for i, repl := range []string{secret.ID, plain.ID} {
			a := upsert(t, s, "https://old"+string(rune('a'+i))+".example.com/.well-known/agent-card.json", v03Card).Agent
			if _, err := s.SetListing(ctx, testActor, catalog.ScopeAll, a.ID,
				catalog.ListingChange{State: catalog.ListingDeprecated, Reason: "replaced", Replacement: repl}); err != nil {
				t.Fatal(err)
			}
			deprecated = append(deprecated, a.ID)
		}

		removed := upsert(t, s, "https://gone.example.com/.well-known/agent-card.json", v03Card).Agent
		if err := s.RemoveAgent(ctx, testActor, removed.ID); err != nil {
			t.Fatal(err)
		}

		ids := append([]string{plain.ID, busy.ID, secret.ID, mixed.ID, removed.ID, "no-such-agent"}, deprecated...)
		scopes := []catalog.Scope{catalog.ScopeAll, {}, {Groups: []string{"sec"}}, {Review: true}, {Review: true, Groups: []string{"other"}}}
		for _, id := range ids {
			for _, sc := range scopes {
				got, err := s.AgentView(ctx, sc, id, now)
				want, wantErr := s.AgentViewComposed(ctx, sc, id, now)
				if errors.Is(err, catalog.ErrNotFound) != errors.Is(wantErr, catalog.ErrNotFound) || (err == nil) != (wantErr == nil) {
					t.Errorf("AgentView(%+v, %s) error %v, composed reads %v", sc, id, err, wantErr)
					continue
				}
				if err == nil && !reflect.DeepEqual(got, want) {
					t.Errorf("AgentView(%+v, %s) =\n%+v\ncomposed reads:\n%+v", sc, id, got, want)
				}
			}
		}

		// The cases above are not vacuous.
		v, err := s.AgentView(ctx, catalog.ScopeAll, busy.ID, now)
		if err != nil || len(v.Versions) != 2 || v.Versions[0].Number != 2 || v.Verification == nil ||
			v.Annotations.OwnerTeam != "Payments" || v.Health.Uptime24h == nil || *v.Health.Uptime24h != 0.5 ||
			v.Health.Uptime7d == nil || v.Health.LastError == nil || !v.Health.Paused || v.Health.NextCheckAt != nil ||
			v.Agent.Card.Name != "Invoice Reader" {
			t.Errorf("busy agent's view = %+v (%v)", v, err)
		}
		if v, err := s.AgentView(ctx, catalog.Scope{}, secret.ID, now); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("public view of an agent in a restricted collection = %+v (%v), want not found", v.Agent.Collections, err)
		}
		if v, err := s.AgentView(ctx, catalog.Scope{Groups: []string{"sec"}}, mixed.ID, now); err != nil || len(v.Agent.Collections) != 2 {
			t.Errorf("collections seen by the group = %v (%v), want both", v.Agent.Collections, err)
		}
		if v, err := s.AgentView(ctx, catalog.Scope{}, mixed.ID, now); err != nil || !reflect.DeepEqual(v.Agent.Collections, []string{"Open"}) {
			t.Errorf("collections seen outside the group = %v (%v), want the open one", v.Agent.Collections, err)
		}
		if v, err := s.AgentView(ctx, catalog.Scope{}, deprecated[0], now); err != nil || v.Agent.Listing.Replacement != "" {
			t.Errorf("public view of a replacement it does not see = %q (%v)", v.Agent.Listing.Replacement, err)
		}
		if v, err := s.AgentView(ctx, catalog.Scope{}, deprecated[1], now); err != nil || v.Agent.Listing.Replacement != plain.ID {
			t.Errorf("public view of a visible replacement = %q (%v)", v.Agent.Listing.Replacement, err)
		}
	})
}

// BenchmarkAgentView compares the one-statement AgentView with the
// composed reads it replaced (AgentViewComposed), on 1,000 synthetic
// agents with a verification report each, reading them in turn.
func BenchmarkAgentView(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			s := benchStore(b, backend)
			ctx := context.Background()
			gen := synth.New(3)
			var in []catalog.UpsertInput
			for i := range 1000 {
				in = append(in, catalog.UpsertInput{CardURL: gen.CardURL(i), Card: mustParse(b, string(gen.Card(i)))})
			}
			res, err := s.UpsertBatch(ctx, testActor, in)
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			var ids []string
			var reports []catalog.VerificationInput
			for _, r := range res {
				ids = append(ids, r.Agent.ID)
				reports = append(reports, catalog.VerificationInput{AgentID: r.Agent.ID, Version: r.Agent.CurrentVersion,
					Status: catalog.SignatureUnsigned, Report: json.RawMessage(`{}`), VerifiedAt: now, RecheckAt: now.Add(time.Hour)})
			}
			if err := s.RecordVerifications(ctx, testActor, reports); err != nil {
				b.Fatal(err)
			}
			for _, read := range []struct {
				name string
				fn   func(context.Context, catalog.Scope, string, time.Time) (catalog.AgentView, error)
			}{{"one-statement", s.AgentView}, {"composed", s.AgentViewComposed}} {
				b.Run(read.name, func(b *testing.B) {
					for i := 0; b.Loop(); i++ {
						if _, err := read.fn(ctx, catalog.Scope{}, ids[i%len(ids)], now); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
