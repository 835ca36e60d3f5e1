package ard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/ardentry"
	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

var (
	t0    = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	actor = catalog.System("test")
)

// headerAuth is an Authorizer for tests: the caller's role and groups come
// from request headers, as a bearer token's claims would.
type headerAuth struct{}

func (headerAuth) RequireRole(need auth.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p := principalOf(c.Request())
			if !p.Role.Includes(need) {
				return echo.NewHTTPError(http.StatusUnauthorized, "sign-in required")
			}
			return next(c)
		}
	}
}

func principalOf(r *http.Request) auth.Principal {
	p := auth.Principal{Role: auth.Viewer} // the anonymous role is viewer
	if role := r.Header.Get("X-Test-Role"); role != "" {
		p.Role, _ = auth.ParseRole(role)
		if role == "none" {
			p.Role = 0
		}
		p.Subject, p.Source = "u1", auth.SourceBearer
	}
	if g := r.Header.Get("X-Test-Groups"); g != "" {
		p.Groups = strings.Split(g, ",")
	}
	return p
}

// withPrincipal puts the test caller in the request context, as
// auth.Authenticator.Middleware does for every request.
func withPrincipal(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		c.SetRequest(r.WithContext(auth.WithPrincipal(r.Context(), principalOf(r), "")))
		return next(c)
	}
}

func cardJSON(name string, tags, skills, examples []string, modes string) []byte {
	var sks []map[string]any
	for i, id := range skills {
		sks = append(sks, map[string]any{"id": id, "name": id + " skill", "description": "does " + id,
			"tags": tags, "examples": examples, "inputModes": []string{modes}})
		_ = i
	}
	b, _ := json.Marshal(map[string]any{
		"name": name, "description": name + " helps with things", "url": "https://agents.example/a2a",
		"version": "1.0.0", "protocolVersion": "0.3.0", "capabilities": map[string]any{},
		"defaultInputModes": []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
		"skills": sks,
	})
	return b
}

type fixture struct {
	e     *echo.Echo
	store *catalog.Store
	ids   map[string]string // name → agent id
	urls  map[string]string // name → card URL
}

// newFixture stores agents: "open-N" approved and public; "pending" not
// yet approved; "secret" approved in the finance collection, restricted
// to the finance group.
func newFixture(t *testing.T, store *catalog.Store, open int, pub Publish) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{store: store, ids: map[string]string{}, urls: map[string]string{}}
	add := func(name, u string, raw []byte) {
		c, err := card.Parse(raw, card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		res, err := store.Upsert(ctx, actor, catalog.UpsertInput{CardURL: u, Card: c, Source: catalog.SourceURL, ReceivedAt: t0})
		if err != nil {
			t.Fatal(err)
		}
		f.ids[name], f.urls[name] = res.Agent.ID, u
	}
	for i := range open {
		tags := []string{"weather"}
		if i%2 == 1 {
			tags = []string{"finance"}
		}
		if i%3 == 0 {
			tags = append(tags, "travel")
		}
		add(fmt.Sprintf("open-%02d", i), fmt.Sprintf("https://h%d.example/agents/%d/card.json", i%3, i),
			cardJSON(fmt.Sprintf("Forecast helper %02d", i), tags, []string{fmt.Sprintf("skill-%d", i%4)},
				[]string{"what is the weather", "will it rain"}, "text/plain"))
	}
	add("pending", "https://p.example/card.json", cardJSON("Forecast pending", []string{"weather"}, []string{"x"}, nil, "text/plain"))
	add("secret", "https://s.example/card.json", cardJSON("Forecast secret", []string{"weather"}, []string{"y"}, nil, "image/png"))
	if _, err := store.SetListing(ctx, actor, catalog.ScopeAll, f.ids["pending"], catalog.ListingChange{State: catalog.ListingPending, Reason: "review"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.SaveCollection(ctx, actor, catalog.Collection{Name: "finance", Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	if err := store.AddToCollection(ctx, actor, "finance", f.ids["secret"]); err != nil {
		t.Fatal(err)
	}
	f.e = echo.New()
	f.e.Use(withPrincipal)
	New(Options{Catalog: store, Authorizer: headerAuth{}, Publish: pub, PublicURL: "https://registry.example",
		CardPath: func(id string) string { return "/api/v1/agents/" + id + "/card" },
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil))}).Mount(f.e)
	return f
}

func (f *fixture) do(t *testing.T, method, target, body string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	f.e.ServeHTTP(rec, req)
	return rec
}

func decode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	return v
}

func (f *fixture) urn(t *testing.T, name string) string {
	t.Helper()
	u, err := card.URNOf(f.urls[name])
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// callers are the scopes every read is checked under.
var callers = []struct {
	name string
	hdr  map[string]string
	sees []string // of pending, secret
}{
	{"anonymous", nil, nil},
	{"viewer", map[string]string{"X-Test-Role": "viewer"}, nil},
	{"finance viewer", map[string]string{"X-Test-Role": "viewer", "X-Test-Groups": "Finance"}, []string{"secret"}},
	{"editor", map[string]string{"X-Test-Role": "editor"}, []string{"pending"}},
	{"admin", map[string]string{"X-Test-Role": "admin"}, []string{"pending", "secret"}},
}

// TestScope: search, list, explore, lookup and the manifest show a
// caller exactly the agents the JSON API shows them, on both databases.
func TestScope(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		f := newFixture(t, store, 4, Publish{Agents: true})
		for _, c := range callers {
			want := map[string]bool{f.urn(t, "open-00"): true, f.urn(t, "open-01"): true, f.urn(t, "open-02"): true, f.urn(t, "open-03"): true}
			if c.name == "admin" || c.name == "editor" {
				// The manifest lists approved agents only, whoever asks.
			}
			for _, n := range c.sees {
				want[f.urn(t, n)] = true
			}
			got := map[string]bool{}
			rec := f.do(t, "POST", "/ard/v1/search", `{"query":{"text":"forecast"},"pageSize":100}`, c.hdr)
			for _, r := range decode[searchResponse](t, rec).Results {
				got[r.Identifier] = true
			}
			if !maps(got, want) {
				t.Errorf("%s: search found %v, want %v", c.name, keys(got), keys(want))
			}
			lr := decode[listResponse](t, f.do(t, "GET", "/ard/v1/agents?pageSize=100", "", c.hdr))
			if lr.Total != len(want) || len(lr.Items) != len(want) {
				t.Errorf("%s: list total %d items %d, want %d", c.name, lr.Total, len(lr.Items), len(want))
			}
			ex := decode[exploreResponse](t, f.do(t, "POST", "/ard/v1/explore", `{"resultType":{"facets":[{"field":"type"},{"field":"metadata.input_mode"}]}}`, c.hdr))
			if b := ex.Facets["type"].Buckets; len(b) != 1 || b[0].Count != len(want) {
				t.Errorf("%s: type facet %+v, want %d", c.name, b, len(want))
			}
			hasImage := slices.ContainsFunc(ex.Facets["metadata.input_mode"].Buckets, func(b bucket) bool { return b.Value == "image/png" })
			if hasImage != slices.Contains(c.sees, "secret") {
				t.Errorf("%s: input_mode facet %+v counts the hidden agent", c.name, ex.Facets["metadata.input_mode"].Buckets)
			}
			for _, n := range []string{"pending", "secret", "open-00"} {
				rec := f.do(t, "GET", "/ard/v1/agents/"+url.PathEscape(f.urn(t, n)), "", c.hdr)
				sees := n == "open-00" || slices.Contains(c.sees, n)
				if (rec.Code == http.StatusOK) != sees || (!sees && rec.Code != http.StatusNotFound) {
					t.Errorf("%s: lookup of %s = %d, sees %t", c.name, n, rec.Code, sees)
				}
			}
			m := decode[struct{ Entries []entry }](t, f.do(t, "GET", ManifestPath, "", c.hdr))
			var listed []string
			for _, e := range m.Entries[1:] {
				listed = append(listed, e.Identifier)
			}
			wantListed := 4
			if slices.Contains(c.sees, "secret") {
				wantListed++ // approved; pending never is published
			}
			if len(listed) != wantListed || slices.Contains(listed, f.urn(t, "pending")) {
				t.Errorf("%s: manifest lists %d agents %v, want %d", c.name, len(listed), listed, wantListed)
			}
		}
		// Without the viewer role the API asks for sign-in, in ARD's words.
		rec := f.do(t, "POST", "/ard/v1/search", `{"query":{"text":"x"}}`, map[string]string{"X-Test-Role": "none"})
		if e := decode[ErrorBody](t, rec); rec.Code != 401 || e.ErrorCode != CodeUnauthenticated {
			t.Errorf("no role: %d %+v", rec.Code, e)
		}
	})
}

func maps(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestPagingEveryAgentOnce pages search and list through every visible
// agent with small pages: each exactly once, the total right, scores on
// one scale across pages.
func TestPagingEveryAgentOnce(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		f := newFixture(t, store, 23, Publish{})
		for _, route := range []string{"search", "list"} {
			seen := map[string]int{}
			token, pages := "", 0
			for {
				var items []string
				var next string
				if route == "search" {
					body := `{"query":{"text":"forecast helper"},"pageSize":4,"pageToken":"` + token + `"}`
					rec := f.do(t, "POST", "/ard/v1/search", body, nil)
					if rec.Code != 200 {
						t.Fatalf("%s page %d: %d %s", route, pages, rec.Code, rec.Body)
					}
					r := decode[searchResponse](t, rec)
					for i, it := range r.Results {
						if pages == 0 && i == 0 && it.Score != 100 {
							t.Errorf("best result scores %d, want 100", it.Score)
						}
						if it.Score < 0 || it.Score > 100 || it.Source != "https://registry.example/ard/v1/" {
							t.Errorf("result %+v", it)
						}
						items = append(items, it.Identifier)
					}
					next = r.PageToken
				} else {
					rec := f.do(t, "GET", "/ard/v1/agents?pageSize=5&pageToken="+url.QueryEscape(token), "", nil)
					if rec.Code != 200 {
						t.Fatalf("%s page %d: %d %s", route, pages, rec.Code, rec.Body)
					}
					r := decode[listResponse](t, rec)
					if r.Total != 23 {
						t.Errorf("list total %d, want 23", r.Total)
					}
					for _, it := range r.Items {
						items = append(items, it.Identifier)
					}
					next = r.PageToken
				}
				for _, id := range items {
					seen[id]++
				}
				pages++
				if next == "" || pages > 20 {
					break
				}
				token = next
			}
			if len(seen) != 23 {
				t.Errorf("%s: %d distinct agents over %d pages, want 23", route, len(seen), pages)
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("%s: %s seen %d times", route, id, n)
				}
			}
		}
	})
}

// TestFilterSemantics: values OR within a key, keys AND across, on every
// kind of path.
func TestFilterSemantics(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		f := newFixture(t, store, 6, Publish{})
		// open-i: tags weather (even i) or finance (odd i), plus travel when
		// i%3==0; skill-(i%4); host h(i%3).example.
		names := func(idx ...int) []string {
			var out []string
			for _, i := range idx {
				out = append(out, f.urn(t, fmt.Sprintf("open-%02d", i)))
			}
			slices.Sort(out)
			return out
		}
		tests := []struct {
			name, filter string
			want         []string
		}{
			{"one tag", `{"tags":["finance"]}`, names(1, 3, 5)},
			{"tags OR", `{"tags":["finance","travel"]}`, names(0, 1, 3, 5)},
			{"tags AND capabilities", `{"tags":["finance","travel"],"capabilities":"skill-1"}`, names(1, 5)},
			{"publisher", `{"publisher":["h2.example"]}`, names(2, 5)},
			{"publisher OR", `{"publisherId":["h2.example","h0.example"]}`, names(0, 2, 3, 5)},
			{"identifier", `{"identifier":["` + f.urn(t, "open-04") + `","urn:air:nowhere.example:a2a:x"]}`, names(4)},
			{"type A2A", `{"type":"application/a2a-agent-card+json","tags":"travel"}`, names(0, 3)},
			{"type MCP", `{"type":["application/mcp-server-card+json"]}`, nil},
			{"metadata field", `{"metadata.signature":["unchecked"],"tags":"travel"}`, names(0, 3)},
			{"no trusted signature", `{"trustManifest.identity":["https://h0.example"]}`, nil},
		}
		for _, tc := range tests {
			rec := f.do(t, "POST", "/ard/v1/search", `{"query":{"text":"","filter":`+tc.filter+`},"pageSize":100}`, nil)
			if rec.Code != 200 {
				t.Errorf("%s: %d %s", tc.name, rec.Code, rec.Body)
				continue
			}
			var got []string
			for _, r := range decode[searchResponse](t, rec).Results {
				got = append(got, r.Identifier)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
			}
		}
		// GET /agents' filter expression says the same.
		rec := f.do(t, "GET", "/ard/v1/agents?filter="+url.QueryEscape(`tags = 'finance,travel' AND capabilities = "skill-1"`), "", nil)
		if r := decode[listResponse](t, rec); r.Total != 2 {
			t.Errorf("list filter: %d %s", rec.Code, rec.Body)
		}
	})
}

// TestBadInput: every mistake is a 400 INVALID_ARGUMENT (or 404 for an
// identifier that names nothing) in ARD's error body, with a message that
// says what to fix.
func TestBadInput(t *testing.T) {
	f := newFixture(t, catalogtest.SQLite(t), 3, Publish{})
	rec := f.do(t, "POST", "/ard/v1/search", `{"query":{"text":"forecast"},"pageSize":1}`, nil)
	good := decode[searchResponse](t, rec).PageToken
	if good == "" {
		t.Fatal("no page token")
	}
	tampered := []byte(good)
	tampered[3] ^= 1
	listTok := decode[listResponse](t, f.do(t, "GET", "/ard/v1/agents?pageSize=1", "", nil)).PageToken
	tests := []struct {
		name, method, target, body string
		want                       int
		code, mention              string
	}{
		{"unknown filter path", "POST", "/ard/v1/search", `{"query":{"text":"x","filter":{"colour":["red"]}}}`, 400, CodeInvalidArgument, `"colour"`},
		{"unknown metadata field", "POST", "/ard/v1/search", `{"query":{"text":"x","filter":{"metadata.colour":["red"]}}}`, 400, CodeInvalidArgument, "metadata.colour"},
		{"huge text", "POST", "/ard/v1/search", `{"query":{"text":"` + strings.Repeat("a", 501) + `"}}`, 400, CodeInvalidArgument, "500"},
		{"no text", "POST", "/ard/v1/search", `{"query":{}}`, 400, CodeInvalidArgument, "query.text"},
		{"no query", "POST", "/ard/v1/search", `{}`, 400, CodeInvalidArgument, "query.text"},
		{"unknown member", "POST", "/ard/v1/search", `{"query":{"text":"x"},"limit":3}`, 400, CodeInvalidArgument, "limit"},
		{"bad federation", "POST", "/ard/v1/search", `{"query":{"text":"x"},"federation":"all"}`, 400, CodeInvalidArgument, "federation"},
		{"negative page size", "POST", "/ard/v1/search", `{"query":{"text":"x"},"pageSize":-1}`, 400, CodeInvalidArgument, "pageSize"},
		{"garbage token", "POST", "/ard/v1/search", `{"query":{"text":"forecast"},"pageToken":"abc"}`, 400, CodeInvalidArgument, "pageToken"},
		{"tampered token", "POST", "/ard/v1/search", `{"query":{"text":"forecast"},"pageToken":"` + string(tampered) + `"}`, 400, CodeInvalidArgument, "pageToken"},
		{"token of another query", "POST", "/ard/v1/search", `{"query":{"text":"helper"},"pageToken":"` + good + `"}`, 400, CodeInvalidArgument, "pageToken"},
		{"list token on search", "POST", "/ard/v1/search", `{"query":{"text":"forecast"},"pageToken":"` + listTok + `"}`, 400, CodeInvalidArgument, "pageToken"},
		{"malformed JSON", "POST", "/ard/v1/search", `{"query":`, 400, CodeInvalidArgument, "JSON"},
		{"filter value not a string", "POST", "/ard/v1/search", `{"query":{"text":"x","filter":{"tags":[1]}}}`, 400, CodeInvalidArgument, "filter"},
		{"malformed identifier filter", "POST", "/ard/v1/search", `{"query":{"text":"x","filter":{"identifier":"urn:air:a b"}}}`, 400, CodeInvalidArgument, "identifier"},
		{"explore unknown facet", "POST", "/ard/v1/explore", `{"resultType":{"facets":[{"field":"publisher"}]}}`, 400, CodeInvalidArgument, "publisher"},
		{"explore without resultType", "POST", "/ard/v1/explore", `{}`, 400, CodeInvalidArgument, "resultType"},
		{"list unknown parameter", "GET", "/ard/v1/agents?limit=3", "", 400, CodeInvalidArgument, "limit"},
		{"list bad filter", "GET", "/ard/v1/agents?filter=" + url.QueryEscape("tags = 'a' OR tags = 'b'"), "", 400, CodeInvalidArgument, "AND"},
		{"list unknown filter path", "GET", "/ard/v1/agents?filter=" + url.QueryEscape("createdAfter = '2026-01-01'"), "", 400, CodeInvalidArgument, "createdAfter"},
		{"list path twice", "GET", "/ard/v1/agents?filter=" + url.QueryEscape("tags = 'a' AND tags = 'b'"), "", 400, CodeInvalidArgument, "twice"},
		{"list bad orderBy", "GET", "/ard/v1/agents?orderBy=updatedAt", "", 400, CodeInvalidArgument, "orderBy"},
		{"list bad page size", "GET", "/ard/v1/agents?pageSize=ten", "", 400, CodeInvalidArgument, "pageSize"},
		{"malformed identifier", "GET", "/ard/v1/agents/not-a-urn", "", 400, CodeInvalidArgument, "not-a-urn"},
		{"unknown identifier", "GET", "/ard/v1/agents/" + url.PathEscape("urn:air:nowhere.example:a2a:card"), "", 404, CodeNotFound, ""},
		{"foreign identifier", "GET", "/ard/v1/agents/urn:air:acme.com:agent:assistant", "", 404, CodeNotFound, ""},
		{"unknown route", "GET", "/ard/v1/registries", "", 404, CodeNotFound, ""},
	}
	for _, tc := range tests {
		rec := f.do(t, tc.method, tc.target, tc.body, nil)
		if rec.Code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, rec.Code, rec.Body, tc.want)
			continue
		}
		e := decode[ErrorBody](t, rec)
		if e.ErrorCode != tc.code || e.Message == "" || !strings.Contains(e.Message, tc.mention) {
			t.Errorf("%s: %+v, want %s mentioning %q", tc.name, e, tc.code, tc.mention)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", tc.name, ct)
		}
	}
	// A form post is not a search.
	req := httptest.NewRequest("POST", "/ard/v1/search", strings.NewReader(`{"query":{"text":"x"}}`))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec = httptest.NewRecorder()
	f.e.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnsupportedMediaType {
		t.Errorf("form post: %d", rec.Code)
	}
	// The page size is capped, not refused.
	if rec := f.do(t, "POST", "/ard/v1/search", `{"query":{"text":"forecast"},"pageSize":1000}`, nil); rec.Code != 200 {
		t.Errorf("page size 1000: %d %s", rec.Code, rec.Body)
	}
	// Federation modes are accepted; referrals and auto list the peers
	// (none here), none lists no referrals at all.
	for _, mode := range []string{"auto", "referrals", "none"} {
		rec := f.do(t, "POST", "/ard/v1/search", `{"query":{"text":"forecast"},"federation":"`+mode+`"}`, nil)
		if rec.Code != 200 || (mode != "none") != strings.Contains(rec.Body.String(), `"referrals":[]`) {
			t.Errorf("federation %s: %d %s", mode, rec.Code, rec.Body)
		}
	}
}

// TestLookup: exact match by identifier (urn:ai: accepted), no score or
// source, representative queries from the card, ETag and 304.
func TestLookup(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		f := newFixture(t, store, 2, Publish{})
		id := f.urn(t, "open-01")
		rec := f.do(t, "GET", "/ard/v1/agents/"+url.PathEscape(id), "", nil)
		if rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		var raw map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		if _, ok := raw["score"]; ok || raw["source"] != nil {
			t.Errorf("lookup carries score or source: %s", rec.Body)
		}
		e := decode[entry](t, rec)
		if e.Identifier != id || e.URL != f.urls["open-01"] || e.Type != ardentry.TypeA2ACard ||
			len(e.RepresentativeQueries) != 2 || e.TrustManifest != nil {
			t.Errorf("entry %+v", e)
		}
		etag := rec.Header().Get("ETag")
		if etag == "" {
			t.Fatal("no ETag")
		}
		for _, inm := range []string{etag, "W/" + etag, `"x", ` + etag, "*"} {
			if rec := f.do(t, "GET", "/ard/v1/agents/"+url.PathEscape(id), "", map[string]string{"If-None-Match": inm}); rec.Code != 304 {
				t.Errorf("If-None-Match %s: %d", inm, rec.Code)
			}
		}
		if rec := f.do(t, "GET", "/ard/v1/agents/"+url.PathEscape(id), "", map[string]string{"If-None-Match": `"other"`}); rec.Code != 200 {
			t.Errorf("other ETag: %d", rec.Code)
		}
		ai := strings.Replace(id, "urn:air:", "urn:ai:", 1)
		if rec := f.do(t, "GET", "/ard/v1/agents/"+url.PathEscape(ai), "", nil); rec.Code != 200 {
			t.Errorf("urn:ai: spelling: %d", rec.Code)
		}
		// A new version of the card changes the ETag.
		c, _ := card.Parse(cardJSON("Forecast helper renamed", []string{"x"}, []string{"s"}, nil, "text/plain"), card.DefaultLimits())
		if _, err := store.Upsert(context.Background(), actor, catalog.UpsertInput{CardURL: f.urls["open-01"], Card: c,
			Source: catalog.SourceCrawl, ReceivedAt: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		rec = f.do(t, "GET", "/ard/v1/agents/"+url.PathEscape(id), "", map[string]string{"If-None-Match": etag})
		if rec.Code != 200 || rec.Header().Get("ETag") == etag {
			t.Errorf("after a change: %d, ETag %s", rec.Code, rec.Header().Get("ETag"))
		}
	})
}

// TestManifest: the registry's own entry always; agents as --ard-publish
// says; ETag and 304; a change to the catalog changes the ETag.
func TestManifest(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		for _, tc := range []struct {
			name string
			pub  Publish
			hdr  map[string]string
			want []string
		}{
			{"none", Publish{}, nil, nil},
			{"approved", Publish{Agents: true}, nil, []string{"open-00", "open-01"}},
			{"collection, anonymous", Publish{Agents: true, Collection: "finance"}, nil, nil},
			{"collection, member", Publish{Agents: true, Collection: "Finance"}, map[string]string{"X-Test-Role": "viewer", "X-Test-Groups": "finance"}, []string{"secret"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := newFixture(t, catalogtest.SQLite(t), 2, tc.pub)
				rec := f.do(t, "GET", ManifestPath, "", tc.hdr)
				if rec.Code != 200 {
					t.Fatalf("%d %s", rec.Code, rec.Body)
				}
				var m struct {
					SpecVersion string
					Entries     []entry
				}
				m = decode[struct {
					SpecVersion string
					Entries     []entry
				}](t, rec)
				if m.SpecVersion != "1.0" || len(m.Entries) == 0 || m.Entries[0].Type != ardentry.TypeRegistry ||
					m.Entries[0].URL != "https://registry.example/ard/v1/" || len(m.Entries[0].RepresentativeQueries) < 2 {
					t.Fatalf("manifest head %+v", m)
				}
				var got, want []string
				for _, e := range m.Entries[1:] {
					got = append(got, e.Identifier)
				}
				for _, n := range tc.want {
					want = append(want, f.urn(t, n))
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("lists %v, want %v", got, want)
				}
				etag := rec.Header().Get("ETag")
				hdr := map[string]string{"If-None-Match": etag}
				for k, v := range tc.hdr {
					hdr[k] = v
				}
				if rec := f.do(t, "GET", ManifestPath, "", hdr); rec.Code != 304 || rec.Body.Len() != 0 {
					t.Errorf("If-None-Match: %d", rec.Code)
				}
				if rec.Header().Get("Cache-Control") == "" || !strings.Contains(rec.Header().Get("Vary"), "Authorization") {
					t.Errorf("caching headers %v", rec.Header())
				}
				if _, err := f.store.SetListing(context.Background(), actor, catalog.ScopeAll, f.ids["open-00"],
					catalog.ListingChange{State: catalog.ListingDeprecated, Reason: "old"}); err != nil {
					t.Fatal(err)
				}
				if rec := f.do(t, "GET", ManifestPath, "", hdr); rec.Code != 200 {
					t.Errorf("after a change: %d", rec.Code)
				}
			})
		}
		_ = store
	})
}

func TestAdvertise(t *testing.T) {
	e := echo.New()
	e.Use(Advertise)
	ok := func(c echo.Context) error { return c.String(200, "ok") }
	e.GET("/", ok)
	e.GET("/agents/:id", ok)
	e.GET("/api/v1/agents", ok)
	e.POST("/agents/:id/refresh", ok)
	for _, tc := range []struct {
		method, path string
		want         bool
	}{{"GET", "/", true}, {"GET", "/agents/x", true}, {"GET", "/api/v1/agents", false}, {"POST", "/agents/x/refresh", false}} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		got := rec.Header().Get("Link") == `</.well-known/ard.json>; rel="ard"`
		if got != tc.want {
			t.Errorf("%s %s: Link %q", tc.method, tc.path, rec.Header().Get("Link"))
		}
	}
}

type fakePeers []catalog.Source

func (p fakePeers) Peers(context.Context) ([]catalog.Source, error) { return p, nil }

// TestFederationAdvertised: the manifest's registry entry advertises the
// change feed and the registry id to federating registries, agents carry
// their provenance, and referrals and auto list the peers.
func TestFederationAdvertised(t *testing.T) {
	store := catalogtest.SQLite(t)
	f := newFixture(t, store, 2, Publish{})
	f.e = echo.New()
	f.e.Use(withPrincipal)
	New(Options{Catalog: store, PublicURL: "https://registry.example", RegistryID: "0123abcd", ChangeFeedPath: "/api/v1/changes",
		Peers: fakePeers{{PeerURL: "https://peer.example/ard/v1/", PeerName: "Peer"}}}).Mount(f.e)
	m := decode[struct{ Entries []map[string]any }](t, f.do(t, "GET", ManifestPath, "", nil))
	meta, _ := m.Entries[0]["metadata"].(map[string]any)
	if meta["change_feed"] != "https://registry.example/api/v1/changes" || meta["registry_id"] != "0123abcd" {
		t.Errorf("registry entry metadata %v", m.Entries[0]["metadata"])
	}
	l := decode[struct{ Items []map[string]any }](t, f.do(t, "GET", "/ard/v1/agents", "", nil))
	if len(l.Items) == 0 {
		t.Fatal("no agents")
	}
	for _, it := range l.Items {
		if meta, _ := it["metadata"].(map[string]any); meta["provenance"] != "registered" {
			t.Errorf("entry %v: metadata.provenance", it["identifier"])
		}
	}
	for _, mode := range []string{"referrals", "auto"} {
		rec := f.do(t, "POST", "/ard/v1/search", `{"query":{"text":"forecast"},"federation":"`+mode+`"}`, nil)
		r := decode[struct{ Referrals []referral }](t, rec)
		if len(r.Referrals) != 1 || r.Referrals[0].URL != "https://peer.example/ard/v1/" || r.Referrals[0].Type != ardentry.TypeRegistry ||
			r.Referrals[0].Identifier != "urn:air:peer.example:registry:ard" || r.Referrals[0].DisplayName != "Peer" {
			t.Errorf("%s: %s", mode, rec.Body)
		}
	}
}
