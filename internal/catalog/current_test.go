package catalog_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// CurrentCards reads each agent's current version (never an older one),
// its report when that version has one (not an older version's), and
// skips removed agents.
func TestCurrentCards(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		now := time.Now()
		two := upsert(t, s, "https://two.example.com/.well-known/agent-card.json", v03Card).Agent
		if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: two.ID, Version: 1,
			Status: catalog.SignatureUnsigned, Report: json.RawMessage(`{"v":1}`), VerifiedAt: now, RecheckAt: now.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		renamed := strings.Replace(v03Card, "Invoice Extractor", "Invoice Reader", 1)
		two = upsert(t, s, two.CardURL, renamed).Agent
		checked := upsert(t, s, "https://checked.example.com/.well-known/agent-card.json", v03Card).Agent
		if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: checked.ID, Version: 1,
			Status: catalog.SignatureUnsigned, Report: json.RawMessage(`{"v":1}`), VerifiedAt: now, RecheckAt: now.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		gone := upsert(t, s, "https://gone.example.com/.well-known/agent-card.json", v03Card).Agent
		if err := s.RemoveAgent(ctx, testActor, gone.ID); err != nil {
			t.Fatal(err)
		}

		got := map[string]catalog.CurrentCard{}
		if err := s.CurrentCards(ctx, catalog.ScopeAll, func(c catalog.CurrentCard) error {
			got[c.AgentID] = c
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, ok := got[gone.ID]; ok || len(got) != 2 {
			t.Fatalf("CurrentCards gave %d agents (removed one included: %v), want 2", len(got), ok)
		}
		if c := got[two.ID]; c.Version != 2 || string(c.Raw) != renamed || c.Report != nil {
			t.Errorf("two: version %d, report %s, raw of the current version %v", c.Version, c.Report, string(c.Raw) == renamed)
		}
		if c := got[checked.ID]; c.Version != 1 || string(c.Report) != `{"v":1}` || c.SignatureStatus != catalog.SignatureUnsigned ||
			c.Listing != catalog.ListingApproved || c.Health != catalog.HealthUnknown {
			t.Errorf("checked: %+v", c)
		}
	})
}

// CurrentCards keeps to the scope in the query: a pending agent is read
// for a reviewer and for ScopeAll, never for a browsing caller.
func TestCurrentCardsScope(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		listed := upsert(t, s, "https://listed.example.com/.well-known/agent-card.json", v03Card).Agent
		s.SetListingPolicy(catalog.ListingPolicy{RequireApproval: true})
		pending := upsert(t, s, "https://pending.example.com/.well-known/agent-card.json", v03Card).Agent
		for _, tc := range []struct {
			name string
			sc   catalog.Scope
			want []string
		}{
			{"browsing", catalog.Scope{}, []string{listed.ID}},
			{"review", catalog.Scope{Review: true}, []string{listed.ID, pending.ID}},
			{"all", catalog.ScopeAll, []string{listed.ID, pending.ID}},
		} {
			var got []string
			if err := s.CurrentCards(ctx, tc.sc, func(c catalog.CurrentCard) error {
				got = append(got, c.AgentID)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: read %v, want %v", tc.name, got, tc.want)
			}
		}
	})
}
