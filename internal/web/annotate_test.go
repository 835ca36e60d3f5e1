package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
)

var _ Annotator = (*catalog.Store)(nil)

// An editor annotates an agent from its page, with and without htmx;
// refused input is explained inline and keeps what was typed; the page
// shows the annotations escaped, labels linking to their search, and the
// labels in the search page's facets.
func TestAnnotateAgent(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Annotator: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	tok := f.console.processCSRF
	id := f.ids["translator"]
	page := "/agents/" + id
	action := page + "/annotations"
	htmx := map[string]string{hxRequest: "true"}

	body := f.get(t, page, nil).Body.String()
	for _, want := range []string{`id="annotations"`, "has not annotated", `action="` + action + `"`, `hx-post="` + action + `"`} {
		if !strings.Contains(body, want) {
			t.Errorf("agent page lacks %q", want)
		}
	}

	form := func(labels string) url.Values {
		return url.Values{csrfField: {tok}, "owner_team": {"<b>Payments</b>"}, "contact": {"pay@example.com"},
			"classification": {"confidential"}, "labels": {labels}, "notes": {"Ask Ed first."}}
	}
	stored := func() catalog.Annotations {
		v, err := f.store.AgentView(context.Background(), catalog.ScopeAll, id, t0)
		if err != nil {
			t.Fatal(err)
		}
		return v.Annotations
	}

	tests := []struct {
		name       string
		form       url.Values
		header     map[string]string
		wantStatus int
		want       []string // in the body
		stored     bool     // whether the store then holds the form's annotations
	}{
		{name: "no token", form: url.Values{"owner_team": {"x"}}, wantStatus: http.StatusForbidden},
		{name: "label line without =", form: form("env=prod\ntier"), header: htmx, wantStatus: http.StatusBadRequest,
			want: []string{"line 2: write each label as key=value", "env=prod\ntier", "&lt;b&gt;Payments&lt;/b&gt;"}},
		{name: "bad label key", form: form("Env Name=prod"), header: htmx, wantStatus: http.StatusBadRequest,
			want: []string{"Labels: key &#34;Env Name&#34;", `<details class="annotations-edit" open`}},
		{name: "bad key without htmx", form: form("Env Name=prod"), wantStatus: http.StatusBadRequest,
			want: []string{"<html", "Labels: key"}},
		{name: "saved with htmx", form: form("env=prod\ntier=1"), header: htmx, wantStatus: http.StatusOK, stored: true,
			want: []string{"Annotations saved", `href="/?label=env%3Aprod"`, "&lt;b&gt;Payments&lt;/b&gt;", "Ask Ed first."}},
		{name: "saved without htmx", form: form("env=prod\ntier=1"), wantStatus: http.StatusSeeOther, stored: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.post(t, action, tt.form, tt.header)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d\n%s", rec.Code, tt.wantStatus, rec.Body)
			}
			got := rec.Body.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("answer lacks %q:\n%s", w, got)
				}
			}
			if tt.header != nil && strings.Contains(got, "<html") {
				t.Error("an htmx request got the whole page")
			}
			if strings.Contains(got, "<b>Payments") {
				t.Error("the owner team is not escaped")
			}
			if rec.Code == http.StatusSeeOther && rec.Header().Get("Location") != page+"#annotations" {
				t.Errorf("Location = %q", rec.Header().Get("Location"))
			}
			if a := stored(); (a.OwnerTeam != "") != tt.stored {
				t.Errorf("stored annotations = %+v, want stored=%v", a, tt.stored)
			}
		})
	}

	search := f.get(t, "/", nil).Body.String()
	for _, want := range []string{"Label", "env:prod", "Owner team", "Classification"} {
		if !strings.Contains(search, want) {
			t.Errorf("search page facets lack %q", want)
		}
	}
	if got := f.get(t, "/?label=env:prod", nil); got.Code != http.StatusOK || !strings.Contains(got.Body.String(), page) {
		t.Errorf("label search = %d, lists the agent = %v", got.Code, strings.Contains(got.Body.String(), page))
	}
}

// A viewer sees the annotations but neither the notes nor the form; with
// sign-in on, the write goes through the editor check.
func TestAnnotationsForViewers(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	id := f.ids["translator"]
	if _, err := f.store.SetAnnotations(context.Background(), catalog.System("test"), catalog.ScopeAll, id, catalog.Annotations{
		OwnerTeam: "Payments", Labels: map[string]string{"env": "prod"}, Notes: "secret plans"}); err != nil {
		t.Fatal(err)
	}
	viewer := func(echo.Context) (Principal, bool) { return Principal{Name: "v", Role: auth.Viewer}, true }
	f.console = New(Options{Searcher: f.store, Agents: f.store, Annotator: f.store, Principal: viewer, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	body := f.get(t, "/agents/"+id, nil).Body.String()
	if !strings.Contains(body, "Payments") || !strings.Contains(body, `href="/?label=env%3Aprod"`) {
		t.Error("a viewer does not see the owner team and labels")
	}
	if strings.Contains(body, "secret plans") || strings.Contains(body, "/annotations\"") {
		t.Error("a viewer sees the notes or the edit form")
	}

	g := newFixture(t, fixtureOptions{})
	g.console = New(Options{Searcher: g.store, Agents: g.store, Annotator: g.store, Authorizer: denyAll{}})
	g.e = echo.New()
	g.console.Mount(g.e)
	form := url.Values{csrfField: {g.console.processCSRF}, "owner_team": {"x"}}
	if rec := g.post(t, "/agents/"+g.ids["translator"]+"/annotations", form, nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("annotating without the role = %d, want 401", rec.Code)
	}
}
