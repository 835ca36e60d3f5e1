package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// versioned is a fakeAdmission with a digest of its own: another policy.
type versioned struct {
	fakeAdmission
	digest string
}

func (v versioned) Digest() string { return v.digest }

// TestRejudgeOnNewPolicy: a new policy judges the catalog already there,
// in batches: the results are stored per version, a hold rule sends a
// failing agent to pending (audited), an agent held by the old policy is
// released once the new one passes it, an editor's override stands,
// agent.policy events say what changed, the index finds the new failures,
// and the run is audited. A second run finds nothing left to judge.
func TestRejudgeOnNewPolicy(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		s.SetAdmission(versioned{fakeAdmission{{id: "no-beta", action: catalog.PolicyHold, message: "beta waits", fails: nameHas("beta")}}, "v1"})
		// More agents than one batch holds.
		var gammas []string
		for i := range 250 {
			a := store(t, s, fmt.Sprintf("https://g%d.example/card.json", i), namedCard(fmt.Sprintf("gamma %d", i), "1"), catalog.SourceURL).Agent
			gammas = append(gammas, a.ID)
		}
		held := store(t, s, "https://beta.example/card.json", namedCard("beta", "1"), catalog.SourceURL).Agent
		overridden := store(t, s, "https://beta2.example/card.json", namedCard("beta two gamma", "1"), catalog.SourceURL).Agent
		if held.Listing.State != catalog.ListingPending {
			t.Fatalf("beta under v1: %+v", held.Listing)
		}
		if _, err := s.SetListing(ctx, editor, catalog.ScopeAll, overridden.ID, catalog.ListingChange{State: catalog.ListingApproved}); err != nil {
			t.Fatal(err)
		}

		// v2 holds gammas instead, and flags beta.
		s.SetAdmission(versioned{fakeAdmission{
			{id: "no-gamma-7", action: catalog.PolicyHold, message: "gamma 7 waits", fails: nameHas("gamma 7")},
			{id: "beta-flag", action: catalog.PolicyFlag, message: "beta is flagged", fails: nameHas("beta")},
		}, "v2"})
		st, err := s.Rejudge(ctx, catalog.System("policy"))
		if err != nil {
			t.Fatal(err)
		}
		// gamma 7, 70-79, 700+ do not exist beyond 249: 7 and 70-79.
		if !st.Done || st.Judged != 252 || st.Held != 11 || st.Released != 1 || st.Digest != "v2" {
			t.Fatalf("stats = %+v", st)
		}
		a, err := s.Agent(ctx, catalog.ScopeAll, held.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Listing.State != catalog.ListingApproved {
			t.Errorf("the agent v1 held and v2 passes is %+v, want released", a.Listing)
		}
		if a, _ = s.Agent(ctx, catalog.ScopeAll, overridden.ID); a.Listing.State != catalog.ListingApproved {
			t.Errorf("the overridden agent is %+v", a.Listing)
		}
		if a, _ = s.Agent(ctx, catalog.ScopeAll, gammas[7]); a.Listing.State != catalog.ListingPending ||
			!strings.Contains(a.Listing.Reason, `"no-gamma-7"`) {
			t.Errorf("gamma 7 is %+v, want held", a.Listing)
		}
		if got := policyNames(t, s, "beta-flag"); !slices.Equal(got, []string{"beta", "beta two gamma"}) {
			t.Errorf("policy=beta-flag finds %v", got)
		}
		if ps, _ := s.PolicyState(ctx, catalog.ScopeAll, held.ID); ps.Digest != "v2" || len(ps.Results) != 1 || ps.Results[0].RuleID != "beta-flag" {
			t.Errorf("beta's policy state = %+v", ps)
		}
		events, err := s.Events(ctx, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var betaEvents []string
		for _, e := range events {
			if e.Kind == catalog.EventPolicy && e.AgentID == held.ID {
				betaEvents = append(betaEvents, string(e.Detail))
			}
		}
		if want := []string{`{"failing":["no-beta"]}`, `{"failing":["beta-flag"]}`}; !slices.Equal(betaEvents, want) {
			t.Errorf("beta's policy events = %v, want %v", betaEvents, want)
		}
		page, err := s.AuditLog(ctx, "", 50)
		if err != nil {
			t.Fatal(err)
		}
		var runs []catalog.RejudgeStats
		for _, e := range page.Entries {
			if e.Action == catalog.ActionPolicyRejudge {
				var r catalog.RejudgeStats
				if err := json.Unmarshal(e.Detail, &r); err != nil {
					t.Fatal(err)
				}
				runs = append(runs, r)
			}
		}
		if len(runs) != 1 || runs[0] != st {
			t.Errorf("audited runs = %+v, want %+v", runs, st)
		}

		again, err := s.Rejudge(ctx, catalog.System("policy"))
		if err != nil || again.Judged != 0 || !again.Done {
			t.Errorf("a second run: %+v, %v", again, err)
		}
	})
}

// TestPolicyJudgesProvenance: a rule sees how the agent came, as the
// provenance facet says it — the way the write being judged brings it
// included — and a re-judgement sees the stored provenance.
func TestPolicyJudgesProvenance(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		var mu sync.Mutex
		seen := map[string]string{}
		record := func(in catalog.AdmissionInput) bool {
			mu.Lock()
			defer mu.Unlock()
			seen[in.CardURL] = strings.Join(in.Provenance, ",")
			return slices.Contains(in.Provenance, catalog.RelationFederatedFrom)
		}
		s.SetAdmission(versioned{fakeAdmission{{id: "no-federated", action: catalog.PolicyHold, message: "m", fails: record}}, "p1"})
		src := &catalog.Via{Kind: catalog.ProvenanceSource, SourceID: "s1", SourceURL: "https://peer.example/",
			ManifestURL: "https://peer.example/.well-known/ard.json", EntryID: "e1", Relation: catalog.RelationFederatedFrom}
		ins := []struct {
			url    string
			source string
			via    *catalog.Via
			want   string
		}{
			{"https://r.example/card.json", catalog.SourceURL, nil, "registered"},
			{"https://s.example/card.json", catalog.SourceURL, &catalog.Via{Kind: catalog.ProvenanceSeeded}, "seeded"},
			{"https://i.example/card.json", catalog.SourceImport, nil, "imported"},
			{"https://f.example/card.json", catalog.SourceURL, src, "federatedFrom"},
		}
		for _, in := range ins {
			res, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: in.url, Card: mustParse(t, namedCard(in.url, "1")),
				Source: in.source, Via: in.via})
			if err != nil {
				t.Fatal(err)
			}
			if seen[in.url] != in.want {
				t.Errorf("%s judged with provenance %q, want %q", in.url, seen[in.url], in.want)
			}
			if held := res.Agent.Listing.State == catalog.ListingPending; held != (in.want == "federatedFrom") {
				t.Errorf("%s: listing %s", in.url, res.Agent.Listing.State)
			}
		}
		// The registered agent is registered by URL again and found in a
		// source: both ways count.
		if _, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: ins[0].url, Card: mustParse(t, namedCard("r", "2")),
			Source: catalog.SourceURL, Via: &catalog.Via{Kind: catalog.ProvenanceSource, SourceID: "s1", EntryID: "e2",
				Relation: catalog.RelationPublishedFrom}}); err != nil {
			t.Fatal(err)
		}
		if want := "publishedFrom,registered"; seen[ins[0].url] != want {
			t.Errorf("second way judged with %q, want %q", seen[ins[0].url], want)
		}
		clear(seen)
		s.SetAdmission(versioned{fakeAdmission{{id: "no-federated", action: catalog.PolicyHold, message: "m", fails: record}}, "p2"})
		if _, err := s.Rejudge(ctx, catalog.System("policy")); err != nil {
			t.Fatal(err)
		}
		if got := seen[ins[3].url]; got != "federatedFrom" {
			t.Errorf("re-judged with %q, want federatedFrom", got)
		}
		if got := seen[ins[0].url]; got != "publishedFrom,registered" {
			t.Errorf("re-judged with %q", got)
		}
	})
}
