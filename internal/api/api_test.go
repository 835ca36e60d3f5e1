package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/contentscan"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/query"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/verify"
)

// apiCase is one request against a freshly mounted API. Every response is
// also checked against openapi.json (see checkConformance).
type apiCase struct {
	name   string
	method string
	target string
	body   string
	header map[string]string
	// setup adjusts the fakes before the request.
	setup      func(*fakeCatalog, *fakeRegistrar)
	wantStatus int
	// wantCode is the expected error code; empty for successes.
	wantCode string
	// check inspects the response further.
	check func(t *testing.T, rec *httptest.ResponseRecorder, cat *fakeCatalog, reg *fakeRegistrar)
}

type testEnv struct {
	e   *echo.Echo
	cat *fakeCatalog
	reg *fakeRegistrar
	ref *fakeRefresher
	log *bytes.Buffer
}

// testNow is the API's clock in tests.
var testNow = t0.Add(30 * 24 * time.Hour)

func newTestEnv(t *testing.T, mutate func(*Options)) testEnv {
	t.Helper()
	env := testEnv{e: echo.New(), cat: newFakeCatalog(), reg: &fakeRegistrar{}, log: new(bytes.Buffer)}
	env.ref = &fakeRefresher{cat: env.cat}
	opts := Options{
		Catalog:   env.cat,
		Registrar: env.reg,
		Refresher: env.ref,
		Logger:    slog.New(slog.NewTextHandler(env.log, nil)),
	}
	if mutate != nil {
		mutate(&opts)
	}
	a := New(opts)
	a.now = func() time.Time { return testNow }
	a.Mount(env.e)
	return env
}

func (env testEnv) do(t *testing.T, method, target, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	env.e.ServeHTTP(rec, req)
	checkConformance(t, method, target, body, header, rec)
	return rec
}

func runCases(t *testing.T, cases []apiCase, mutate func(*Options)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t, mutate)
			if tc.setup != nil {
				tc.setup(env.cat, env.reg)
			}
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			rec := env.do(t, method, tc.target, tc.body, tc.header)
			if rec.Code != tc.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.wantStatus, rec.Body)
			}
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
			}
			if tc.wantCode != "" {
				e := decodeError(t, rec)
				if e.Code != tc.wantCode {
					t.Errorf("error code = %q, want %q (message %q)", e.Code, tc.wantCode, e.Message)
				}
			}
			if tc.check != nil {
				tc.check(t, rec, env.cat, env.reg)
			}
		})
	}
}

func decodeError(t *testing.T, rec *httptest.ResponseRecorder) Error {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error Content-Type = %q", ct)
	}
	var body ErrorResponse
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("decoding error body: %v", err)
	}
	if body.Error.Message == "" {
		t.Error("error message is empty")
	}
	return body.Error
}

func decodeJSON[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %T: %v; body %s", v, err, rec.Body)
	}
	return v
}

func wantQuery(want catalog.Query) func(*testing.T, *httptest.ResponseRecorder, *fakeCatalog, *fakeRegistrar) {
	return func(t *testing.T, _ *httptest.ResponseRecorder, cat *fakeCatalog, _ *fakeRegistrar) {
		t.Helper()
		// Without sign-in every route is open and the caller sees
		// everything; scopes are tested in visibility_test.go.
		want.Scope = catalog.ScopeAll
		if !reflect.DeepEqual(cat.lastQuery, want) {
			t.Errorf("catalog query = %+v, want %+v", cat.lastQuery, want)
		}
	}
}

func wantNoSearch(t *testing.T, _ *httptest.ResponseRecorder, cat *fakeCatalog, _ *fakeRegistrar) {
	t.Helper()
	if cat.searched {
		t.Error("invalid request reached the catalog")
	}
}

func TestSearch(t *testing.T) {
	summary := catalog.Summary{
		ID: "a1", CardURL: "https://agent.example/.well-known/agent-card.json", Name: "Invoice agent",
		Description: "d", Version: "1", Provider: "Example", ProtocolVersions: []string{"1.0"},
		Bindings: []string{"JSONRPC"}, SecuritySchemes: []string{"oauth2"}, InputModes: []string{"application/pdf"},
		OutputModes: []string{"application/json"}, Skills: []catalog.SkillSummary{{ID: "s", Name: "S", Tags: []string{"t"}}},
		SignatureStatus: catalog.SignatureVerified, Health: catalog.HealthUp, UpdatedAt: t0, Score: 1.5,
	}
	withPage := func(p catalog.Page) func(*fakeCatalog, *fakeRegistrar) {
		return func(c *fakeCatalog, _ *fakeRegistrar) { c.page = p }
	}
	long := strings.Repeat("é", catalog.MaxQueryTextLen)
	tooManyTags := strings.Repeat("tag=x&", query.MaxFilterValues+1)

	runCases(t, []apiCase{
		{name: "defaults", target: "/api/v1/agents", wantStatus: http.StatusOK,
			check: wantQuery(catalog.Query{Limit: catalog.DefaultLimit})},
		{name: "text, limit, cursor and repeated filters",
			target:     "/api/v1/agents?q=invoice+pdf&limit=100&cursor=abc&tag=a&tag=b&input_mode=image%2F*&signature=verified&health=up",
			wantStatus: http.StatusOK,
			check: wantQuery(catalog.Query{Text: "invoice pdf", Limit: 100, Cursor: "abc", Filters: map[string][]string{
				"tag": {"a", "b"}, "input_mode": {"image/*"}, "signature": {"verified"}, "health": {"up"},
			}})},
		{name: "every filter field accepted", wantStatus: http.StatusOK,
			target: "/api/v1/agents?skill=s&tag=t&input_mode=m&output_mode=m&binding=GRPC&protocol_version=1.0&security_scheme=oauth2&provider=p&signature=unsigned&health=down&audit=no_security&severity=warning&signature_trust=pinned&publisher=acme.co.uk&publisher_verified=true&owner_team=o&classification=c&label=env:prod&works=some&listing=pending&collection=Finance&provenance=registered&policy=https-only",
			check: func(t *testing.T, _ *httptest.ResponseRecorder, c *fakeCatalog, _ *fakeRegistrar) {
				if len(c.lastQuery.Filters) != len(catalog.FilterFields) {
					t.Errorf("filters passed on: %v, want one per field %v", c.lastQuery.Filters, catalog.FilterFields)
				}
			}},
		{name: "query of exactly the maximum length in characters", target: "/api/v1/agents?q=" + url.QueryEscape(long),
			wantStatus: http.StatusOK},
		{name: "explain passed on and each hit explained",
			target: "/api/v1/agents?q=invoices&explain=true", wantStatus: http.StatusOK,
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				sum := summary
				sum.Explanation = &catalog.Explanation{Partial: true, Words: []catalog.WordMatch{
					{Word: "invoic", Matched: "invoic", How: "word", Fields: []string{"name", "tags"}}, {Word: "zzz"}}}
				c.page = catalog.Page{Items: []catalog.Summary{sum}, Total: 1}
			},
			check: func(t *testing.T, rec *httptest.ResponseRecorder, c *fakeCatalog, _ *fakeRegistrar) {
				if !c.lastQuery.Explain {
					t.Error("explain=true not passed on")
				}
				r := decodeJSON[SearchResponse](t, rec)
				want := &Explanation{Partial: true, Words: []WordMatch{
					{Word: "invoic", Matched: "invoic", How: "word", Fields: []string{"name", "tags"}}, {Word: "zzz", Fields: []string{}}}}
				if len(r.Items) != 1 || !reflect.DeepEqual(r.Items[0].Explanation, want) {
					t.Errorf("items = %+v, want explanation %+v", r.Items, want)
				}
			}},
		{name: "explain must be a boolean", target: "/api/v1/agents?explain=1", wantStatus: http.StatusBadRequest},
		{name: "suggested filters from the text, not applied, none already given",
			target: "/api/v1/agents?q=" + url.QueryEscape("contracts, accepts PDF, over gRPC") + "&binding=GRPC", wantStatus: http.StatusOK,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, c *fakeCatalog, _ *fakeRegistrar) {
				want := []SuggestedFilter{{Field: "input_mode", Value: "application/pdf", Words: "accepts PDF"}}
				if r := decodeJSON[SearchResponse](t, rec); !slices.Equal(r.SuggestedFilters, want) {
					t.Errorf("suggested_filters = %+v, want %+v", r.SuggestedFilters, want)
				}
				if len(c.lastQuery.Filters) != 1 {
					t.Errorf("filters = %v: a suggestion was applied", c.lastQuery.Filters)
				}
			}},
		{name: "empty q and cursor are absent", target: "/api/v1/agents?q=&cursor=", wantStatus: http.StatusOK,
			check: wantQuery(catalog.Query{Limit: catalog.DefaultLimit})},
		{name: "page with next cursor and facets",
			target: "/api/v1/agents?q=x",
			setup: withPage(catalog.Page{
				Items: []catalog.Summary{summary}, NextCursor: "next!", Total: 42,
				Facets: map[string][]catalog.FacetCount{"tag": {{Value: "t", Count: 3}}, "undocumented": {{Value: "v", Count: 1}}},
				Timing: catalog.SearchTiming{Embed: 750 * time.Microsecond, IndexWait: 1500 * time.Microsecond, Index: 2 * time.Millisecond, Load: 250 * time.Microsecond},
			}),
			wantStatus: http.StatusOK,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				st := rec.Header().Get("Server-Timing")
				for _, want := range []string{"embed;dur=0.75", "index-wait;dur=1.50", "index;dur=2.00", "page;dur=0.25"} {
					if !strings.Contains(st, want) {
						t.Errorf("Server-Timing %q lacks %s", st, want)
					}
				}
				if !strings.HasPrefix(st, "search;dur=") {
					t.Errorf("Server-Timing %q does not start with the search's own duration", st)
				}
				r := decodeJSON[SearchResponse](t, rec)
				if r.NextCursor == nil || *r.NextCursor != "next!" || r.Total != 42 || len(r.Items) != 1 {
					t.Errorf("response = %+v", r)
				}
				if len(r.Facets) != len(catalog.FilterFields) {
					t.Errorf("facets have %d fields, want %d: %v", len(r.Facets), len(catalog.FilterFields), r.Facets)
				}
				if got := r.Facets["tag"]; len(got) != 1 || got[0] != (FacetCount{Value: "t", Count: 3}) {
					t.Errorf("tag facet = %v", got)
				}
			}},
		{name: "last page has null cursor and empty arrays", target: "/api/v1/agents",
			setup: withPage(catalog.Page{Items: []catalog.Summary{{ID: "b", Name: "bare",
				SignatureStatus: catalog.SignatureUnchecked, Health: catalog.HealthUnknown, UpdatedAt: t0}}}),
			wantStatus: http.StatusOK,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				body := rec.Body.String()
				for _, want := range []string{`"next_cursor":null`, `"bindings":[]`, `"skills":[]`, `"tag":[]`} {
					if !strings.Contains(body, want) {
						t.Errorf("body lacks %s: %s", want, body)
					}
				}
			}},
		{name: "unknown parameter", target: "/api/v1/agents?tags=x", wantStatus: http.StatusBadRequest,
			wantCode: CodeInvalidParameter, check: wantNoSearch},
		{name: "repeated limit", target: "/api/v1/agents?limit=1&limit=2", wantStatus: http.StatusBadRequest,
			wantCode: CodeInvalidParameter, check: wantNoSearch},
		{name: "limit zero", target: "/api/v1/agents?limit=0", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "limit over max", target: "/api/v1/agents?limit=101", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "limit signed", target: "/api/v1/agents?limit=%2B5", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "limit not a number", target: "/api/v1/agents?limit=ten", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "query one character too long", target: "/api/v1/agents?q=" + url.QueryEscape(long+"x"),
			wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter, check: wantNoSearch},
		{name: "query not UTF-8", target: "/api/v1/agents?q=%ff", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "empty filter value", target: "/api/v1/agents?tag=", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "too many filter values", target: "/api/v1/agents?" + tooManyTags, wantStatus: http.StatusBadRequest,
			wantCode: CodeInvalidParameter},
		{name: "filter value too long", target: "/api/v1/agents?tag=" + strings.Repeat("x", query.MaxFilterValueLen+1),
			wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "unknown signature status", target: "/api/v1/agents?signature=trusted", wantStatus: http.StatusBadRequest,
			wantCode: CodeInvalidParameter},
		{name: "unknown health", target: "/api/v1/agents?health=ok", wantStatus: http.StatusBadRequest,
			wantCode: CodeInvalidParameter},
		{name: "malformed query string", target: "/api/v1/agents?q=%zz", wantStatus: http.StatusBadRequest,
			wantCode: CodeInvalidParameter},
		{name: "oversized cursor", target: "/api/v1/agents?cursor=" + strings.Repeat("c", query.MaxCursorLen+1),
			wantStatus: http.StatusBadRequest, wantCode: CodeInvalidCursor, check: wantNoSearch},
		{name: "catalog rejects cursor", target: "/api/v1/agents?cursor=stale",
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				c.searchErr = fmt.Errorf("decoding: %w", catalog.ErrInvalidCursor)
			},
			wantStatus: http.StatusBadRequest, wantCode: CodeInvalidCursor},
		{name: "catalog rejects query", target: "/api/v1/agents?q=x",
			setup:      func(c *fakeCatalog, _ *fakeRegistrar) { c.searchErr = fmt.Errorf("%w: bad", catalog.ErrInvalidQuery) },
			wantStatus: http.StatusBadRequest, wantCode: CodeInvalidQuery},
		{name: "index still being built", target: "/api/v1/agents?q=x",
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				c.searchErr = fmt.Errorf("searching: %w", catalog.ErrIndexNotReady)
			},
			wantStatus: http.StatusServiceUnavailable, wantCode: CodeUnavailable,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if got := rec.Header().Get("Retry-After"); got != indexRetryAfter {
					t.Errorf("Retry-After = %q, want %q", got, indexRetryAfter)
				}
			}},
		{name: "catalog failure is internal and hides details", target: "/api/v1/agents",
			setup:      func(c *fakeCatalog, _ *fakeRegistrar) { c.err = errors.New("SELECT * FROM secrets: disk I/O error") },
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if strings.Contains(rec.Body.String(), "SELECT") {
					t.Errorf("internal detail leaked: %s", rec.Body)
				}
			}},
	}, nil)
}

func TestSearchErrorNamesParameter(t *testing.T) {
	for target, want := range map[string]string{
		"/api/v1/agents?tags=x":    "tags",
		"/api/v1/agents?limit=0":   "limit",
		"/api/v1/agents?q=a&q=b":   "q",
		"/api/v1/agents?health=ok": "health",
		"/api/v1/agents?cursor=" + strings.Repeat("c", query.MaxCursorLen+1): "cursor",
	} {
		env := newTestEnv(t, nil)
		rec := env.do(t, http.MethodGet, target, "", nil)
		if e := decodeError(t, rec); e.Parameter != want {
			t.Errorf("%s: parameter = %q, want %q", target, e.Parameter, want)
		}
	}
}

func TestGetAgent(t *testing.T) {
	runCases(t, []apiCase{
		{name: "full card", target: "/api/v1/agents/a1", wantStatus: http.StatusOK,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, cat *fakeCatalog, _ *fakeRegistrar) {
				if cat.views != 1 {
					t.Errorf("%d catalog reads of the agent view, want 1 (one transaction)", cat.views)
				}
				d := decodeJSON[AgentDetail](t, rec)
				if d.ID != "a1" || d.Signature != catalog.SignatureVerified || d.Health != catalog.HealthUp || d.CurrentVersion != 2 {
					t.Errorf("detail = %+v", d)
				}
				if !d.FetchedAt.Equal(t0.Add(3 * time.Hour)) {
					t.Errorf("fetched_at = %v", d.FetchedAt)
				}
				got, _ := json.Marshal(d.Findings)
				want, _ := json.Marshal(fullCard().Findings)
				if string(got) != string(want) || !reflect.DeepEqual(d.Card.Findings, d.Findings) {
					t.Errorf("findings = %+v, card findings %+v", d.Findings, d.Card.Findings)
				}
				if d.Versions.Count != 2 || d.Versions.Latest == nil || d.Versions.Latest.Number != 2 {
					t.Errorf("versions = %+v", d.Versions)
				}
				// encoding/json escapes <, > and & so the text cannot become markup.
				if strings.Contains(rec.Body.String(), "<script>") {
					t.Error("markup from the card is not escaped")
				}
			}},
		{name: "sparse card arrays are empty, not null", target: "/api/v1/agents/sparse", wantStatus: http.StatusOK,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				// The health report's nulls are documented ("never checked"),
				// and so is the null of a version not verified yet.
				var fields map[string]json.RawMessage
				if err := json.Unmarshal(rec.Body.Bytes(), &fields); err != nil {
					t.Fatal(err)
				}
				if _, ok := fields["health_report"]; !ok {
					t.Error("detail lacks health_report")
				}
				if v, ok := fields["verification"]; !ok || string(v) != "null" {
					t.Errorf("verification = %s, want null", v)
				}
				delete(fields, "health_report")
				delete(fields, "verification")
				for name, v := range fields {
					if strings.Contains(string(v), "null") {
						t.Errorf("%s has null: %s", name, v)
					}
				}
			}},
		{name: "verification report of the current version", target: "/api/v1/agents/a1", wantStatus: http.StatusOK,
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				c.verifications = map[string]*catalog.Verification{"a1": {Version: 2, Status: catalog.SignatureVerified, Report: sampleReport(t)}}
			},
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				var d struct {
					Verification *verify.Report `json:"verification"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
					t.Fatal(err)
				}
				if d.Verification == nil || d.Verification.Signatures.Status != verify.StatusVerified ||
					len(d.Verification.Signatures.Entries) != 2 || d.Verification.Security[0].Code != verify.FindingAPIKeyInQuery {
					t.Errorf("verification = %+v", d.Verification)
				}
			}},
		{name: "report of an older version is not shown", target: "/api/v1/agents/a1", wantStatus: http.StatusOK,
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				c.verifications = map[string]*catalog.Verification{"a1": {Version: 1, Status: catalog.SignatureVerified, Report: sampleReport(t)}}
			},
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if d := decodeJSON[AgentDetail](t, rec); string(d.Verification) != "null" {
					t.Errorf("verification = %s, want null", d.Verification)
				}
			}},
		{name: "related agents the caller does not see are not named", target: "/api/v1/agents/a1", wantStatus: http.StatusOK,
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				c.verifications = map[string]*catalog.Verification{"a1": {Version: 2, Status: catalog.SignatureVerified, Report: relatedReport(t)}}
				c.hidden = map[string]bool{"nocard": true}
			},
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				d := decodeJSON[AgentDetail](t, rec)
				var got, stored map[string]json.RawMessage
				if err := json.Unmarshal(d.Verification, &got); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(relatedReport(t), &stored); err != nil {
					t.Fatal(err)
				}
				for k, v := range stored {
					if k != "content_findings" && !bytes.Equal(got[k], v) {
						t.Errorf("%s changed: %s, want %s", k, got[k], v)
					}
				}
				var fs []verify.ContentFinding
				if err := json.Unmarshal(got["content_findings"], &fs); err != nil {
					t.Fatal(err)
				}
				// The second finding keeps its place with no agent named.
				if len(fs) != 2 || fmt.Sprint(fs[0].Related) != "[{sparse Sparse}]" || len(fs[1].Related) != 0 || fs[1].Code != contentscan.CodeConfusableProvider {
					t.Errorf("content findings %+v", fs)
				}
				for _, hidden := range []string{"nocard", "ghost", "Hidden name"} {
					if strings.Contains(string(d.Verification), hidden) {
						t.Errorf("the report names %q", hidden)
					}
				}
			}},
		{name: "a report naming only visible agents is served as stored", target: "/api/v1/agents/a1", wantStatus: http.StatusOK,
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				c.verifications = map[string]*catalog.Verification{"a1": {Version: 2, Status: catalog.SignatureVerified, Report: relatedReport(t)}}
				c.agents["ghost"] = catalog.Agent{ID: "ghost"}
			},
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				var buf bytes.Buffer
				if err := json.Compact(&buf, relatedReport(t)); err != nil {
					t.Fatal(err)
				}
				if d := decodeJSON[AgentDetail](t, rec); !bytes.Equal(d.Verification, buf.Bytes()) {
					t.Errorf("verification = %s, want the stored %s", d.Verification, buf.Bytes())
				}
			}},
		{name: "related agents check failure is internal", target: "/api/v1/agents/a1",
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				c.verifications = map[string]*catalog.Verification{"a1": {Version: 2, Status: catalog.SignatureVerified, Report: relatedReport(t)}}
				c.visibleErr = errors.New("db down")
			},
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal},
		{name: "verification read failure is internal", target: "/api/v1/agents/a1",
			setup:      func(c *fakeCatalog, _ *fakeRegistrar) { c.verificationErr = errors.New("disk I/O error") },
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal},
		{name: "unknown agent", target: "/api/v1/agents/nope", wantStatus: http.StatusNotFound, wantCode: CodeNotFound,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if !strings.Contains(rec.Body.String(), "agent nope not found") {
					t.Errorf("message does not name the agent: %s", rec.Body)
				}
			}},
		{name: "escaped id is unescaped once", target: "/api/v1/agents/a%311", wantStatus: http.StatusNotFound,
			wantCode: CodeNotFound},
		{name: "overlong id", target: "/api/v1/agents/" + strings.Repeat("x", maxIDLen+1), wantStatus: http.StatusNotFound,
			wantCode: CodeNotFound},
		{name: "agent without parsed card", target: "/api/v1/agents/nocard", wantStatus: http.StatusInternalServerError,
			wantCode: CodeInternal},
		{name: "catalog failure", target: "/api/v1/agents/a1",
			setup:      func(c *fakeCatalog, _ *fakeRegistrar) { c.err = errors.New("db down") },
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal},
		{name: "versions failure", target: "/api/v1/agents/a1",
			setup:      func(c *fakeCatalog, _ *fakeRegistrar) { c.versionsErr = errors.New("db down") },
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal},
		{name: "removed between reads", target: "/api/v1/agents/a1",
			setup:      func(c *fakeCatalog, _ *fakeRegistrar) { c.versionsErr = catalog.ErrNotFound },
			wantStatus: http.StatusNotFound, wantCode: CodeNotFound},
	}, nil)
}

func checkRaw(want string) func(*testing.T, *httptest.ResponseRecorder, *fakeCatalog, *fakeRegistrar) {
	return func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
		t.Helper()
		if got := rec.Body.String(); got != want {
			t.Errorf("body = %q, want the raw bytes %q", got, want)
		}
		h := rec.Header()
		if got := h.Get("Content-Type"); got != "application/json" {
			t.Errorf("Content-Type = %q", got)
		}
		if got := h.Get("Content-Security-Policy"); got != "default-src 'none'" {
			t.Errorf("Content-Security-Policy = %q", got)
		}
		if got, want := h.Get("ETag"), etagOf(want); got != want {
			t.Errorf("ETag = %q, want %q", got, want)
		}
	}
}

func etagOf(raw string) string {
	return `"` + version(1, raw).SHA256 + `"`
}

func wantEmptyBody(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
	t.Helper()
	if rec.Body.Len() != 0 {
		t.Errorf("304 has a body: %q", rec.Body)
	}
	if rec.Header().Get("ETag") == "" {
		t.Error("304 lacks ETag")
	}
}

func TestRawCard(t *testing.T) {
	runCases(t, []apiCase{
		{name: "current bytes verbatim", target: "/api/v1/agents/a1/card", wantStatus: http.StatusOK, check: checkRaw(fullRaw)},
		{name: "If-None-Match hit", target: "/api/v1/agents/a1/card", header: map[string]string{"If-None-Match": etagOf(fullRaw)},
			wantStatus: http.StatusNotModified, check: wantEmptyBody},
		{name: "If-None-Match weak in a list", target: "/api/v1/agents/a1/card",
			header:     map[string]string{"If-None-Match": `"other", W/` + etagOf(fullRaw)},
			wantStatus: http.StatusNotModified, check: wantEmptyBody},
		{name: "If-None-Match star", target: "/api/v1/agents/a1/card", header: map[string]string{"If-None-Match": "*"},
			wantStatus: http.StatusNotModified, check: wantEmptyBody},
		{name: "If-None-Match of the previous version", target: "/api/v1/agents/a1/card",
			header:     map[string]string{"If-None-Match": etagOf(fullRawV1)},
			wantStatus: http.StatusOK, check: checkRaw(fullRaw)},
		{name: "unknown agent", target: "/api/v1/agents/nope/card", wantStatus: http.StatusNotFound, wantCode: CodeNotFound,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if rec.Header().Get("ETag") != "" {
					t.Error("error carries an ETag")
				}
			}},
		{name: "catalog failure", target: "/api/v1/agents/a1/card",
			setup:      func(c *fakeCatalog, _ *fakeRegistrar) { c.err = errors.New("db down") },
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal},
	}, nil)
}

func TestVersions(t *testing.T) {
	runCases(t, []apiCase{
		// The order is the catalog's: TestVersionsNewestFirst reads it
		// from the real one.
		{name: "list", target: "/api/v1/agents/a1/versions", wantStatus: http.StatusOK,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if l := decodeJSON[VersionList](t, rec); len(l.Items) != 2 {
					t.Errorf("items = %+v", l.Items)
				}
			}},
		{name: "list of unknown agent", target: "/api/v1/agents/nope/versions", wantStatus: http.StatusNotFound, wantCode: CodeNotFound},
		{name: "empty list means unknown agent", target: "/api/v1/agents/empty/versions", wantStatus: http.StatusNotFound,
			wantCode: CodeNotFound},
		{name: "list failure", target: "/api/v1/agents/a1/versions",
			setup:      func(c *fakeCatalog, _ *fakeRegistrar) { c.err = errors.New("db down") },
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal},
		{name: "old version verbatim", target: "/api/v1/agents/a1/versions/1", wantStatus: http.StatusOK, check: checkRaw(fullRawV1)},
		{name: "current version verbatim", target: "/api/v1/agents/a1/versions/2", wantStatus: http.StatusOK, check: checkRaw(fullRaw)},
		{name: "version If-None-Match", target: "/api/v1/agents/a1/versions/1",
			header: map[string]string{"If-None-Match": etagOf(fullRawV1)}, wantStatus: http.StatusNotModified, check: wantEmptyBody},
		{name: "unknown version", target: "/api/v1/agents/a1/versions/3", wantStatus: http.StatusNotFound, wantCode: CodeNotFound},
		{name: "version of unknown agent", target: "/api/v1/agents/nope/versions/1", wantStatus: http.StatusNotFound, wantCode: CodeNotFound},
		{name: "version zero", target: "/api/v1/agents/a1/versions/0", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "negative version", target: "/api/v1/agents/a1/versions/-1", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "signed version", target: "/api/v1/agents/a1/versions/+1", wantStatus: http.StatusBadRequest, wantCode: CodeInvalidParameter},
		{name: "version not a number", target: "/api/v1/agents/a1/versions/latest", wantStatus: http.StatusBadRequest,
			wantCode: CodeInvalidParameter},
		{name: "version overflows int", target: "/api/v1/agents/a1/versions/99999999999999999999", wantStatus: http.StatusBadRequest,
			wantCode: CodeInvalidParameter},
		{name: "version failure", target: "/api/v1/agents/a1/versions/1",
			setup:      func(c *fakeCatalog, _ *fakeRegistrar) { c.err = errors.New("db down") },
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal},
	}, nil)
}

func TestRegister(t *testing.T) {
	jsonCT := map[string]string{"Content-Type": "application/json"}
	registered := func(created bool) func(*fakeCatalog, *fakeRegistrar) {
		return func(c *fakeCatalog, r *fakeRegistrar) {
			r.res = catalog.UpsertResult{Agent: c.agents["a1"], Created: created, NewVersion: created}
		}
	}
	failing := func(err error) func(*fakeCatalog, *fakeRegistrar) {
		return func(_ *fakeCatalog, r *fakeRegistrar) { r.err = err }
	}
	wantLocation := func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, reg *fakeRegistrar) {
		t.Helper()
		if got := rec.Header().Get("Location"); got != "/api/v1/agents/a1" {
			t.Errorf("Location = %q", got)
		}
		if reg.input != "https://agent.example" {
			t.Errorf("registrar got %q", reg.input)
		}
		if d := decodeJSON[AgentDetail](t, rec); d.ID != "a1" || d.Versions.Count != 2 {
			t.Errorf("detail = %+v", d)
		}
	}
	wantNotCalled := func(t *testing.T, _ *httptest.ResponseRecorder, _ *fakeCatalog, reg *fakeRegistrar) {
		t.Helper()
		if reg.input != "" {
			t.Errorf("registrar called with %q", reg.input)
		}
	}
	blocked := &safehttp.BlockedError{Host: "intranet.example", IP: netip.MustParseAddr("10.1.2.3"), Reason: "private (RFC 1918)"}
	parseErr := &card.ParseError{Code: card.CodeDuplicateKey, Path: "$.name", Message: `key "name" repeated`}

	runCases(t, []apiCase{
		{name: "created", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":" https://agent.example "}`, setup: registered(true), wantStatus: http.StatusCreated, check: wantLocation},
		{name: "already catalogued", method: http.MethodPost, target: "/api/v1/agents",
			header: map[string]string{"Content-Type": "application/json; charset=utf-8"},
			body:   `{"url":"https://agent.example"}`, setup: registered(false), wantStatus: http.StatusOK, check: wantLocation},
		{name: "no content type", method: http.MethodPost, target: "/api/v1/agents", body: `{"url":"https://agent.example"}`,
			wantStatus: http.StatusUnsupportedMediaType, wantCode: CodeUnsupportedMediaType, check: wantNotCalled},
		{name: "form content type", method: http.MethodPost, target: "/api/v1/agents",
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: "url=https://agent.example",
			wantStatus: http.StatusUnsupportedMediaType, wantCode: CodeUnsupportedMediaType, check: wantNotCalled},
		{name: "malformed JSON", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT, body: `{"url":`,
			wantStatus: http.StatusBadRequest, wantCode: CodeInvalidBody, check: wantNotCalled},
		{name: "not an object", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT, body: `["https://agent.example"]`,
			wantStatus: http.StatusBadRequest, wantCode: CodeInvalidBody, check: wantNotCalled},
		{name: "unknown field", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":"https://agent.example","force":true}`, wantStatus: http.StatusBadRequest, wantCode: CodeInvalidBody,
			check: wantNotCalled},
		{name: "trailing data", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":"https://agent.example"} {}`, wantStatus: http.StatusBadRequest, wantCode: CodeInvalidBody, check: wantNotCalled},
		{name: "missing url", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT, body: `{}`,
			wantStatus: http.StatusBadRequest, wantCode: CodeInvalidBody, check: wantNotCalled},
		{name: "blank url", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT, body: `{"url":"  "}`,
			wantStatus: http.StatusBadRequest, wantCode: CodeInvalidBody, check: wantNotCalled},
		{name: "body over 64 KiB", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body:       `{"url":"https://agent.example/` + strings.Repeat("a", maxRegisterBody) + `"}`,
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: CodePayloadTooLarge, check: wantNotCalled},
		{name: "url too long", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body:       `{"url":"https://agent.example/` + strings.Repeat("a", crawler.MaxInputURLLength) + `"}`,
			wantStatus: http.StatusUnprocessableEntity, wantCode: CodeInvalidURL, check: wantNotCalled},
		{name: "unreadable card", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":"https://agent.example"}`, setup: failing(fmt.Errorf("parsing card: %w", parseErr)),
			wantStatus: http.StatusUnprocessableEntity, wantCode: CodeInvalidCard,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				e := decodeJSON[ErrorResponse](t, rec).Error
				if e.ParseCode != card.CodeDuplicateKey || e.Path != "$.name" {
					t.Errorf("error = %+v", e)
				}
			}},
		{name: "blocked address", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":"https://intranet.example"}`,
			setup: failing(fmt.Errorf("registering: %w", &crawler.FetchError{Class: crawler.ClassBlockedAddress,
				URL: "https://intranet.example/.well-known/agent-card.json", Err: fmt.Errorf("dial: %w", blocked)})),
			wantStatus: http.StatusUnprocessableEntity, wantCode: CodeBlockedAddress,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				e := decodeJSON[ErrorResponse](t, rec).Error
				if !strings.Contains(e.Message, "--allow-networks") || !strings.Contains(e.Message, "REGISTRY_ALLOW_NETWORKS") {
					t.Errorf("message does not tell the operator how to allow it: %q", e.Message)
				}
				if strings.Contains(e.Message, "10.1.2.3") {
					t.Errorf("message reveals the resolved internal address: %q", e.Message)
				}
				if e.URL != "https://intranet.example/.well-known/agent-card.json" || e.Class != crawler.ClassBlockedAddress {
					t.Errorf("error = %+v", e)
				}
			}},
		{name: "card not found", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":"https://agent.example"}`,
			setup: failing(fmt.Errorf("registering: %w", &crawler.FetchError{Class: crawler.ClassHTTP404,
				URL: "https://agent.example/.well-known/agent.json", Status: http.StatusNotFound,
				Err: fmt.Errorf("%w: server answered 404 Not Found", crawler.ErrHTTPStatus)})),
			wantStatus: http.StatusUnprocessableEntity, wantCode: CodeFetchFailed,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				e := decodeJSON[ErrorResponse](t, rec).Error
				if e.Class != crawler.ClassHTTP404 || e.HTTPStatus != http.StatusNotFound ||
					e.URL != "https://agent.example/.well-known/agent.json" ||
					!strings.Contains(e.Message, "agent.example answered HTTP 404") {
					t.Errorf("error = %+v", e)
				}
			}},
		{name: "status no registry lists", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":"https://agent.example"}`,
			setup: failing(&crawler.FetchError{Class: crawler.ClassHTTP5xx, URL: "https://agent.example/.well-known/agent-card.json",
				Status: 999, Err: fmt.Errorf("%w: server answered 999", crawler.ErrHTTPStatus)}),
			wantStatus: http.StatusUnprocessableEntity, wantCode: CodeFetchFailed,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if e := decodeJSON[ErrorResponse](t, rec).Error; e.HTTPStatus != 999 {
					t.Errorf("error = %+v", e)
				}
			}},
		{name: "fetch timed out", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":"https://agent.example"}`,
			setup: failing(&crawler.FetchError{Class: crawler.ClassTimeout, URL: "https://agent.example/.well-known/agent-card.json",
				Err: context.DeadlineExceeded}),
			wantStatus: http.StatusUnprocessableEntity, wantCode: CodeFetchFailed,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if e := decodeJSON[ErrorResponse](t, rec).Error; e.Class != crawler.ClassTimeout || e.HTTPStatus != 0 {
					t.Errorf("error = %+v", e)
				}
			}},
		{name: "registrar refuses the URL", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":"gopher://agent.example"}`,
			setup: failing(fmt.Errorf("registering: %w", &crawler.FetchError{Class: crawler.ClassInvalidURL, URL: "gopher://agent.example",
				Err: fmt.Errorf("%w: scheme must be http or https", crawler.ErrInvalidURL)})),
			wantStatus: http.StatusUnprocessableEntity, wantCode: CodeInvalidURL,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if e := decodeJSON[ErrorResponse](t, rec).Error; e.Message != "invalid card URL: scheme must be http or https" {
					t.Errorf("message = %q", e.Message)
				}
			}},
		{name: "redirect to file: blames the server, not the URL", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":"https://agent.example"}`,
			setup: failing(&crawler.FetchError{Class: crawler.ClassRedirect, URL: "https://agent.example/.well-known/agent-card.json",
				Err: fmt.Errorf("get: %w: %w", safehttp.ErrRedirectRefused, safehttp.ErrUnsupportedScheme)}),
			wantStatus: http.StatusUnprocessableEntity, wantCode: CodeFetchFailed,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if e := decodeJSON[ErrorResponse](t, rec).Error; e.Class != crawler.ClassRedirect || e.Parameter != "" {
					t.Errorf("error = %+v, want class redirect and no parameter blamed", e)
				}
			}},
		{name: "body of the wrong type names no Go type", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":5}`, wantStatus: http.StatusBadRequest, wantCode: CodeInvalidBody,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if m := decodeJSON[ErrorResponse](t, rec).Error.Message; strings.Contains(m, "api.") || strings.Contains(m, "RegisterRequest") {
					t.Errorf("message %q names a Go type", m)
				}
			}},
		{name: "blocked without detail", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":"https://intranet.example"}`, setup: failing(&crawler.FetchError{Class: crawler.ClassBlockedAddress,
				URL: "https://intranet.example/.well-known/agent-card.json", Err: fmt.Errorf("dial: %w", safehttp.ErrBlockedAddress)}),
			wantStatus: http.StatusUnprocessableEntity, wantCode: CodeBlockedAddress},
		{name: "unsupported scheme", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":"ftp://agent.example"}`, setup: failing(&crawler.FetchError{Class: crawler.ClassInvalidURL, URL: "ftp://agent.example",
				Err: fmt.Errorf("%w: scheme must be http or https", crawler.ErrInvalidURL)}),
			wantStatus: http.StatusUnprocessableEntity, wantCode: CodeInvalidURL},
		{name: "registrar fault", method: http.MethodPost, target: "/api/v1/agents", header: jsonCT,
			body: `{"url":"https://agent.example"}`, setup: failing(errors.New("UPDATE agents: database is locked")),
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if strings.Contains(rec.Body.String(), "database") {
					t.Errorf("internal detail leaked: %s", rec.Body)
				}
			}},
	}, nil)
}

func TestRegisterReadOnly(t *testing.T) {
	env := newTestEnv(t, func(o *Options) { o.Registrar = nil })
	rec := env.do(t, http.MethodPost, "/api/v1/agents", `{"url":"https://agent.example"}`,
		map[string]string{"Content-Type": "application/json"})
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("status = %d, want 405", rec.Code)
	}
	if e := decodeError(t, rec); e.Code != CodeMethodNotAllowed {
		t.Errorf("code = %q", e.Code)
	}
}

func TestRouting(t *testing.T) {
	runCases(t, []apiCase{
		{name: "unknown path", target: "/api/v1/nope", wantStatus: http.StatusNotFound, wantCode: CodeNotFound},
		{name: "base path", target: "/api/v1", wantStatus: http.StatusNotFound, wantCode: CodeNotFound},
		{name: "too deep", target: "/api/v1/agents/a1/versions/1/x", wantStatus: http.StatusNotFound, wantCode: CodeNotFound},
		{name: "method not allowed", method: http.MethodDelete, target: "/api/v1/agents", wantStatus: http.StatusMethodNotAllowed,
			wantCode: CodeMethodNotAllowed,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if allow := rec.Header().Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
					t.Errorf("Allow = %q", allow)
				}
			}},
		{name: "method not allowed on agent", method: http.MethodPut, target: "/api/v1/agents/a1",
			wantStatus: http.StatusMethodNotAllowed, wantCode: CodeMethodNotAllowed},
		{name: "openapi document", target: "/api/v1/openapi.json", wantStatus: http.StatusOK,
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				if !bytes.Equal(rec.Body.Bytes(), openAPIDoc) {
					t.Error("served document differs from the embedded one")
				}
			}},
	}, nil)
}

// The console may register a catch-all route and its own error handler;
// neither may take over API paths, and the API must not take over theirs.
func TestMountCoexistsWithOtherRoutes(t *testing.T) {
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) { _ = c.String(599, "console error") }
	e.GET("/*", func(c echo.Context) error { return c.String(http.StatusOK, "console page") })
	e.GET("/boom", func(echo.Context) error { return errors.New("console fault") })
	New(Options{Catalog: newFakeCatalog(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Mount(e)

	for _, tc := range []struct {
		target     string
		wantStatus int
		wantBody   string
	}{
		{"/api/v1/nope", http.StatusNotFound, `"code":"not_found"`},
		{"/api/v1/agents/a1/nope", http.StatusNotFound, `"code":"not_found"`},
		{"/about", http.StatusOK, "console page"},
		{"/boom", 599, "console error"},
		{"/api/v10", http.StatusOK, "console page"},
	} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
		if rec.Code != tc.wantStatus || !strings.Contains(rec.Body.String(), tc.wantBody) {
			t.Errorf("GET %s = %d %q, want %d containing %q", tc.target, rec.Code, rec.Body, tc.wantStatus, tc.wantBody)
		}
	}
}

func TestErrorHandlerMapsHTTPErrors(t *testing.T) {
	for _, tc := range []struct {
		err        error
		wantStatus int
		wantCode   string
		wantMsg    string
	}{
		{echo.NewHTTPError(http.StatusUnauthorized, "token expired"), http.StatusUnauthorized, CodeUnauthorized, "token expired"},
		{echo.ErrTooManyRequests, http.StatusTooManyRequests, CodeTooManyRequests, "Too Many Requests"},
		{echo.NewHTTPError(http.StatusTeapot), http.StatusTeapot, CodeClientError, "I'm a teapot"},
		{echo.ErrServiceUnavailable, http.StatusServiceUnavailable, CodeUnavailable, "service unavailable, try again later"},
		{echo.NewHTTPError(http.StatusInternalServerError, "pq: relation does not exist"), http.StatusInternalServerError,
			CodeInternal, "internal error"},
		{echo.NewHTTPError(http.StatusBadGateway).SetInternal(echo.NewHTTPError(http.StatusForbidden, "inner")),
			http.StatusForbidden, CodeForbidden, "inner"},
		{fmt.Errorf("wrapped: %w", echo.ErrUnauthorized), http.StatusUnauthorized, CodeUnauthorized, "Unauthorized"},
	} {
		env := newTestEnv(t, func(o *Options) {
			o.Authorizer = authorizerFunc(func(auth.Role) echo.MiddlewareFunc {
				return func(echo.HandlerFunc) echo.HandlerFunc {
					return func(echo.Context) error { return tc.err }
				}
			})
		})
		// Not env.do: middleware may answer statuses the document does not
		// list (418 here), so only the body shape is checked.
		req := httptest.NewRequest(http.MethodPost, "/api/v1/agents", strings.NewReader(`{"url":"https://agent.example"}`))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		checkErrorSchema(t, rec.Body.Bytes())
		if rec.Code != tc.wantStatus {
			t.Errorf("%v: status = %d, want %d", tc.err, rec.Code, tc.wantStatus)
			continue
		}
		if e := decodeError(t, rec); e.Code != tc.wantCode || e.Message != tc.wantMsg {
			t.Errorf("%v: error = %+v, want %s %q", tc.err, e, tc.wantCode, tc.wantMsg)
		}
	}
}

func TestInternalErrorIsLogged(t *testing.T) {
	env := newTestEnv(t, nil)
	env.cat.err = errors.New("disk full")
	env.do(t, http.MethodGet, "/api/v1/agents/a1", "", nil)
	if !strings.Contains(env.log.String(), "disk full") {
		t.Errorf("log lacks the cause: %q", env.log)
	}
}

// OPTIONS is not in the document (CORS middleware, if any, answers it), so
// it is checked outside the conformance harness.
func TestOptionsListsMethods(t *testing.T) {
	env := newTestEnv(t, nil)
	rec := httptest.NewRecorder()
	env.e.ServeHTTP(rec, httptest.NewRequest(http.MethodOptions, "/api/v1/agents", nil))
	if rec.Code != http.StatusNoContent {
		t.Fatalf("status = %d, want 204", rec.Code)
	}
	if allow := rec.Header().Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Errorf("Allow = %q", allow)
	}
}

// sampleReport is a verify.Report with every part filled, as JSON: the
// document must accept what the verifier really writes.
// relatedReport is a report whose content findings name a visible agent
// (sparse), one the fake hides (nocard) and an unknown one (ghost).
func relatedReport(t *testing.T) json.RawMessage {
	t.Helper()
	var rep verify.Report
	if err := json.Unmarshal(sampleReport(t), &rep); err != nil {
		t.Fatal(err)
	}
	rep.Content = []verify.ContentFinding{
		{Code: contentscan.CodeConfusableName, Severity: verify.SeverityWarning, Path: "$.name", Message: "m", Why: "w",
			Related: []contentscan.Related{{AgentID: "sparse", Text: "Sparse"}, {AgentID: "nocard", Text: "Hidden name"}}},
		{Code: contentscan.CodeConfusableProvider, Severity: verify.SeverityWarning, Path: "$.provider.organization", Message: "m", Why: "w",
			Related: []contentscan.Related{{AgentID: "ghost", Text: "Ghost"}}},
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sampleReport(t *testing.T) json.RawMessage {
	t.Helper()
	signer := &verify.Signer{KID: "k1", Thumbprint: "tp", Source: verify.KeySourcePinned, KeyType: "EC", Curve: "P-256", Bits: 256}
	rep := verify.Report{
		CardURL:   "https://agent.example.com/.well-known/agent-card.json",
		Origins:   []string{"https://agent.example.com"},
		CheckedAt: t0,
		Signatures: verify.SignatureReport{Status: verify.StatusVerified, Signer: signer, Rotation: false,
			Entries: []verify.SignatureResult{
				{Index: 0, Result: verify.ResultVerified, Alg: "ES256", KID: "k1", Typ: "JOSE", Signer: signer,
					Form: verify.FormJSSDK, UnsignedFields: []string{"$.url"}, Notes: []string{"n"}},
				{Index: 1, Result: verify.ResultUntrustedKeySource, Alg: "ES256", KID: "k2", JKU: "https://evil.example/jwks", Problem: "p"},
			}},
		Transports: []verify.Probe{{URL: "https://agent.example.com/a2a", Binding: "JSONRPC", ProtocolVersion: "1.0", Path: "$.supportedInterfaces[0]",
			Status: verify.ProbeConfirmed, Reachable: true, BindingConfirmed: true, VersionConfirmed: true, TLS: true, TLSVersion: "TLS 1.3", LatencyMS: 12}},
		Security: []verify.Finding{{Code: verify.FindingAPIKeyInQuery, Severity: verify.SeverityWarning, Path: "$.securitySchemes.k", Message: "m"}},
		Content: []verify.ContentFinding{{Code: contentscan.CodeConfusableName, Severity: verify.SeverityWarning, Path: "$.name",
			Message: "m", Excerpt: "P⟨U+200B⟩ay", Why: contentscan.Why(contentscan.CodeConfusableName), Related: []contentscan.Related{{AgentID: "a2", Text: "Pay"}}}},
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHeadOnGetRoutes: HEAD is answered wherever GET is (RFC 9110
// §9.3.2), with GET's status and no body.
func TestHeadOnGetRoutes(t *testing.T) {
	env := newTestEnv(t, nil)
	srv := httptest.NewServer(env.e)
	defer srv.Close()
	for _, target := range []string{"/api/v1/openapi.json", "/api/v1/agents", "/api/v1/changes", "/api/v1/agents/missing"} {
		get, err := http.Get(srv.URL + target)
		if err != nil {
			t.Fatal(err)
		}
		get.Body.Close()
		head, err := http.Head(srv.URL + target)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, head.Body)
		head.Body.Close()
		if head.StatusCode != get.StatusCode || n != 0 || head.StatusCode == http.StatusMethodNotAllowed {
			t.Errorf("HEAD %s = %d with %d body bytes, GET = %d", target, head.StatusCode, n, get.StatusCode)
		}
	}
}
