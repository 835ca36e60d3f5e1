package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/api"
	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/contentscan"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/runs"
	"github.com/a2aregistry/registry/internal/verify"
	"github.com/a2aregistry/registry/internal/web"
)

// The visibility table test (issue 13): for each kind of caller, every read
// endpoint of the API and every console page, over a catalog of public,
// finance-only, pending, rejected and deprecated agents, shows exactly the
// agents the caller may see; the others are 404, absent from results,
// totals, facet counts, the change feed and collection lists. It lives
// here, where both doors are assembled, so one server carries both (no
// door imports another).

// visAgents are the agents of the catalog under test, by key. Names are
// distinct words so a page can be searched for each; "Aardvark" sorts
// first by name, so that it coming last shows deprecated agents rank last.
var visAgents = []struct {
	key, name   string
	listing     string
	collections []string
}{
	{"pub", "Quokka public", catalog.ListingApproved, nil},
	{"partner", "Pangolin partner", catalog.ListingApproved, []string{"Partners"}},
	{"fin", "Fennec finance", catalog.ListingApproved, []string{"Finance"}},
	// In a restricted and an open collection: open to everyone.
	{"finpart", "Falabella mixed", catalog.ListingApproved, []string{"Finance", "Partners"}},
	{"pend", "Pika pending", catalog.ListingPending, nil},
	{"rej", "Remora rejected", catalog.ListingRejected, nil},
	{"dep", "Aardvark deprecated", catalog.ListingDeprecated, nil},
	{"finpend", "Fossa pending finance", catalog.ListingPending, []string{"Finance"}},
	// Public, with a name confusable with the finance-only agent's
	// (Cyrillic е): its content scan names that agent, to finance only.
	{"conf", "F\u0435nnec finance", catalog.ListingApproved, nil},
}

var (
	browsableKeys = []string{"pub", "partner", "finpart", "dep", "conf"}
	financeKeys   = append(slices.Clone(browsableKeys), "fin")
	reviewKeys    = append(slices.Clone(browsableKeys), "pend", "rej")
	allKeys       = append(slices.Clone(reviewKeys), "fin", "finpend")
)

// visT0 is when the test's cards arrive; visCSRF the console's token.
var visT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const visCSRF = "visibility-test-csrf-token"

var visLog = slog.New(slog.DiscardHandler)

type visCaller struct {
	name      string
	principal auth.Principal
	see       []string
	// collections are the collection names the caller sees.
	collections []string
}

var visCallers = []visCaller{
	{"anonymous with the viewer role", auth.Principal{Role: auth.Viewer, Source: auth.SourceAnonymous}, browsableKeys, []string{"Partners"}},
	{"viewer without groups", auth.Principal{Subject: "v", Role: auth.Viewer, Source: auth.SourceBearer, Groups: []string{"staff"}}, browsableKeys, []string{"Partners"}},
	{"viewer in finance", auth.Principal{Subject: "vf", Role: auth.Viewer, Source: auth.SourceBearer, Groups: []string{"staff", "FINANCE"}}, financeKeys, []string{"Finance", "Partners"}},
	{"tester in finance", auth.Principal{Subject: "tf", Role: auth.Tester, Source: auth.SourceBearer, Groups: []string{"finance"}}, financeKeys, []string{"Finance", "Partners"}},
	{"editor", auth.Principal{Subject: "e", Role: auth.Editor, Source: auth.SourceBearer}, reviewKeys, []string{"Partners"}},
	{"editor in finance", auth.Principal{Subject: "ef", Role: auth.Editor, Source: auth.SourceBearer, Groups: []string{"finance"}}, allKeys, []string{"Finance", "Partners"}},
	{"admin", auth.Principal{Subject: "a", Role: auth.Admin, Source: auth.SourceBearer}, allKeys, []string{"Finance", "Partners"}},
}

// callerAuthorizer puts the principal named by the test header in the
// request context and checks roles against it, as auth.Authenticator does.
type callerAuthorizer struct{}

const callerHeader = "X-Test-Caller"

func (callerAuthorizer) RequireRole(need auth.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !auth.FromContext(c.Request().Context()).Role.Includes(need) {
				return echo.NewHTTPError(http.StatusForbidden, need.String()+" role required")
			}
			return next(c)
		}
	}
}

func withCaller(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		i := slices.IndexFunc(visCallers, func(v visCaller) bool { return v.name == c.Request().Header.Get(callerHeader) })
		var p auth.Principal
		if i >= 0 {
			p = visCallers[i].principal
		}
		c.SetRequest(c.Request().WithContext(auth.WithPrincipal(c.Request().Context(), p, "")))
		return next(c)
	}
}

func visCard(name, version string) []byte {
	raw, err := json.Marshal(map[string]any{
		"name": name, "description": "An agent for the visibility test.", "url": "https://vis.example/a2a",
		"version": version, "protocolVersion": "0.3.0", "capabilities": map[string]any{},
		"defaultInputModes": []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
		"skills": []any{map[string]any{"id": "s", "name": "Skill", "description": "d", "tags": []string{"vis"}}},
	})
	if err != nil {
		panic(err)
	}
	return raw
}

func visCardURL(key string) string {
	return fmt.Sprintf("https://%s.example/.well-known/agent-card.json", key)
}

type visFixture struct {
	e     *echo.Echo
	ids   map[string]string // key → agent id
	runs  map[string]string // key → run id
	names map[string]string // key → name
	csrf  string
	store *catalog.Store
}

func newVisFixture(t *testing.T, store *catalog.Store) *visFixture {
	t.Helper()
	ctx := context.Background()
	actor := catalog.System("test")
	f := &visFixture{ids: map[string]string{}, runs: map[string]string{}, names: map[string]string{}}
	for _, col := range []catalog.Collection{{Name: "Finance", Groups: []string{"finance"}}, {Name: "Partners"}} {
		if _, _, err := store.SaveCollection(ctx, actor, col); err != nil {
			t.Fatal(err)
		}
	}
	for i, a := range visAgents {
		url := visCardURL(a.key)
		var id string
		for v, version := range []string{"1.0.0", "1.1.0"} {
			c, err := card.Parse(visCard(a.name, version), card.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			res, err := store.Upsert(ctx, actor, catalog.UpsertInput{CardURL: url, Card: c, Source: catalog.SourceURL,
				ReceivedAt: visT0.Add(time.Duration(i*2+v) * time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			id = res.Agent.ID
		}
		f.ids[a.key], f.names[a.key] = id, a.name
		for _, col := range a.collections {
			if err := store.AddToCollection(ctx, actor, col, id); err != nil {
				t.Fatal(err)
			}
		}
		tr, _ := json.Marshal(proxy.Transcript{})
		chk, _ := json.Marshal(proxy.NewCheckRecord(nil))
		f.runs[a.key] = "run-" + a.key
		for _, r := range []catalog.Run{
			{ID: f.runs[a.key], AgentID: id, Kind: catalog.RunKindRun, Subject: "tf", State: "completed", Transcript: tr},
			{ID: "check-" + a.key, AgentID: id, Kind: catalog.RunKindCheck, Subject: "tf", State: catalog.WorksAll, Transcript: chk},
		} {
			r.CreatedAt, r.UpdatedAt = visT0, visT0
			if err := store.CreateRun(ctx, actor, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, a := range visAgents {
		if a.listing == catalog.ListingApproved {
			continue
		}
		ch := catalog.ListingChange{State: a.listing, Reason: "test"}
		if a.listing == catalog.ListingDeprecated {
			ch.Replacement = f.ids["pub"]
		}
		if _, err := store.SetListing(ctx, actor, catalog.ScopeAll, f.ids[a.key], ch); err != nil {
			t.Fatal(err)
		}
	}

	// The content scan, as the background runner makes it. Verified in one
	// pass, no card saw the names of the others: the look-alike and its
	// original are verified again once every name is known.
	runner := verify.NewRunner(verify.New(verify.Options{Names: verify.CatalogNames{Store: store}}), store, verify.RunnerOptions{})
	if _, err := runner.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"conf", "fin"} {
		raw, err := store.RawCard(ctx, catalog.ScopeAll, f.ids[k])
		if err != nil {
			t.Fatal(err)
		}
		if err := runner.VerifyStored(ctx, catalog.VerifyTarget{AgentID: f.ids[k], CardURL: visCardURL(k), Version: 2, Raw: raw}); err != nil {
			t.Fatal(err)
		}
	}

	f.e = echo.New()
	f.e.Use(withCaller)
	api.New(api.Options{Catalog: store, Runs: runs.New(runs.Options{Runner: nopRunner{}, Store: store}), Curator: store, Operator: store,
		Authorizer: callerAuthorizer{}, Logger: visLog}).Mount(f.e)
	console := web.New(web.Options{Searcher: store, Agents: store, Authorizer: callerAuthorizer{}, Logger: visLog,
		APIPath: api.BasePath, CSRFToken: func(echo.Context) string { return visCSRF },
		IndexNotReady: catalog.ErrIndexNotReady, Curator: store, Pauser: store})
	console.Mount(f.e)
	f.csrf, f.store = visCSRF, store
	return f
}

// nopRunner lets the run routes exist; the test only reads stored runs.
type nopRunner struct{ runs.Runner }

func (f *visFixture) get(t *testing.T, caller, target string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set(callerHeader, caller)
	rec := httptest.NewRecorder()
	f.e.ServeHTTP(rec, req)
	return rec
}

func TestVisibilityTable(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		f := newVisFixture(t, store)
		for _, vc := range visCallers {
			t.Run(vc.name, func(t *testing.T) {
				f.checkAgentEndpoints(t, vc)
				f.checkRelated(t, vc)
				f.checkSearch(t, vc)
				f.checkChanges(t, vc)
				f.checkCollections(t, vc)
				f.checkConsole(t, vc)
				f.checkWrites(t, vc)
			})
		}
	})
}

// checkAgentEndpoints reads every per-agent endpoint and page of every
// agent: 200 for the visible ones, 404 for the others.
func (f *visFixture) checkAgentEndpoints(t *testing.T, vc visCaller) {
	t.Helper()
	tester := vc.principal.Role.Includes(auth.Tester)
	for _, a := range visAgents {
		id := f.ids[a.key]
		want := http.StatusNotFound
		if slices.Contains(vc.see, a.key) {
			want = http.StatusOK
		}
		targets := []string{
			"/api/v1/agents/" + id, "/api/v1/agents/" + id + "/card", "/api/v1/agents/" + id + "/versions",
			"/api/v1/agents/" + id + "/versions/1", "/agents/" + id, "/agents/" + id + "/diff?from=1&to=2",
		}
		if tester {
			targets = append(targets, "/api/v1/agents/"+id+"/runs", "/api/v1/runs/"+f.runs[a.key])
		}
		for _, target := range targets {
			rec := f.get(t, vc.name, target)
			if rec.Code != want {
				t.Errorf("GET %s (%s) = %d, want %d", target, a.key, rec.Code, want)
				continue
			}
			if want == http.StatusNotFound && strings.Contains(rec.Body.String(), a.name) {
				t.Errorf("GET %s (%s): the 404 names the hidden agent", target, a.key)
			}
		}
		if want != http.StatusOK {
			continue
		}
		var d api.AgentDetail
		if err := json.Unmarshal(f.get(t, vc.name, "/api/v1/agents/"+id).Body.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		if d.Listing.State != a.listing {
			t.Errorf("%s: listing %q, want %q", a.key, d.Listing.State, a.listing)
		}
		if d.Check == nil {
			t.Errorf("%s: the latest check is missing", a.key)
		}
		var wantCols []string
		for _, c := range a.collections {
			if slices.Contains(vc.collections, c) {
				wantCols = append(wantCols, c)
			}
		}
		if !slices.Equal(d.Collections, nonNilStrings(wantCols)) {
			t.Errorf("%s: collections %v, want %v", a.key, d.Collections, wantCols)
		}
	}
}

// checkRelated: the content scan flags the look-alike and its original in
// the API's agent view and on the console's agent page, and names the
// other agent only to callers who see it: the finance-only original is
// not named to outsiders, the public look-alike to everyone who sees the
// original.
func (f *visFixture) checkRelated(t *testing.T, vc visCaller) {
	t.Helper()
	for _, pair := range [][2]string{{"conf", "fin"}, {"fin", "conf"}} {
		key, other := pair[0], pair[1]
		if !slices.Contains(vc.see, key) {
			continue
		}
		id, otherID := f.ids[key], f.ids[other]
		var wantRelated []string
		if slices.Contains(vc.see, other) {
			wantRelated = []string{otherID}
		}
		var d api.AgentDetail
		if err := json.Unmarshal(f.get(t, vc.name, "/api/v1/agents/"+id).Body.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		var rep verify.Report
		if err := json.Unmarshal(d.Verification, &rep); err != nil {
			t.Fatalf("%s: verification %s: %v", key, d.Verification, err)
		}
		i := slices.IndexFunc(rep.Content, func(cf verify.ContentFinding) bool { return cf.Code == contentscan.CodeConfusableName })
		if i < 0 {
			t.Errorf("%s: no confusable-name finding in %s", key, d.Verification)
			continue
		}
		var got []string
		for _, r := range rep.Content[i].Related {
			got = append(got, r.AgentID)
		}
		if !slices.Equal(got, wantRelated) {
			t.Errorf("API %s: the finding names %v, want %v", key, got, wantRelated)
		}
		if len(wantRelated) == 0 && (strings.Contains(string(d.Verification), otherID) || strings.Contains(string(d.Verification), f.names[other])) {
			t.Errorf("API %s: the report names the hidden %s", key, other)
		}
		body := f.get(t, vc.name, "/agents/"+id).Body.String()
		if !strings.Contains(body, contentscan.CodeConfusableName) {
			t.Errorf("console %s: the confusable-name finding is not shown", key)
		}
		for _, s := range []string{otherID, f.names[other]} {
			if got, want := strings.Contains(body, s), len(wantRelated) > 0; got != want {
				t.Errorf("console %s: names %s (%q) = %v, want %v", key, other, s, got, want)
			}
		}
	}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// checkSearch: results, total and every facet count over visible agents
// only; deprecated agents last; a hidden collection filters to nothing.
func (f *visFixture) checkSearch(t *testing.T, vc visCaller) {
	t.Helper()
	for _, target := range []string{"/api/v1/agents?limit=100", "/api/v1/agents?limit=100&q=agent+visibility"} {
		var res api.SearchResponse
		if err := json.Unmarshal(f.get(t, vc.name, target).Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range res.Items {
			got = append(got, f.key(it.ID))
		}
		if !sameSet(got, vc.see) || res.Total != len(vc.see) {
			t.Errorf("GET %s: items %v (total %d), want %v", target, got, res.Total, vc.see)
		}
		if n := len(got); n > 0 && got[n-1] != "dep" {
			t.Errorf("GET %s: deprecated agent not last: %v", target, got)
		}
		if c := facetTotal(res.Facets[catalog.FieldTag], "vis"); c != len(vc.see) {
			t.Errorf("GET %s: tag facet counts %d, want %d", target, c, len(vc.see))
		}
		wantCols := map[string]int{}
		for _, k := range vc.see {
			for _, c := range visAgentByKey(k).collections {
				if slices.Contains(vc.collections, c) {
					wantCols[c]++
				}
			}
		}
		gotCols := map[string]int{}
		for _, fc := range res.Facets[catalog.FieldCollection] {
			gotCols[fc.Value] = fc.Count
		}
		if fmt.Sprint(gotCols) != fmt.Sprint(wantCols) {
			t.Errorf("GET %s: collection facet %v, want %v", target, gotCols, wantCols)
		}
		wantListing := map[string]int{}
		if vc.principal.Role.Includes(auth.Editor) {
			for _, k := range vc.see {
				wantListing[visAgentByKey(k).listing]++
			}
		}
		gotListing := map[string]int{}
		for _, fc := range res.Facets[catalog.FieldListing] {
			gotListing[fc.Value] = fc.Count
		}
		if fmt.Sprint(gotListing) != fmt.Sprint(wantListing) {
			t.Errorf("GET %s: listing facet %v, want %v", target, gotListing, wantListing)
		}
	}
	// Filtering by a collection the caller cannot see finds nothing, even
	// the visible agents in it.
	var res api.SearchResponse
	if err := json.Unmarshal(f.get(t, vc.name, "/api/v1/agents?collection=finance").Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	want := 0
	if slices.Contains(vc.collections, "Finance") {
		for _, k := range vc.see {
			if slices.Contains(visAgentByKey(k).collections, "Finance") {
				want++
			}
		}
	}
	if res.Total != want {
		t.Errorf("collection=finance: total %d, want %d", res.Total, want)
	}
	// Asking for a state one may not see finds nothing.
	if err := json.Unmarshal(f.get(t, vc.name, "/api/v1/agents?listing=pending").Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	want = 0
	for _, k := range vc.see {
		if visAgentByKey(k).listing == catalog.ListingPending {
			want++
		}
	}
	if res.Total != want {
		t.Errorf("listing=pending: total %d, want %d", res.Total, want)
	}
}

func (f *visFixture) checkChanges(t *testing.T, vc visCaller) {
	t.Helper()
	var l api.ChangeList
	if err := json.Unmarshal(f.get(t, vc.name, "/api/v1/changes?limit=1000").Body.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ch := range l.Items {
		seen[f.key(ch.AgentID)] = true
	}
	var got []string
	for k := range seen {
		got = append(got, k)
	}
	if !sameSet(got, vc.see) {
		t.Errorf("change feed names %v, want %v", got, vc.see)
	}
}

func (f *visFixture) checkCollections(t *testing.T, vc visCaller) {
	t.Helper()
	var l api.CollectionList
	if err := json.Unmarshal(f.get(t, vc.name, "/api/v1/collections").Body.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range l.Items {
		got = append(got, c.Name)
		want := 0
		for _, k := range vc.see {
			if slices.Contains(visAgentByKey(k).collections, c.Name) {
				want++
			}
		}
		if c.Agents != want {
			t.Errorf("collection %s counts %d agents, want %d", c.Name, c.Agents, want)
		}
	}
	if !slices.Equal(got, vc.collections) {
		t.Errorf("collections %v, want %v", got, vc.collections)
	}
}

// checkConsole: the search page lists exactly the visible agents (the
// deprecated one marked), the collections page exactly the visible
// collections and members, the review page exactly the pending agents the
// editor sees.
func (f *visFixture) checkConsole(t *testing.T, vc visCaller) {
	t.Helper()
	body := f.get(t, vc.name, "/collections").Body.String()
	for _, name := range []string{"Finance", "Partners"} {
		if got, want := strings.Contains(body, name), slices.Contains(vc.collections, name); got != want {
			t.Errorf("GET /collections: shows %s = %v, want %v", name, got, want)
		}
	}
	for _, a := range visAgents {
		inVisible := slices.ContainsFunc(a.collections, func(c string) bool { return slices.Contains(vc.collections, c) })
		if got, want := strings.Contains(body, a.name), inVisible && slices.Contains(vc.see, a.key); got != want {
			t.Errorf("GET /collections: shows %s = %v, want %v", a.key, got, want)
		}
	}
	rec := f.get(t, vc.name, "/review")
	if !vc.principal.Role.Includes(auth.Editor) {
		if rec.Code != http.StatusForbidden {
			t.Errorf("GET /review = %d, want 403", rec.Code)
		}
	} else {
		for _, a := range visAgents {
			want := a.listing == catalog.ListingPending && slices.Contains(vc.see, a.key)
			if got := strings.Contains(rec.Body.String(), a.name); got != want {
				t.Errorf("GET /review: shows %s = %v, want %v", a.key, got, want)
			}
		}
	}
	if body := f.get(t, vc.name, "/").Body.String(); !strings.Contains(body, `<span class="badge warn" title="Listing">deprecated</span>`) {
		t.Error("GET /: the deprecated agent is not marked")
	}
	for _, target := range []string{"/", "/?q=agent"} {
		body := f.get(t, vc.name, target).Body.String()
		for _, a := range visAgents {
			if got, want := strings.Contains(body, a.name), slices.Contains(vc.see, a.key); got != want {
				t.Errorf("GET %s: shows %s = %v, want %v", target, a.key, got, want)
			}
		}
		if !slices.Contains(vc.collections, "Finance") && strings.Contains(body, "Finance") {
			t.Errorf("GET %s: names the Finance collection", target)
		}
	}
}

func (f *visFixture) key(id string) string {
	for k, v := range f.ids {
		if v == id {
			return k
		}
	}
	return "unknown:" + id
}

func visAgentByKey(k string) (a struct {
	key, name   string
	listing     string
	collections []string
}) {
	for _, a := range visAgents {
		if a.key == k {
			return a
		}
	}
	return a
}

func facetTotal(fcs []api.FacetCount, value string) int {
	for _, fc := range fcs {
		if fc.Value == value {
			return fc.Count
		}
	}
	return 0
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// checkWrites: an editor's writes on an agent outside their groups answer
// 404 as for a missing one (pause and resume in the API and the console,
// listing transitions), and change nothing.
func (f *visFixture) checkWrites(t *testing.T, vc visCaller) {
	t.Helper()
	if !vc.principal.Role.Includes(auth.Editor) {
		return
	}
	id := f.ids["fin"]
	want := http.StatusNotFound
	if slices.Contains(vc.see, "fin") {
		want = http.StatusOK
	}
	post := func(target, ctype, body string) int {
		req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
		req.Header.Set(callerHeader, vc.name)
		req.Header.Set("Content-Type", ctype)
		rec := httptest.NewRecorder()
		f.e.ServeHTTP(rec, req)
		return rec.Code
	}
	paused := func() bool {
		h, err := f.store.AgentHealth(context.Background(), id, visT0)
		if err != nil {
			t.Fatal(err)
		}
		return h.Paused
	}
	for _, w := range []struct{ target, ctype, body string }{
		{"/api/v1/agents/" + id + "/pause", "application/json", "{}"},
		{"/api/v1/agents/" + id + "/resume", "application/json", "{}"},
		{"/api/v1/agents/" + id + "/listing", "application/json", `{"state": "approved"}`},
	} {
		if got := post(w.target, w.ctype, w.body); got != want {
			t.Errorf("POST %s = %d, want %d", w.target, got, want)
		}
		if want == http.StatusNotFound && paused() {
			t.Errorf("POST %s paused a hidden agent", w.target)
		}
	}
	form := "csrf_token=" + f.csrf
	consoleWant := http.StatusNotFound
	if want == http.StatusOK {
		consoleWant = http.StatusSeeOther
	}
	for _, target := range []string{"/agents/" + id + "/pause", "/agents/" + id + "/resume", "/agents/" + id + "/listing"} {
		body := form
		if strings.HasSuffix(target, "/listing") {
			body += "&state=approved"
		}
		if got := post(target, "application/x-www-form-urlencoded", body); got != consoleWant {
			t.Errorf("console POST %s = %d, want %d", target, got, consoleWant)
		}
		if want == http.StatusNotFound && paused() {
			t.Errorf("console POST %s paused a hidden agent", target)
		}
	}
}
