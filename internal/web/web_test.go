package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/net/html"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
)

// isFullPage reports whether body is a whole document rather than a
// fragment.
func isFullPage(body string) bool {
	return strings.HasPrefix(strings.ToLower(body), "<!doctype html>")
}

// TestSecurityHeaders: every console response, pages, fragments, errors
// and assets alike, carries the protective headers, and the CSP allows
// nothing inline.
func TestSecurityHeaders(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	targets := []string{"/", "/?q=invoice", "/agents/" + f.ids["evil"], "/agents/nope", "/no/such/page",
		f.console.assets.cssURL, "/agents/" + f.ids["evil"] + "/diff?from=1&to=2"}
	for _, target := range targets {
		for _, hdr := range []map[string]string{nil, hxFragment} {
			rec := f.get(t, target, hdr)
			h := rec.Header()
			csp := h.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("GET %s: CSP %q lacks %q", target, csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-") {
				t.Errorf("GET %s: CSP %q relaxes the policy", target, csp)
			}
			if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("GET %s: X-Content-Type-Options = %q", target, got)
			}
			if got := h.Get("Referrer-Policy"); got != "no-referrer" {
				t.Errorf("GET %s: Referrer-Policy = %q", target, got)
			}
		}
	}
}

// TestNoInlineScriptOrStyle: the CSP forbids inline code, so the pages
// must not depend on any: no <script> without src, no <style>, no style
// attribute, no on* handler, no javascript: URL. Card text holds such
// markup on purpose; it must come out as text, which the tokenizer sees
// as text.
func TestNoInlineScriptOrStyle(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, target := range []string{"/", "/?q=evil", "/agents/" + f.ids["evil"], "/agents/" + f.ids["evil"] + "/diff?from=1&to=2", "/nope"} {
		body := f.get(t, target, nil).Body.String()
		for _, problem := range inlineCode(body) {
			t.Errorf("GET %s: %s", target, problem)
		}
	}
}

// inlineCode lists the elements and attributes of an HTML document that
// would need 'unsafe-inline' or could run script.
func inlineCode(doc string) []string {
	var problems []string
	z := html.NewTokenizer(strings.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return problems
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			hasSrc := false
			for _, a := range tok.Attr {
				key := strings.ToLower(a.Key)
				switch {
				case strings.HasPrefix(key, "on"), key == "style":
					problems = append(problems, fmt.Sprintf("<%s %s=%q>", tok.Data, a.Key, a.Val))
				case key == "src":
					hasSrc = true
				}
				if strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:") {
					problems = append(problems, fmt.Sprintf("<%s %s=%q>", tok.Data, a.Key, a.Val))
				}
			}
			switch tok.Data {
			case "style", "iframe", "object", "embed", "img", "svg":
				problems = append(problems, "<"+tok.Data+"> element")
			case "script":
				if !hasSrc {
					problems = append(problems, "inline <script>")
				}
			}
		}
	}
}

func TestSearchPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	tests := []struct {
		name       string
		target     string
		header     map[string]string
		wantStatus int
		wantFull   bool
		want       []string
		notWant    []string
	}{
		{name: "first visit lists every agent", target: "/", wantStatus: http.StatusOK, wantFull: true,
			want: []string{"7 agents", "Invoice Extractor", "Document Translator", `name="input_mode"`, `id="results-area"`}},
		{name: "htmx search swaps only the results", target: "/?q=invoice", header: hxFragment, wantStatus: http.StatusOK,
			want: []string{"1 agent", "Invoice Extractor", `class="facets"`}, notWant: []string{"<html", `id="search"`, "Document Translator"}},
		{name: "boosted request gets the whole page", target: "/?q=invoice", header: hxBoost, wantStatus: http.StatusOK, wantFull: true},
		{name: "history restore gets the whole page", target: "/?q=invoice", header: hxRestore, wantStatus: http.StatusOK, wantFull: true},
		// A plain form submits an empty q and each ticked box.
		{name: "no-JS form GET with a facet", target: "/?q=&input_mode=application%2Fpdf", wantStatus: http.StatusOK, wantFull: true,
			want:    []string{"1 agent", "Invoice Extractor", `value="application/pdf" checked`, "Input media type:"},
			notWant: []string{"Document Translator"}},
		// Nothing was checked: every agent is unchecked, and the works
		// facet offers that value under its label.
		{name: "works facet", target: "/?works=unchecked", wantStatus: http.StatusOK, wantFull: true,
			want: []string{"7 agents", "Interfaces work (last check)", `name="works" value="unchecked" checked`}},
		{name: "bad works value refused", target: "/?works=mostly", wantStatus: http.StatusBadRequest, wantFull: true,
			want: []string{"This search cannot run"}},
		{name: "text and two facets", target: "/?q=translate&tag=translation&binding=JSONRPC", wantStatus: http.StatusOK, wantFull: true,
			want: []string{"1 agent", "Document Translator"}},
		{name: "nothing matches: helpful empty state", target: "/?q=zzzzqqq", wantStatus: http.StatusOK, wantFull: true,
			want: []string{"No agent matches", "Try other words", `href="/"`}},
		{name: "unknown parameter refused as the API does", target: "/?colour=red", wantStatus: http.StatusBadRequest, wantFull: true,
			want: []string{"This search cannot run"}},
		{name: "malformed query string", target: "/?q=%zz", wantStatus: http.StatusBadRequest, wantFull: true,
			want: []string{"malformed query string"}},
		{name: "bad enum value refused", target: "/?signature=maybe", wantStatus: http.StatusBadRequest, wantFull: true,
			want: []string{"This search cannot run"}},
		{name: "expired cursor", target: "/?cursor=garbage", wantStatus: http.StatusBadRequest, wantFull: true,
			want: []string{"expired"}},
		// Words naming a filter offer it as a chip adding it; the search
		// itself runs on the words.
		{name: "suggested filter chip", target: "/?q=invoice+accepts+PDF", wantStatus: http.StatusOK, wantFull: true,
			want: []string{"Invoice Extractor", `class="chip suggest" href="/?input_mode=application%2Fpdf&amp;q=invoice+accepts+PDF"`,
				"Suggested by “accepts PDF”"}},
		{name: "no chip for a filter already applied", target: "/?q=invoice+accepts+PDF&input_mode=application%2Fpdf",
			wantStatus: http.StatusOK, wantFull: true, notWant: []string{"chip suggest"}},
		// Each result can say why it matched, when asked (TestWhy): the
		// search explains nothing itself.
		{name: "why this result, asked for when opened", target: "/?q=invoices", wantStatus: http.StatusOK, wantFull: true,
			want:    []string{`<details class="why" hx-get="/agents/`, `/why?q=invoices"`, `hx-trigger="toggle once"`, "<summary>Why this result</summary>"},
			notWant: []string{"<code>invoic</code>"}},
		{name: "no why without words", target: "/?tag=finance", wantStatus: http.StatusOK, wantFull: true,
			notWant: []string{`class="why"`}},
		{name: "no chip for a bare word", target: "/?q=pdf+invoice", wantStatus: http.StatusOK, wantFull: true,
			notWant: []string{"chip suggest"}},
		{name: "a selected value without matches stays tickable", target: "/?tag=no-such-tag", wantStatus: http.StatusOK, wantFull: true,
			want: []string{`value="no-such-tag" checked`, "No agent matches", "Remove a filter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.get(t, tt.target, tt.header)
			body := rec.Body.String()
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d\n%s", rec.Code, tt.wantStatus, body)
			}
			if got := isFullPage(body); got != tt.wantFull {
				t.Errorf("full page = %v, want %v", got, tt.wantFull)
			}
			if ct := rec.Header().Get(echo.HeaderContentType); !strings.HasPrefix(ct, "text/html") {
				t.Errorf("Content-Type = %q", ct)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(body, w) {
					t.Errorf("body holds %q", w)
				}
			}
		})
	}
}

// TestSearchPagination follows next links through the whole catalog one
// agent at a time; each page's link keeps the query.
func TestSearchPagination(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	next := regexp.MustCompile(`class="next" href="([^"]+)"`)
	target := "/?q=&limit=2"
	pages := 0
	for target != "" && pages < 10 {
		pages++
		rec := f.get(t, target, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", target, rec.Code)
		}
		body := rec.Body.String()
		if pages > 1 && !strings.Contains(body, "First page") {
			t.Errorf("page %d has no link back to the first page", pages)
		}
		m := next.FindStringSubmatch(body)
		target = ""
		if m != nil {
			u, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
			if err != nil {
				t.Fatal(err)
			}
			if u.Query().Get("limit") != "2" || u.Query().Get("cursor") == "" {
				t.Fatalf("next link %q lost the query or the cursor", m[1])
			}
			target = u.String()
		}
	}
	if pages != 4 {
		t.Errorf("walked %d pages of 2 over 7 agents, want 4", pages)
	}
}

type failingSearcher struct{ err error }

func (s failingSearcher) Search(context.Context, catalog.Query) (catalog.Page, error) {
	return catalog.Page{}, s.err
}

func (s failingSearcher) Explain(context.Context, catalog.Scope, string, string) (*catalog.Explanation, error) {
	return nil, s.err
}

func (s failingSearcher) Complete(context.Context, catalog.Scope, string, int) ([]catalog.Completion, error) {
	return nil, s.err
}

var errBuilding = errors.New("index not ready")

func TestSearchFailures(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		want       string
	}{
		{name: "index being built", err: fmt.Errorf("searching: %w", errBuilding), wantStatus: http.StatusServiceUnavailable,
			want: `hx-get="/?q=x" hx-trigger="click, load delay:3s"`},
		{name: "registry fault", err: errors.New("disk on fire"), wantStatus: http.StatusInternalServerError, want: "Search failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{opts: Options{Searcher: failingSearcher{tt.err}, IndexNotReady: errBuilding}})
			for _, hdr := range []map[string]string{nil, hxFragment} {
				rec := f.get(t, "/?q=x", hdr)
				if rec.Code != tt.wantStatus || !strings.Contains(rec.Body.String(), tt.want) {
					t.Errorf("status %d (want %d), body has %q: %v", rec.Code, tt.wantStatus, tt.want, strings.Contains(rec.Body.String(), tt.want))
				}
				if strings.Contains(rec.Body.String(), "disk on fire") {
					t.Error("the page shows the internal error")
				}
			}
		})
	}
}

// TestCardTextIsInert: everything from a card is escaped text; invisible
// characters show as badges; only http(s) links are rendered, with rel
// set; the icon is never loaded.
func TestCardTextIsInert(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, target := range []string{"/?q=evil", "/agents/" + f.ids["evil"], "/agents/" + f.ids["evil"] + "/diff?from=1&to=2"} {
		t.Run(target, func(t *testing.T) {
			body := f.get(t, target, nil).Body.String()
			for _, bad := range []string{"<img src=x", "<script>window", "<svg", "onerror=\"", "<b>bold", "<i>tag", `href="javascript:`, rlo, "\u200b", "tracker.example/pixel.png\""} {
				if strings.Contains(body, bad) {
					t.Errorf("page holds %q unescaped", bad)
				}
			}
			for _, want := range []string{"&lt;img src=x onerror=", "⟨U+202E⟩"} {
				if !strings.Contains(body, want) {
					t.Errorf("page lacks %q", want)
				}
			}
		})
	}
	body := f.get(t, "/agents/"+f.ids["evil"], nil).Body.String()
	for _, want := range []string{
		"⟨U+200B⟩",
		`href="https://docs.evil.example/" rel="noopener noreferrer nofollow"`,
		"not loaded",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("agent page lacks %q", want)
		}
	}
	if regexp.MustCompile(`<img`).MatchString(body) {
		t.Error("agent page has an <img>: card icons must not be hot-linked")
	}
}

func TestAgentPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	evil := "/agents/" + f.ids["evil"]
	tests := []struct {
		name       string
		target     string
		header     map[string]string
		wantStatus int
		wantFull   bool
		want       []string
	}{
		{name: "overview, skills, signatures, versions, raw", target: "/agents/" + f.ids["invoice-extractor"], wantStatus: http.StatusOK, wantFull: true,
			want: []string{"Invoice Extractor", "Extract invoice data", "(card defaults)", "application/pdf", "Interfaces",
				"Security schemes", "Not verified yet", "Health", "Versions", "Raw card",
				`href="/api/v1/agents/` + f.ids["invoice-extractor"] + `/card"`, "&#34;name&#34;: &#34;Invoice Extractor&#34;"}},
		{name: "signature report one by one", target: evil, wantStatus: http.StatusOK, wantFull: true,
			want: []string{"bad_signature", "ES256", `key-<span class="cp" title="invisible character U+202E in the card">⟨U+202E⟩</span>1`, "pinned", "<code>jcs</code>", "$.url", "no_security",
				"v2", "current", "diff with current", "Content scan", "content_bidi_control", "content_zero_width",
				"Bidirectional controls reorder", "Compare with", `<a href="/agents/` + f.ids["invoice-extractor"] + `" title="`, `⟨U+202E⟩</span>Extractor</a>`}},
		{name: "not scanned yet", target: "/agents/" + f.ids["invoice-extractor"], wantStatus: http.StatusOK, wantFull: true,
			want: []string{"Content scan", "Not scanned yet."}},
		{name: "diff page", target: evil + "/diff?from=1&to=2", wantStatus: http.StatusOK, wantFull: true,
			want: []string{"Compare versions", `class="changed"`, "1.0.0", "1.1.0"}},
		{name: "diff fragment for htmx", target: evil + "/diff?from=1&to=2", header: hxFragment, wantStatus: http.StatusOK,
			want: []string{`<div id="diff"`, `class="changed"`}},
		{name: "unknown version", target: evil + "/diff?from=1&to=9", wantStatus: http.StatusNotFound, wantFull: true,
			want: []string{"Pick two of the stored versions (1 to 2)"}},
		{name: "same version", target: evil + "/diff?from=2&to=2", wantStatus: http.StatusOK, wantFull: true,
			want: []string{"hold the same JSON"}},
		{name: "unknown agent", target: "/agents/nope", wantStatus: http.StatusNotFound, wantFull: true, want: []string{"Agent not found"}},
		{name: "unknown page", target: "/nope/nope", wantStatus: http.StatusNotFound, wantFull: true, want: []string{"Not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.get(t, tt.target, tt.header)
			body := rec.Body.String()
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d\n%s", rec.Code, tt.wantStatus, body)
			}
			if got := isFullPage(body); got != tt.wantFull {
				t.Errorf("full page = %v, want %v", got, tt.wantFull)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %q", w)
				}
			}
		})
	}
}

// TestLayoutCallerAndCSRF: the caller shows in the header, htmx sends the
// CSRF token as a header (never in a URL), and dev mode shows its banner.
// With sign-in on, a caller without a session gets a "Sign in" link back
// to this page, one with a session a sign-out form carrying the token.
func TestLayoutCallerAndCSRF(t *testing.T) {
	tests := []struct {
		name    string
		path    string // "/" when empty
		opts    Options
		want    []string
		notWant []string
	}{
		{name: "signed in with a token", opts: Options{
			Principal: func(echo.Context) (Principal, bool) { return Principal{Name: "Ada <admin>", Role: auth.Editor}, true },
			CSRFToken: func(echo.Context) string { return "tok\"en" },
		}, want: []string{"Ada &lt;admin&gt;", ">editor<", `hx-headers="{&#34;X-CSRF-Token&#34;:&#34;tok\&#34;en&#34;}"`},
			notWant: []string{"Development mode"}},
		{name: "development mode", opts: Options{DevMode: true},
			want:    []string{"Development mode: no sign-in, you are admin.", `hx-headers="{&#34;X-CSRF-Token&#34;:`},
			notWant: []string{">Sign in<", ">Sign out<"}},
		{name: "signed in with a session", opts: Options{SignIn: true,
			Principal: func(echo.Context) (Principal, bool) {
				return Principal{Name: "Ada", Role: auth.Viewer, Session: true}, true
			},
			CSRFToken: func(echo.Context) string { return "tok-1" },
		}, want: []string{`<form method="post" action="/auth/logout"><input type="hidden" name="csrf_token" value="tok-1">`, ">Sign out<"},
			notWant: []string{">Sign in<"}},
		{name: "anonymous viewer", path: "/?q=a%20b&tag=x", opts: Options{SignIn: true,
			Principal: func(echo.Context) (Principal, bool) { return Principal{Role: auth.Viewer}, true },
			CSRFToken: func(echo.Context) string { return "tok-1" },
		}, want: []string{`href="/auth/login?next=%2F%3Fq%3Da%2520b%26tag%3Dx"`, ">Sign in<"},
			notWant: []string{">Sign out<", "/auth/logout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{opts: tt.opts})
			path := tt.path
			if path == "" {
				path = "/"
			}
			body := f.get(t, path, nil).Body.String()
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(body, w) {
					t.Errorf("page holds %q", w)
				}
			}
		})
	}
}

// denyAll is an Authorizer that lets nobody in.
type denyAll struct{}

func (denyAll) RequireRole(auth.Role) echo.MiddlewareFunc {
	return func(echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { return echo.ErrUnauthorized }
	}
}

// TestPagesNeedViewer: with sign-in on, pages go through the role check;
// assets do not (the sign-in page needs its stylesheet).
func TestPagesNeedViewer(t *testing.T) {
	f := newFixture(t, fixtureOptions{opts: Options{Authorizer: denyAll{}}})
	for _, target := range []string{"/", "/agents/" + f.ids["evil"], "/agents/" + f.ids["evil"] + "/diff"} {
		if rec := f.get(t, target, nil); rec.Code != http.StatusUnauthorized {
			t.Errorf("GET %s = %d, want 401", target, rec.Code)
		}
	}
	if rec := f.get(t, f.console.assets.cssURL, nil); rec.Code != http.StatusOK {
		t.Errorf("GET stylesheet = %d, want 200", rec.Code)
	}
}

func TestAssets(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	js := f.console.assets.jsURL
	stale := strings.Replace(js, f.console.assets.byName["htmx.min.js"].hash, "000000000000", 1)
	tests := []struct {
		name       string
		target     string
		header     map[string]string
		wantStatus int
		wantCache  string
		wantGzip   bool
	}{
		{name: "current hash is immutable", target: js, wantStatus: http.StatusOK, wantCache: "public, max-age=31536000, immutable"},
		{name: "gzip when accepted", target: js, header: map[string]string{"Accept-Encoding": "br, gzip"}, wantStatus: http.StatusOK,
			wantCache: "public, max-age=31536000, immutable", wantGzip: true},
		{name: "gzip refused with q=0", target: js, header: map[string]string{"Accept-Encoding": "gzip;q=0"}, wantStatus: http.StatusOK,
			wantCache: "public, max-age=31536000, immutable"},
		{name: "another build's hash is served uncached", target: stale, wantStatus: http.StatusOK, wantCache: "no-cache"},
		{name: "unknown asset", target: "/static/abc/nope.js", wantStatus: http.StatusNotFound},
		{name: "revalidation", target: js, header: map[string]string{"If-None-Match": `"` + f.console.assets.byName["htmx.min.js"].hash + `"`},
			wantStatus: http.StatusNotModified, wantCache: "public, max-age=31536000, immutable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.get(t, tt.target, tt.header)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			if tt.wantCache != "" && rec.Header().Get("Cache-Control") != tt.wantCache {
				t.Errorf("Cache-Control = %q, want %q", rec.Header().Get("Cache-Control"), tt.wantCache)
			}
			if rec.Code != http.StatusOK || tt.wantCache == "" {
				return
			}
			body := rec.Body.Bytes()
			if gotGzip := rec.Header().Get("Content-Encoding") == "gzip"; gotGzip != tt.wantGzip {
				t.Fatalf("gzip = %v, want %v", gotGzip, tt.wantGzip)
			}
			if tt.wantGzip {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.HasPrefix(body, []byte("/*! htmx 2.0.11")) {
				t.Errorf("body is not the vendored htmx: %.40q", body)
			}
		})
	}
}

// TestSearchPushURL: an htmx search tells htmx which URL to push — the
// search without the empty fields a form submits — and brings its title.
func TestSearchPushURL(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	tests := []struct {
		name     string
		target   string
		header   map[string]string
		wantPush string
	}{
		{name: "empty text dropped", target: "/?q=&input_mode=application%2Fpdf", header: hxFragment, wantPush: "/?input_mode=application%2Fpdf"},
		{name: "nothing left", target: "/?q=", header: hxFragment, wantPush: "/"},
		{name: "full page pushes nothing", target: "/?q=", wantPush: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.get(t, tt.target, tt.header)
			if got := rec.Header().Get(hxPushURL); got != tt.wantPush {
				t.Errorf("%s = %q, want %q", hxPushURL, got, tt.wantPush)
			}
		})
	}
	body := f.get(t, "/?q=invoice", hxFragment).Body.String()
	if !strings.HasPrefix(body, "<title>invoice · Search agents · A2A registry</title>") {
		t.Errorf("fragment does not start with its title: %.80q", body)
	}
}

// TestResultShowsCardURLAndWorks: a result names where its card lives
// (host and path, to tell agents of one name apart) and, once checked,
// how many of its declared interfaces worked.
func TestResultShowsCardURLAndWorks(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	id := f.ids["translator"]
	now := time.Now().UTC()
	if err := f.store.CreateRun(context.Background(), catalog.System("test"), catalog.Run{ID: "check-1", AgentID: id,
		Kind: catalog.RunKindCheck, Subject: "test", State: catalog.WorksSome, Transcript: []byte(`{}`), CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	body := f.get(t, "/?q=translator", nil).Body.String()
	for _, want := range []string{"translator.example/.well-known/agent-card.json", `class="badge warn" title="Declared interfaces that worked at the latest check">works: some`} {
		if !strings.Contains(body, want) {
			t.Errorf("results lack %q", want)
		}
	}
	// An agent never checked carries no verdict.
	if body := f.get(t, "/?q=invoice", nil).Body.String(); strings.Contains(body, "works: ") {
		t.Error("an unchecked agent shows a works badge")
	}
}

// TestSignedOut: sign-out lands on a page that needs no role, so where
// every page needs one the browser is not sent to the provider (whose
// SSO session would sign it straight back in); it offers sign-in as a
// link, to search rather than back here. A caller with a session is not
// told it is signed out.
func TestSignedOut(t *testing.T) {
	anonymous := func(echo.Context) (Principal, bool) { return Principal{}, false }
	session := func(echo.Context) (Principal, bool) {
		return Principal{Name: "Ada", Role: auth.Viewer, Session: true}, true
	}
	tests := []struct {
		name     string
		opts     Options
		wantCode int
		want     []string
		notWant  []string
	}{
		{name: "signed out, every page needs a role", opts: Options{SignIn: true, Authorizer: denyAll{}, Principal: anonymous},
			wantCode: http.StatusOK,
			want:     []string{"You are signed out", `<a href="/auth/login?next=%2F">Sign in again</a>`},
			notWant:  []string{"/auth/login?next=%2Fsigned-out", ">Sign out<"}},
		{name: "no sign-in", opts: Options{}, wantCode: http.StatusOK,
			want: []string{"You are signed out"}, notWant: []string{"Sign in again"}},
		{name: "still has a session", opts: Options{SignIn: true, Principal: session}, wantCode: http.StatusSeeOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{opts: tt.opts})
			rec := f.get(t, auth.SignedOutPath, nil)
			if rec.Code != tt.wantCode {
				t.Fatalf("GET %s = %d, want %d", auth.SignedOutPath, rec.Code, tt.wantCode)
			}
			if rec.Code == http.StatusSeeOther {
				if got := rec.Header().Get("Location"); got != "/" {
					t.Errorf("Location %q, want /", got)
				}
				return
			}
			if rec.Header().Get("Location") != "" || strings.Contains(rec.Body.String(), `http-equiv="refresh"`) {
				t.Error("the signed-out page redirects on its own")
			}
			body := rec.Body.String()
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(body, w) {
					t.Errorf("page holds %q", w)
				}
			}
		})
	}
}
