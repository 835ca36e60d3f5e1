package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
)

var _ Curator = (*catalog.Store)(nil)

// TestReviewPage: an operator with --reapprove-on-change sees a changed
// agent on the review page with the diff from its approved version, and
// approves it with a CSRF-protected form; bad transitions are refused
// with their reason.
func TestReviewPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.store.SetListingPolicy(catalog.ListingPolicy{ReapproveOnChange: true})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Curator: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	tok := f.console.processCSRF
	evilURL := "https://evil.example/.well-known/agent-card.json"
	id := f.upsert(t, evilURL, evilCard("9.9.9"), t0.Add(5*time.Hour))

	body := f.get(t, "/review", nil).Body.String()
	for _, want := range []string{`href="/agents/` + id + `"`, "approved version 2", "9.9.9", "1.1.0", `name="csrf_token" value="` + tok + `"`} {
		if !strings.Contains(body, want) {
			t.Errorf("review page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>window.__xss") {
		t.Error("review page renders card markup")
	}
	action := "/agents/" + id + "/listing"
	tests := []struct {
		name       string
		form       url.Values
		wantStatus int
		wantState  string
	}{
		{"no token", url.Values{"state": {"approved"}}, http.StatusForbidden, catalog.ListingPending},
		{"reject without reason", url.Values{csrfField: {tok}, "state": {"rejected"}}, http.StatusBadRequest, catalog.ListingPending},
		{"approve", url.Values{csrfField: {tok}, "state": {"approved"}, "from": {"review"}}, http.StatusSeeOther, catalog.ListingApproved},
		{"deprecate", url.Values{csrfField: {tok}, "state": {"deprecated"}, "reason": {"retired"}}, http.StatusSeeOther, catalog.ListingDeprecated},
	}
	for _, tc := range tests {
		rec := f.post(t, action, tc.form, nil)
		if rec.Code != tc.wantStatus {
			t.Errorf("%s: POST = %d, want %d", tc.name, rec.Code, tc.wantStatus)
		}
		ag, err := f.store.Agent(context.Background(), catalog.ScopeAll, id)
		if err != nil {
			t.Fatal(err)
		}
		if ag.Listing.State != tc.wantState {
			t.Errorf("%s: listing %s, want %s", tc.name, ag.Listing.State, tc.wantState)
		}
	}
	if strings.Contains(f.get(t, "/review", nil).Body.String(), `href="/agents/`+id+`"`) {
		t.Error("an approved agent is still awaiting review")
	}
	page := f.get(t, "/agents/"+id, nil).Body.String()
	for _, want := range []string{"Deprecated:", "retired", `action="` + action + `"`} {
		if !strings.Contains(page, want) {
			t.Errorf("agent page lacks %q", want)
		}
	}
}

// TestCollectionsPage: an admin creates a collection, adds and removes an
// agent through the page's forms.
func TestCollectionsPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Curator: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	tok := f.console.processCSRF
	id := f.ids["translator"]
	steps := []struct {
		target string
		form   url.Values
		want   int
	}{
		{"/collections", url.Values{"name": {"Finance"}}, http.StatusForbidden},
		{"/collections", url.Values{csrfField: {tok}, "name": {"Finance"}, "description": {"Money <b>"}, "groups": {"finance, audit"}}, http.StatusSeeOther},
		{"/collections", url.Values{csrfField: {tok}, "name": {""}}, http.StatusBadRequest},
		{"/collections/Finance/agents", url.Values{csrfField: {tok}, "agent_id": {id}}, http.StatusSeeOther},
		{"/collections/Nope/agents", url.Values{csrfField: {tok}, "agent_id": {id}}, http.StatusNotFound},
	}
	for _, s := range steps {
		if rec := f.post(t, s.target, s.form, nil); rec.Code != s.want {
			t.Errorf("POST %s %v = %d, want %d", s.target, s.form, rec.Code, s.want)
		}
	}
	body := f.get(t, "/collections", nil).Body.String()
	for _, want := range []string{"Finance", "Money &lt;b&gt;", "<code>audit</code>", `href="/agents/` + id + `"`,
		`action="/collections/Finance/agents/` + id + `/remove"`} {
		if !strings.Contains(body, want) {
			t.Errorf("collections page lacks %q", want)
		}
	}
	if rec := f.post(t, "/collections/Finance/agents/"+id+"/remove", url.Values{csrfField: {tok}}, nil); rec.Code != http.StatusSeeOther {
		t.Errorf("remove = %d", rec.Code)
	}
	if ag, _ := f.store.Agent(context.Background(), catalog.ScopeAll, id); len(ag.Collections) != 0 {
		t.Errorf("agent still in %v", ag.Collections)
	}
}
