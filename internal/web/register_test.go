package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/web/view"
)

var _ Registrar = (*crawler.Registrar)(nil)

// fakeRegistrar answers by input: a URL containing "new" is created, "old"
// unchanged, "404" a fetch failure, "bad" an unreadable card, "boom" our
// own fault.
type fakeRegistrar struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeRegistrar) Register(_ context.Context, _ catalog.Actor, _ catalog.Scope, input string) (catalog.UpsertResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, input)
	f.mu.Unlock()
	agent := catalog.Agent{ID: "id-" + input, CardURL: input + "/.well-known/agent-card.json", Card: &card.Card{Name: "Agent <" + input + ">"}}
	switch {
	case strings.Contains(input, "new"):
		return catalog.UpsertResult{Agent: agent, Created: true, NewVersion: true}, nil
	case strings.Contains(input, "old"):
		return catalog.UpsertResult{Agent: agent}, nil
	case strings.Contains(input, "404"):
		return catalog.UpsertResult{}, &crawler.FetchError{Class: crawler.ClassHTTP404, URL: input, Status: 404, Err: errors.New("404 Not Found")}
	case strings.Contains(input, "bad"):
		return catalog.UpsertResult{}, fmt.Errorf("parsing: %w", &card.ParseError{Code: "not_an_object", Path: "$", Message: "not a JSON object"})
	}
	return catalog.UpsertResult{}, errors.New("database on fire")
}

func (f *fixture) post(t *testing.T, target string, form url.Values, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	f.e.ServeHTTP(rec, req)
	return rec
}

func TestRegisterPage(t *testing.T) {
	reg := &fakeRegistrar{}
	f := newFixture(t, fixtureOptions{opts: Options{Registrar: reg}})
	tok := f.console.processCSRF

	rec := f.get(t, "/register", nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `name="csrf_token" value="`+tok+`"`) {
		t.Fatalf("GET /register = %d; the form must carry the token", rec.Code)
	}
	for _, problem := range inlineCode(rec.Body.String()) {
		t.Errorf("register page: %s", problem)
	}
	if !strings.Contains(f.get(t, "/", nil).Body.String(), `href="/register"`) {
		t.Error("the header has no link to the register page")
	}

	tests := []struct {
		name       string
		urls       string
		header     map[string]string
		field      string
		wantStatus int
		wantFull   bool
		want       []string
		wantCalls  int
	}{
		{name: "one URL, no-JS form with the field", urls: "https://new.example", field: tok,
			wantStatus: http.StatusOK, wantFull: true, wantCalls: 1,
			want: []string{">created<", `href="/agents/id-https:%2F%2Fnew.example"`, "Agent &lt;https://new.example&gt;"}},
		{name: "many URLs each with its result, htmx with the header",
			urls:   "https://new.example\n\n# a comment\nhttps://old.example\nhttps://404.example\nhttps://bad.example\nhttps://boom.example\nhttps://new.example\n",
			header: map[string]string{hxRequest: "true", csrfHeader: tok}, wantStatus: http.StatusOK, wantCalls: 5,
			want: []string{">created<", ">unchanged<", ">failed<", crawler.KindFetchFailed, crawler.ClassHTTP404, crawler.KindInvalidCard,
				view.RegisterInternal, "cause is in its log"}},
		{name: "nothing given", urls: "  \n# only a comment\n", field: tok, wantStatus: http.StatusBadRequest, wantFull: true,
			want: []string{"give at least one URL"}},
		{name: "too many", urls: strings.Repeat("https://new.example/x\n", 1) + manyURLs(maxRegisterLines+1), field: tok,
			wantStatus: http.StatusBadRequest, want: []string{"register at most 50 at once"}, wantFull: true},
		{name: "no token", urls: "https://new.example", wantStatus: http.StatusForbidden, wantFull: true, want: []string{"Refused"}},
		{name: "wrong token", urls: "https://new.example", field: tok + "x", wantStatus: http.StatusForbidden, want: []string{"Refused"}, wantFull: true},
		{name: "cross-site even with the token", urls: "https://new.example", field: tok,
			header: map[string]string{"Sec-Fetch-Site": "cross-site"}, wantStatus: http.StatusForbidden, want: []string{"another site"}, wantFull: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg.mu.Lock()
			reg.calls = nil
			reg.mu.Unlock()
			form := url.Values{"urls": {tt.urls}}
			if tt.field != "" {
				form.Set(csrfField, tt.field)
			}
			rec := f.post(t, "/register", form, tt.header)
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
			if strings.Contains(body, "database on fire") {
				t.Error("the page shows an internal error")
			}
			reg.mu.Lock()
			defer reg.mu.Unlock()
			if len(reg.calls) != tt.wantCalls {
				t.Errorf("registrar called %d times (%v), want %d", len(reg.calls), reg.calls, tt.wantCalls)
			}
		})
	}
}

func manyURLs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "https://new%d.example\n", i)
	}
	return b.String()
}

// TestRegisterNeedsEditor: with sign-in on, the page and the action go
// through the editor check; without a registrar there is no page.
func TestRegisterNeedsEditor(t *testing.T) {
	f := newFixture(t, fixtureOptions{opts: Options{Registrar: &fakeRegistrar{}, Authorizer: denyAll{}}})
	if rec := f.get(t, "/register", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("GET /register = %d, want 401", rec.Code)
	}
	form := url.Values{"urls": {"https://new.example"}, csrfField: {f.console.processCSRF}}
	if rec := f.post(t, "/register", form, nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("POST /register = %d, want 401", rec.Code)
	}

	ro := newFixture(t, fixtureOptions{})
	if rec := ro.get(t, "/register", nil); rec.Code != http.StatusNotFound {
		t.Errorf("GET /register without a registrar = %d, want 404", rec.Code)
	}
	if strings.Contains(ro.get(t, "/", nil).Body.String(), `href="/register"`) {
		t.Error("a read-only console links to the register page")
	}
}
