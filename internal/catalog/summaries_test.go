package catalog_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// Searches keep the summaries they read, by agent and sequence. Every
// write that changes what a result shows moves the sequence on, so a
// search after it shows the change: a new version, a health change, a
// signature verdict, a listing change, and on another replica the same
// once it has synced.
func TestSearchResultsFollowEveryWrite(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			a, b := catalogtest.Open(t, d), catalogtest.Open(t, d)
			ctx := context.Background()
			const url = "https://invoices.example.com/.well-known/agent-card.json"
			agent := upsert(t, a, url, v03Card).Agent
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			only := func(s *catalog.Store) catalog.Summary {
				t.Helper()
				// Twice: the second answer comes from what the first read.
				var first catalog.Summary
				for i := range 2 {
					p, err := s.Search(ctx, catalog.Query{Text: "invoices", Scope: catalog.ScopeAll})
					if err != nil {
						t.Fatal(err)
					}
					if len(p.Items) != 1 {
						t.Fatalf("search found %d agents (total %d), want 1", len(p.Items), p.Total)
					}
					if i == 0 {
						first = p.Items[0]
					} else if got := p.Items[0]; got.Description != first.Description || got.Health != first.Health ||
						got.SignatureStatus != first.SignatureStatus || got.Listing != first.Listing || !got.UpdatedAt.Equal(first.UpdatedAt) {
						t.Fatalf("the same search answered %+v, then %+v", first, got)
					}
				}
				return first
			}
			if got := only(a); !strings.HasPrefix(got.Description, "Reads invoices") {
				t.Fatalf("description %q", got.Description)
			}
			only(b)

			upsert(t, a, url, strings.Replace(v03Card, "Reads invoices", "Reads and checks invoices", 1))
			if got := only(a); !strings.HasPrefix(got.Description, "Reads and checks invoices") {
				t.Errorf("after a new version: description %q", got.Description)
			}

			now := time.Now().UTC()
			if _, err := a.RecordFetches(ctx, testActor, []catalog.FetchOutcome{{AgentID: agent.ID, At: now, Status: 503,
				Class: "http_5xx", Message: "unavailable", Health: catalog.HealthDown, NextCheckAt: now.Add(time.Hour)}}); err != nil {
				t.Fatal(err)
			}
			if got := only(a); got.Health != catalog.HealthDown {
				t.Errorf("after a failed check: health %q, want %q", got.Health, catalog.HealthDown)
			}

			if err := a.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: agent.ID, Version: 2,
				Status: catalog.SignatureUnsigned, Report: json.RawMessage(`{"checks":[]}`), VerifiedAt: now,
				KeysExpireAt: now.Add(48 * time.Hour), RecheckAt: now.Add(time.Hour)}}); err != nil {
				t.Fatal(err)
			}
			if got := only(a); got.SignatureStatus != catalog.SignatureUnsigned {
				t.Errorf("after a verification: signature %q, want %q", got.SignatureStatus, catalog.SignatureUnsigned)
			}

			if _, err := a.SetListing(ctx, testActor, catalog.ScopeAll, agent.ID,
				catalog.ListingChange{State: catalog.ListingRejected, Reason: "test"}); err != nil {
				t.Fatal(err)
			}
			if got := only(a); got.Listing != catalog.ListingRejected {
				t.Errorf("after a listing change: listing %q, want %q", got.Listing, catalog.ListingRejected)
			}

			// The replica read the first version; once synced it shows
			// the last state, not what it kept.
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			got := only(b)
			if !strings.HasPrefix(got.Description, "Reads and checks invoices") || got.Health != catalog.HealthDown ||
				got.SignatureStatus != catalog.SignatureUnsigned || got.Listing != catalog.ListingRejected {
				t.Errorf("replica after sync: %+v", got)
			}
		})
	}
}
