package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
)

var (
	_ Refresher = (*crawler.Crawler)(nil)
	_ Pauser    = (*catalog.Store)(nil)
)

// fakeRefresher knows the agents of a store and fails with err when set.
type fakeRefresher struct {
	store *catalog.Store
	err   error
	ids   []string
}

func (f *fakeRefresher) RefreshNow(ctx context.Context, _ catalog.Actor, id string) (crawler.RefreshResult, error) {
	if f.err != nil {
		return crawler.RefreshResult{}, f.err
	}
	if _, err := f.store.Agent(ctx, catalog.ScopeAll, id); err != nil {
		return crawler.RefreshResult{}, err
	}
	f.ids = append(f.ids, id)
	return crawler.RefreshResult{}, nil
}

func TestAgentActions(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ref := &fakeRefresher{store: f.store}
	f.console = New(Options{Searcher: f.store, Agents: f.store, Refresher: ref, Pauser: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	tok := f.console.processCSRF
	id := f.ids["translator"]
	page := "/agents/" + id
	withToken := url.Values{csrfField: {tok}}

	// A registered agent is crawled; the page offers to pause it.
	body := f.get(t, page, nil).Body.String()
	for _, want := range []string{`action="` + page + `/refresh"`, `action="` + page + `/pause"`, `name="csrf_token" value="` + tok + `"`} {
		if !strings.Contains(body, want) {
			t.Errorf("agent page lacks %q", want)
		}
	}

	tests := []struct {
		name       string
		target     string
		form       url.Values
		wantStatus int
		after      func(t *testing.T)
	}{
		{name: "pause", target: page + "/pause", form: withToken, wantStatus: http.StatusSeeOther, after: func(t *testing.T) {
			h, err := f.store.AgentHealth(context.Background(), id, t0)
			if err != nil || !h.Paused {
				t.Errorf("after pause: paused = %v, err = %v", h.Paused, err)
			}
			if !strings.Contains(f.get(t, page, nil).Body.String(), `action="`+page+`/resume"`) {
				t.Error("a paused agent's page does not offer to resume")
			}
		}},
		{name: "resume", target: page + "/resume", form: withToken, wantStatus: http.StatusSeeOther, after: func(t *testing.T) {
			h, err := f.store.AgentHealth(context.Background(), id, t0)
			if err != nil || h.Paused {
				t.Errorf("after resume: paused = %v, err = %v", h.Paused, err)
			}
		}},
		{name: "refresh", target: page + "/refresh", form: withToken, wantStatus: http.StatusSeeOther, after: func(t *testing.T) {
			if len(ref.ids) != 1 || ref.ids[0] != id {
				t.Errorf("refreshed %v, want [%s]", ref.ids, id)
			}
		}},
		{name: "no token", target: page + "/pause", form: url.Values{}, wantStatus: http.StatusForbidden},
		{name: "unknown agent", target: "/agents/nope/pause", form: withToken, wantStatus: http.StatusNotFound},
		{name: "refresh of an unknown agent", target: "/agents/nope/refresh", form: withToken, wantStatus: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.post(t, tt.target, tt.form, nil)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d\n%s", rec.Code, tt.wantStatus, rec.Body)
			}
			if rec.Code == http.StatusSeeOther && rec.Header().Get("Location") != page+"#health" {
				t.Errorf("Location = %q", rec.Header().Get("Location"))
			}
			if tt.after != nil {
				tt.after(t)
			}
		})
	}

	// Inside the minimum interval the button says when to press it again,
	// as the API's 429 does, never a 500 page.
	ref.err = fmt.Errorf("refreshing: %w", &crawler.ThrottledError{RetryAfter: 90 * time.Second})
	rec := f.post(t, page+"/refresh", withToken, nil)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "90" ||
		!strings.Contains(rec.Body.String(), "next possible at") {
		t.Errorf("throttled refresh = %d, Retry-After %q\n%s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}

	ref.err = fmt.Errorf("waiting: %w", crawler.ErrRefreshCanceled)
	if rec := f.post(t, page+"/refresh", withToken, nil); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("canceled refresh = %d, want 503", rec.Code)
	}
}

// TestAgentActionsByRole: a viewer sees no buttons; with sign-in on the
// actions go through the editor check.
func TestAgentActionsByRole(t *testing.T) {
	viewer := Options{Pauser: nil, Principal: func(echo.Context) (Principal, bool) { return Principal{Name: "v", Role: auth.Viewer}, true }}
	f := newFixture(t, fixtureOptions{opts: viewer})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Pauser: f.store, Principal: viewer.Principal})
	f.e = echo.New()
	f.console.Mount(f.e)
	if body := f.get(t, "/agents/"+f.ids["translator"], nil).Body.String(); strings.Contains(body, "/pause\"") {
		t.Error("a viewer is offered to pause crawling")
	}

	g := newFixture(t, fixtureOptions{})
	g.console = New(Options{Searcher: g.store, Agents: g.store, Pauser: g.store, Authorizer: denyAll{}})
	g.e = echo.New()
	g.console.Mount(g.e)
	form := url.Values{csrfField: {g.console.processCSRF}}
	if rec := g.post(t, "/agents/"+g.ids["translator"]+"/resume", form, nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("resume without the role = %d, want 401", rec.Code)
	}
}
