package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
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

// TestCollectionMembersBySearch: an admin names the agent to add by its
// name (and picks it from the agents found), its ARD identifier or its card
// URL, as typed in the add form; the raw id still works.
func TestCollectionMembersBySearch(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Curator: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	ctx := context.Background()
	tok := f.console.processCSRF
	if _, _, err := f.store.SaveCollection(ctx, catalog.System("test"), catalog.Collection{Name: "Docs"}); err != nil {
		t.Fatal(err)
	}
	urn, err := card.URNOf("https://travel-planner.example/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}

	// Typing a name lists the agents it finds, each with its card's place
	// and a button adding it, as a fragment for htmx.
	frag := f.get(t, "/collections/Docs/candidates?agent=translator", map[string]string{"HX-Request": "true"})
	body := frag.Body.String()
	if frag.Code != http.StatusOK || strings.Contains(body, "<html") {
		t.Fatalf("candidates fragment: %d %.300s", frag.Code, body)
	}
	for _, want := range []string{"Document Translator", "translator.example/.well-known/agent-card.json",
		`name="agent_id" value="` + f.ids["translator"] + `"`} {
		if !strings.Contains(body, want) {
			t.Errorf("candidates lack %q: %.500s", want, body)
		}
	}
	if body := f.get(t, "/collections/Docs/candidates?agent=zzqxv", map[string]string{"HX-Request": "true"}).Body.String(); !strings.Contains(body, "No agent you can see matches") {
		t.Errorf("no match is not said: %.300s", body)
	}

	// Without htmx, submitting a name shows the page with the agents found.
	rec := f.post(t, "/collections/Docs/agents", url.Values{csrfField: {tok}, "agent": {"invoice"}}, nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `value="`+f.ids["invoice-extractor"]+`"`) ||
		!strings.Contains(rec.Body.String(), `value="invoice"`) {
		t.Errorf("a typed name: %d, page without the candidate or the words typed", rec.Code)
	}
	if rec := f.post(t, "/collections/Docs/agents", url.Values{csrfField: {tok}, "agent": {" "}}, nil); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), "Type an agent") {
		t.Errorf("nothing typed: %d", rec.Code)
	}
	if rec := f.post(t, "/collections/Docs/agents", url.Values{csrfField: {tok}, "agent": {"urn:air:x"}}, nil); !strings.Contains(rec.Body.String(), "neither an agent") {
		t.Errorf("a malformed identifier: %d, not said", rec.Code)
	}

	steps := []struct {
		name string
		form url.Values
		want string // the agent added
	}{
		{"picked", url.Values{"agent": {"invoice"}, "agent_id": {f.ids["invoice-extractor"]}}, f.ids["invoice-extractor"]},
		{"card URL", url.Values{"agent": {strings.ToUpper("https://TRANSLATOR.example") + "/.well-known/agent-card.json"}}, f.ids["translator"]},
		{"ARD identifier", url.Values{"agent": {urn}}, f.ids["travel-planner"]},
		{"id", url.Values{"agent": {f.ids["code-reviewer"]}}, f.ids["code-reviewer"]},
	}
	for _, st := range steps {
		st.form.Set(csrfField, tok)
		if rec := f.post(t, "/collections/Docs/agents", st.form, nil); rec.Code != http.StatusSeeOther {
			t.Errorf("%s: %d %.300s", st.name, rec.Code, rec.Body.String())
		}
		if ag, err := f.store.Agent(ctx, catalog.ScopeAll, st.want); err != nil || !slices.Contains(ag.Collections, "Docs") {
			t.Errorf("%s: agent %s in %v (%v), want in Docs", st.name, st.want, ag.Collections, err)
		}
	}
}

// TestCollectionCandidatesScoped: the agents offered are only those the
// caller sees; an agent of a collection closed to them is not found by
// name, by card URL or by id, and cannot be added.
func TestCollectionCandidatesScoped(t *testing.T) {
	ctx := context.Background()
	f := &fixture{store: catalogtest.SQLite(t), ids: map[string]string{}}
	f.console = New(Options{Searcher: f.store, Agents: f.store, Curator: f.store, Authorizer: allowAll{}, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	open := f.upsert(t, "https://open.example/card.json", evilCard("1.0.0"), t0)
	secretURL := "https://secret.example/card.json"
	secret := f.upsert(t, secretURL, evilCard("1.0.0"), t0)
	for _, col := range []catalog.Collection{{Name: "Secret", Groups: []string{"sec"}}, {Name: "Public"}} {
		if _, _, err := f.store.SaveCollection(ctx, catalog.System("test"), col); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.store.AddToCollection(ctx, catalog.System("test"), "Secret", secret); err != nil {
		t.Fatal(err)
	}
	hx := map[string]string{"HX-Request": "true"}
	body := f.get(t, "/collections/Public/candidates?agent=evil", hx).Body.String()
	if !strings.Contains(body, `value="`+open+`"`) || strings.Contains(body, secret) || strings.Contains(body, "secret.example") {
		t.Errorf("candidates by name: want the open agent only: %.500s", body)
	}
	for _, ref := range []string{secretURL, secret} {
		if body := f.get(t, "/collections/Public/candidates?agent="+url.QueryEscape(ref), hx).Body.String(); strings.Contains(body, `value="`+secret+`"`) {
			t.Errorf("candidates for %s offer the hidden agent", ref)
		}
	}
	tok := f.console.processCSRF
	for _, form := range []url.Values{{"agent_id": {secret}}, {"agent": {secretURL}}} {
		form.Set(csrfField, tok)
		f.post(t, "/collections/Public/agents", form, nil)
	}
	if ag, _ := f.store.Agent(ctx, catalog.ScopeAll, secret); slices.Contains(ag.Collections, "Public") {
		t.Error("an agent hidden from the caller was added to a collection")
	}
}

// allowAll is an Authorizer that lets everyone in; the caller is then
// whoever the request context says (nobody: a viewer of no group).
type allowAll struct{}

func (allowAll) RequireRole(auth.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
}

// TestPendingNotEmpty: a viewer who finds nothing because every agent
// awaits review is told how many await it (the number only: no name), not
// that the catalog is empty; agents of a collection closed to the viewer
// are not counted. A search that names words or filters says "no match"
// as before, and a catalog with nothing pending is empty.
func TestPendingNotEmpty(t *testing.T) {
	ctx := context.Background()
	f := &fixture{store: catalogtest.SQLite(t), ids: map[string]string{}}
	f.console = New(Options{Searcher: f.store, Agents: f.store, Curator: f.store, Authorizer: allowAll{}, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	if body := f.get(t, "/", nil).Body.String(); !strings.Contains(body, "The catalog is empty") {
		t.Error("an empty catalog is not called empty")
	}

	f.store.SetListingPolicy(catalog.ListingPolicy{RequireApproval: true})
	for _, name := range []string{"invoice-extractor", "weather"} {
		f.upsert(t, "https://"+name+".example/card.json", evilCard("1.0.0"), t0)
	}
	secret := f.upsert(t, "https://secret.example/card.json", evilCard("1.0.0"), t0)
	if _, _, err := f.store.SaveCollection(ctx, catalog.System("test"), catalog.Collection{Name: "Secret", Groups: []string{"sec"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.store.AddToCollection(ctx, catalog.System("test"), "secret", secret); err != nil {
		t.Fatal(err)
	}

	body := f.get(t, "/", nil).Body.String()
	if !strings.Contains(body, "2 agents await review") {
		t.Error("the page does not say how many agents await review (2 the viewer could see)")
	}
	for _, leak := range []string{"The catalog is empty", "3 agents", "Evil", "/agents/"} {
		if strings.Contains(body, leak) {
			t.Errorf("the page holds %q", leak)
		}
	}
	if body := f.get(t, "/?q=invoice", nil).Body.String(); !strings.Contains(body, "No agent matches") || strings.Contains(body, "await review") {
		t.Error("a search with words that finds nothing does not say no agent matches, or counts pending agents")
	}
}

// TestReviewBulk: the review page shows each pending agent's card
// summary, signature verdict and findings, and approves or rejects the
// ticked agents at once with one reason, each transition audited. A
// rejection without a reason changes nothing and shows the form again as
// sent (the ticked agents and the typed text) saying what is missing.
func TestReviewBulk(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, fixtureOptions{})
	f.store.SetListingPolicy(catalog.ListingPolicy{RequireApproval: true})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Curator: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	tok := f.console.processCSRF
	var ids []string
	for _, host := range []string{"a", "b", "c"} {
		ids = append(ids, f.upsert(t, "https://"+host+".pending.example/card.json", evilCard("2.0.0"), t0.Add(4*time.Hour)))
	}
	report := `{"signatures":{"status":"invalid"},"security_findings":[{"code":"no_security","severity":"warning","path":"$","message":"declares no security"}]}`
	if err := f.store.RecordVerifications(ctx, catalog.System("test"), []catalog.VerificationInput{{
		AgentID: ids[0], Version: 1, Status: catalog.SignatureInvalid, Report: []byte(report),
		VerifiedAt: t0.Add(4 * time.Hour), RecheckAt: t0.Add(28 * time.Hour),
	}}); err != nil {
		t.Fatal(err)
	}

	body := f.get(t, "/review", nil).Body.String()
	for _, want := range []string{
		`<form id="bulk" method="post" action="/review"`, `name="csrf_token" value="` + tok + `"`,
		`form="bulk" name="agent" value="` + ids[0] + `"`, `form="bulk" name="agent" value="` + ids[2] + `"`,
		"Evil Corp", "Pwn &lt;b&gt;bold&lt;/b&gt;</dd>", // provider and skill of the card summary, as text
		`<span class="badge bad">invalid</span>`, "<code>no_security</code>", "declares no security",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("review page lacks %q", want)
		}
	}
	if strings.Contains(body, "<b>bold</b>") {
		t.Error("review page renders card markup")
	}

	states := func() []string {
		t.Helper()
		var out []string
		for _, id := range ids {
			ag, err := f.store.Agent(ctx, catalog.ScopeAll, id)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ag.Listing.State+":"+ag.Listing.Reason)
		}
		return out
	}
	pending := catalog.ListingPending + ":"
	tests := []struct {
		name       string
		form       url.Values
		wantStatus int
		wantStates []string
		wantBody   []string
	}{
		{"no token", url.Values{"state": {"approved"}, "agent": {ids[0]}}, http.StatusForbidden,
			[]string{pending, pending, pending}, nil},
		{"reject without reason", url.Values{csrfField: {tok}, "state": {"rejected"}, "agent": {ids[0], ids[2]}, "reason": {"   "}},
			http.StatusBadRequest, []string{pending, pending, pending},
			[]string{"A rejection needs a reason", `value="` + ids[0] + `" checked`, `value="` + ids[2] + `" checked`, `name="reason" maxlength="1000" value="   "`}},
		{"nothing ticked", url.Values{csrfField: {tok}, "state": {"approved"}, "reason": {"looks fine"}},
			http.StatusBadRequest, []string{pending, pending, pending}, []string{"Tick the agents to approve", `value="looks fine"`}},
		{"approve two", url.Values{csrfField: {tok}, "state": {"approved"}, "agent": {ids[0], ids[1]}},
			http.StatusSeeOther, []string{"approved:", "approved:", pending}, nil},
		{"reject one, and an unknown id", url.Values{csrfField: {tok}, "state": {"rejected"}, "agent": {ids[2], "no-such-agent"}, "reason": {"spam"}},
			http.StatusConflict, []string{"approved:", "approved:", "rejected:spam"}, []string{"1 of 2 agents were not changed"}},
	}
	for _, tc := range tests {
		rec := f.post(t, "/review", tc.form, nil)
		if rec.Code != tc.wantStatus {
			t.Errorf("%s: POST = %d, want %d", tc.name, rec.Code, tc.wantStatus)
		}
		if got := states(); !slices.Equal(got, tc.wantStates) {
			t.Errorf("%s: listings %v, want %v", tc.name, got, tc.wantStates)
		}
		for _, w := range tc.wantBody {
			if !strings.Contains(rec.Body.String(), w) {
				t.Errorf("%s: page lacks %q", tc.name, w)
			}
		}
	}
	if strings.Contains(f.get(t, "/review", nil).Body.String(), `value="`+ids[1]+`"`) {
		t.Error("an approved agent is still awaiting review")
	}
	// Each transition is audited on its own.
	log, err := f.store.AuditLog(ctx, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	audited := map[string]int{}
	for _, e := range log.Entries {
		if e.Action == catalog.ActionListing {
			audited[e.TargetID]++
		}
	}
	for i, id := range ids {
		if audited[id] != 1 {
			t.Errorf("agent %d: %d listing entries in the audit log, want 1", i, audited[id])
		}
	}
}
