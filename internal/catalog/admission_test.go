package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// fakeRule is a rule of fakeAdmission: it fails when fails says so, and
// errors (as a CEL expression failing at run time) when errs is set.
type fakeRule struct {
	id, action, message string
	fails               func(catalog.AdmissionInput) bool
	errs                bool
}

// fakeAdmission stands for internal/policy (which the catalog does not
// import): the catalog's part is what a judgement does, tested here; the
// rules' language is tested in internal/policy and, end to end, in
// cmd/registry.
type fakeAdmission []fakeRule

func (f fakeAdmission) Digest() string { return "fake" }

func (f fakeAdmission) Judge(in catalog.AdmissionInput) catalog.Judgement {
	var j catalog.Judgement
	rank := map[string]int{"": 0, catalog.PolicyFlag: 1, catalog.PolicyHold: 2, catalog.PolicyReject: 3}
	for _, r := range f {
		res := catalog.PolicyResult{RuleID: r.id, Action: r.action, Outcome: catalog.PolicyFail, Message: r.message}
		switch {
		case r.errs:
			res.Action, res.Outcome, res.Message = catalog.PolicyFlag, catalog.PolicyErrored, "no such key: x"
		case !r.fails(in):
			continue
		}
		j.Results = append(j.Results, res)
		if rank[res.Action] > rank[j.Action] {
			j.Action = res.Action
		}
	}
	return j
}

func nameHas(s string) func(catalog.AdmissionInput) bool {
	return func(in catalog.AdmissionInput) bool { return strings.Contains(in.Card.Name, s) }
}

// policyNames returns the names of the agents an editor finds failing
// rule.
func policyNames(t *testing.T, s *catalog.Store, rule string) []string {
	t.Helper()
	p, err := s.Search(context.Background(), catalog.Query{Filters: map[string][]string{catalog.FieldPolicy: {rule}},
		Scope: catalog.Scope{Review: true}})
	if err != nil {
		t.Fatal(err)
	}
	return ids(p)
}

// TestPolicyHoldUntilComply: a version failing a hold rule sends the
// agent to pending with the rule's message, audited as the policy's; the
// policy facet finds it; a later version that complies lists it again and
// clears the facet, and the held version's results stay stored.
func TestPolicyHoldUntilComply(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		s.SetAdmission(fakeAdmission{
			{id: "no-beta", action: catalog.PolicyHold, message: "beta agents wait", fails: nameHas("beta")},
			{id: "no-x", action: catalog.PolicyFlag, message: "x is flagged", fails: nameHas("x")},
		})
		url := "https://held.example/card.json"
		a := store(t, s, url, namedCard("beta one", "1"), catalog.SourceURL).Agent
		if a.Listing.State != catalog.ListingPending || !strings.Contains(a.Listing.Reason, `"no-beta": beta agents wait`) ||
			a.Listing.By != "system:policy" {
			t.Fatalf("held agent listing = %+v", a.Listing)
		}
		if got := policyNames(t, s, "no-beta"); !slices.Equal(got, []string{"beta one"}) {
			t.Fatalf("policy=no-beta finds %v", got)
		}
		st, err := s.PolicyState(ctx, catalog.ScopeAll, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Judged || len(st.Results) != 1 || st.Results[0].RuleID != "no-beta" || st.Results[0].Outcome != catalog.PolicyFail {
			t.Fatalf("policy state = %+v", st)
		}
		if scopedIDs(t, s, catalog.Scope{})[a.ID] {
			t.Error("a viewer sees the held agent")
		}

		a = store(t, s, url, namedCard("gamma one", "2"), catalog.SourceURL).Agent
		if a.Listing.State != catalog.ListingApproved || a.Listing.Reason != "" || a.CurrentVersion != 2 {
			t.Fatalf("complying agent listing = %+v (version %d)", a.Listing, a.CurrentVersion)
		}
		if got := policyNames(t, s, "no-beta"); len(got) != 0 {
			t.Errorf("policy=no-beta still finds %v", got)
		}
		if !scopedIDs(t, s, catalog.Scope{})[a.ID] {
			t.Error("a viewer does not see the complying agent")
		}
		if st, _ := s.PolicyState(ctx, catalog.ScopeAll, a.ID); !st.Judged || len(st.Results) != 0 {
			t.Errorf("complying version's state = %+v", st)
		}
		page, err := s.AuditLog(ctx, "", 50)
		if err != nil {
			t.Fatal(err)
		}
		var moves []string
		for _, e := range page.Entries {
			if e.Action == catalog.ActionListing && e.TargetID == a.ID && e.Subject == "policy" {
				var d struct{ From, To, Rule string }
				if err := json.Unmarshal(e.Detail, &d); err != nil {
					t.Fatal(err)
				}
				moves = append(moves, d.From+">"+d.To+":"+d.Rule)
			}
		}
		if want := []string{"pending>approved:", "approved>pending:no-beta"}; !slices.Equal(moves, want) {
			t.Errorf("audited policy moves (newest first) = %v, want %v", moves, want)
		}
		// An event says when the failing rules changed (agent.policy
		// webhooks): on the held version and on the complying one.
		events, err := s.Events(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var policyEvents []string
		for _, e := range events {
			if e.Kind == catalog.EventPolicy {
				policyEvents = append(policyEvents, fmt.Sprintf("%d:%s", e.Version, e.Detail))
			}
		}
		if want := []string{`1:{"failing":["no-beta"]}`, `2:{"failing":[]}`}; !slices.Equal(policyEvents, want) {
			t.Errorf("policy events = %v, want %v", policyEvents, want)
		}
	})
}

// TestPolicyEditorOverride: an editor's approval of a held agent stands
// while the failures stay the same (a new verdict judged again does not
// hold it back); a new failing version holds it again.
func TestPolicyEditorOverride(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		s.SetAdmission(fakeAdmission{{id: "no-beta", action: catalog.PolicyHold, message: "m", fails: nameHas("beta")}})
		url := "https://override.example/card.json"
		a := store(t, s, url, namedCard("beta", "1"), catalog.SourceURL).Agent
		if _, err := s.SetListing(ctx, editor, catalog.ScopeAll, a.ID, catalog.ListingChange{State: catalog.ListingApproved}); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: a.ID, Version: 1,
			Status: catalog.SignatureUnsigned, Report: json.RawMessage(`{}`), VerifiedAt: now, RecheckAt: now.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Agent(ctx, catalog.ScopeAll, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Listing.State != catalog.ListingApproved {
			t.Fatalf("after a new verdict the overridden agent is %+v", got.Listing)
		}
		a = store(t, s, url, namedCard("beta", "2"), catalog.SourceURL).Agent
		if a.Listing.State != catalog.ListingPending {
			t.Errorf("a new failing version is %+v, want held", a.Listing)
		}
	})
}

// TestPolicyRejectRegistration: a reject rule refuses a registration and
// an import with the rule named; nothing is stored.
func TestPolicyRejectRegistration(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		s.SetAdmission(fakeAdmission{{id: "no-evil", action: catalog.PolicyReject, message: "evil is refused", fails: nameHas("evil")}})
		for _, source := range []string{catalog.SourceURL, catalog.SourceImport} {
			c := mustParse(t, namedCard("evil", "1"))
			var re *catalog.RefusedError
			_, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: "https://evil.example/card.json", Card: c, Source: source})
			if !errors.As(err, &re) || re.RuleID != "no-evil" || !errors.Is(err, catalog.ErrRefused) {
				t.Fatalf("%s: Upsert = %v", source, err)
			}
		}
		if n, err := s.Count(ctx); err != nil || n != 0 {
			t.Fatalf("count = %d, %v; want nothing stored", n, err)
		}
	})
}

// TestPolicyRejectCrawl: a crawl that brings a refused card keeps the
// last compliant version as current, the agent stale with the rule
// named; a later compliant card becomes the next version.
func TestPolicyRejectCrawl(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		url := "https://crawled.example/card.json"
		a := store(t, s, url, namedCard("good", "1"), catalog.SourceURL).Agent
		s.SetAdmission(fakeAdmission{{id: "no-evil", action: catalog.PolicyReject, message: "m", fails: nameHas("evil")}})
		res := store(t, s, url, namedCard("evil", "2"), catalog.SourceCrawl)
		if res.Refused == nil || res.Refused.RuleID != "no-evil" || res.NewVersion {
			t.Fatalf("crawl of a refused card = %+v", res)
		}
		got, err := s.Agent(ctx, catalog.ScopeAll, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.CurrentVersion != 1 || got.Card.Name != "good" || got.Health != catalog.HealthStale {
			t.Fatalf("after refusal: version %d %q health %s", got.CurrentVersion, got.Card.Name, got.Health)
		}
		if st, _ := s.PolicyState(ctx, catalog.ScopeAll, a.ID); st.RefusedBy != "no-evil" {
			t.Errorf("refused by %q", st.RefusedBy)
		}
		// A check that finds the refused card unchanged (a 304) does not
		// bring the agent back up.
		now := time.Now()
		if _, err := s.RecordFetches(ctx, testActor, []catalog.FetchOutcome{{AgentID: a.ID, At: now, Status: 304,
			NotModified: true, Health: catalog.HealthUp, NextCheckAt: now.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Agent(ctx, catalog.ScopeAll, a.ID); got.Health != catalog.HealthStale {
			t.Errorf("after a 304 of the refused card: health %s", got.Health)
		}
		p, err := s.Search(ctx, catalog.Query{Filters: map[string][]string{catalog.FieldHealth: {catalog.HealthStale}}, Scope: catalog.ScopeAll})
		if err != nil || !slices.Contains(ids(p), "good") {
			t.Errorf("health=stale finds %v, %v", ids(p), err)
		}
		res = store(t, s, url, namedCard("better", "3"), catalog.SourceCrawl)
		if !res.NewVersion || res.Agent.CurrentVersion != 2 {
			t.Fatalf("compliant crawl = %+v", res)
		}
		if st, _ := s.PolicyState(ctx, catalog.ScopeAll, a.ID); st.RefusedBy != "" {
			t.Errorf("still refused by %q", st.RefusedBy)
		}
	})
}

// TestPolicyJudgedAgainOnVerdict: a flag rule on the signature is
// judged when the version comes (unchecked) and again, in the same write,
// when the verifier's verdict changes.
func TestPolicyJudgedAgainOnVerdict(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		s.SetAdmission(fakeAdmission{{id: "signed", action: catalog.PolicyFlag, message: "sign it",
			fails: func(in catalog.AdmissionInput) bool { return in.SignatureStatus != catalog.SignatureVerified }}})
		a := store(t, s, "https://verdict.example/card.json", namedCard("v", "1"), catalog.SourceURL).Agent
		if got := policyNames(t, s, "signed"); !slices.Equal(got, []string{"v"}) {
			t.Fatalf("unchecked: policy=signed finds %v", got)
		}
		now := time.Now()
		if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: a.ID, Version: 1,
			Status: catalog.SignatureVerified, Report: json.RawMessage(`{}`), VerifiedAt: now, RecheckAt: now.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		if got := policyNames(t, s, "signed"); len(got) != 0 {
			t.Errorf("verified: policy=signed finds %v", got)
		}
		if a, _ := s.Agent(ctx, catalog.ScopeAll, a.ID); a.Listing.State != catalog.ListingApproved {
			t.Errorf("a flag changed the listing: %+v", a.Listing)
		}
	})
}

// TestPolicyRuntimeErrorContained: a rule that errors on an agent is a
// finding (errored, acting as a flag): the card is stored and listed.
func TestPolicyRuntimeErrorContained(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		s.SetAdmission(fakeAdmission{{id: "broken", action: catalog.PolicyReject, message: "m", errs: true}})
		a := store(t, s, "https://errs.example/card.json", namedCard("e", "1"), catalog.SourceURL).Agent
		if a.Listing.State != catalog.ListingApproved {
			t.Errorf("listing = %+v", a.Listing)
		}
		st, err := s.PolicyState(ctx, catalog.ScopeAll, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Results) != 1 || st.Results[0].Outcome != catalog.PolicyErrored || st.Results[0].Action != catalog.PolicyFlag {
			t.Errorf("results = %+v", st.Results)
		}
		if got := policyNames(t, s, "broken"); !slices.Equal(got, []string{"e"}) {
			t.Errorf("policy=broken finds %v", got)
		}
	})
}

// TestPolicyJudgedAgainOnHealth: a hold rule on health holds the agent in
// the write that records it going down, and releases it in the write that
// records it up again.
func TestPolicyJudgedAgainOnHealth(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		s.SetAdmission(fakeAdmission{{id: "not-down", action: catalog.PolicyHold, message: "down agents wait",
			fails: func(in catalog.AdmissionInput) bool { return in.Health == catalog.HealthDown }}})
		a := store(t, s, "https://health.example/card.json", namedCard("h", "1"), catalog.SourceURL).Agent
		now := time.Now()
		check := func(health string) catalog.Agent {
			t.Helper()
			if _, err := s.RecordFetches(ctx, testActor, []catalog.FetchOutcome{{AgentID: a.ID, At: now, Status: 200,
				NotModified: true, Health: health, NextCheckAt: now.Add(time.Hour)}}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Agent(ctx, catalog.ScopeAll, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if got := check(catalog.HealthDown); got.Listing.State != catalog.ListingPending || got.Health != catalog.HealthDown {
			t.Fatalf("down: %s, listing %+v", got.Health, got.Listing)
		}
		if got := policyNames(t, s, "not-down"); !slices.Equal(got, []string{"h"}) {
			t.Errorf("down: policy=not-down finds %v", got)
		}
		if got := check(catalog.HealthUp); got.Listing.State != catalog.ListingApproved {
			t.Fatalf("up again: listing %+v", got.Listing)
		}
		if got := policyNames(t, s, "not-down"); len(got) != 0 {
			t.Errorf("up again: policy=not-down finds %v", got)
		}
	})
}
