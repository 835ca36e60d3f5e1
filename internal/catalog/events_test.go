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

// Health transitions, signature verdict changes, new content findings
// and listing changes are events in the changes table, with their data,
// in the order written; the public change feed leaves them out.
func TestEvents(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		now := time.Now()
		a := upsert(t, s, "https://events.example.com/.well-known/agent-card.json", v03Card).Agent
		if _, err := s.RecordFetches(ctx, testActor, []catalog.FetchOutcome{
			{AgentID: a.ID, At: now, Status: 200, NotModified: true, Health: catalog.HealthUp, NextCheckAt: now},
			{AgentID: a.ID, At: now, Status: 200, NotModified: true, Health: catalog.HealthUp, NextCheckAt: now},
			{AgentID: a.ID, At: now, Status: 503, Class: "http_5xx", Health: catalog.HealthDown, NextCheckAt: now},
		}); err != nil {
			t.Fatal(err)
		}
		verify := func(status string, codes ...string) {
			t.Helper()
			if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: a.ID, Version: 1,
				Status: status, AuditCodes: codes, Report: json.RawMessage(`{}`), VerifiedAt: now, RecheckAt: now.Add(time.Hour)}}); err != nil {
				t.Fatal(err)
			}
		}
		verify(catalog.SignatureUnsigned, "content_zero_width")
		verify(catalog.SignatureUnsigned, "content_zero_width", "content_foreign_link", "no_provider")
		verify(catalog.SignatureInvalid, "content_zero_width", "content_foreign_link")
		if _, err := s.SetListing(ctx, testActor, catalog.ScopeAll, a.ID,
			catalog.ListingChange{State: catalog.ListingDeprecated, Reason: "replaced"}); err != nil {
			t.Fatal(err)
		}

		events, err := s.Events(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range events {
			if e.AgentID != a.ID {
				t.Errorf("event %+v names another agent", e)
			}
			got = append(got, e.Kind+" "+string(e.Detail))
		}
		wantKinds := []string{catalog.ChangeCreated, catalog.EventHealth, catalog.EventHealth, catalog.EventSignature,
			catalog.EventContentFinding, catalog.EventContentFinding, catalog.EventSignature, catalog.ChangeUpdated, catalog.EventListing}
		var kinds []string
		for _, e := range events {
			kinds = append(kinds, e.Kind)
		}
		if !slices.Equal(kinds, wantKinds) {
			t.Fatalf("event kinds %q, want %q", got, wantKinds)
		}
		for i, detail := range map[int]string{
			1: `{"from":"unknown","to":"up"}`,
			2: `{"from":"up","to":"down"}`,
			4: `{"codes":["content_zero_width"]}`,
			5: `{"codes":["content_foreign_link"]}`,
			6: `{"from":"unsigned","to":"invalid"}`,
			8: `{"from":"approved","reason":"replaced","to":"deprecated","version":1}`,
		} {
			if string(events[i].Detail) != detail {
				t.Errorf("event %d (%s) detail %s, want %s", i, events[i].Kind, events[i].Detail, detail)
			}
		}

		feed, err := s.Changes(ctx, catalog.ScopeAll, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var feedKinds []string
		for _, c := range feed {
			feedKinds = append(feedKinds, c.Kind)
		}
		if !slices.Equal(feedKinds, []string{catalog.ChangeCreated, catalog.ChangeUpdated}) {
			t.Errorf("public change feed kinds %q, want created and updated only", feedKinds)
		}
	})
}

// A card version signed by a new key is an event of its own, whatever the
// verdict, once per version: its rechecks do not repeat it.
func TestKeyChangedEvent(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		now := time.Now()
		a := upsert(t, s, "https://keys.example.com/.well-known/agent-card.json", v03Card).Agent
		verify := func(status string, codes ...string) {
			t.Helper()
			if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: a.ID, Version: 1,
				Status: status, AuditCodes: codes, KIDs: []string{"k2"}, Report: json.RawMessage(`{}`),
				VerifiedAt: now, RecheckAt: now.Add(time.Hour)}}); err != nil {
				t.Fatal(err)
			}
		}
		verify(catalog.SignatureInvalid, "signing_key_changed")
		verify(catalog.SignatureInvalid, "signing_key_changed") // a recheck
		events, err := s.Events(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var keyChanges []string
		for _, e := range events {
			if e.Kind == catalog.EventKeyChanged {
				keyChanges = append(keyChanges, string(e.Detail))
			}
		}
		if want := `{"kids":["k2"],"status":"invalid"}`; len(keyChanges) != 1 || keyChanges[0] != want {
			t.Errorf("key change events %q, want one %s", keyChanges, want)
		}
	})
}
