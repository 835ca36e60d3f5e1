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

var _ AuditLog = (*catalog.Store)(nil)

// TestAuditPage: a console action shows in the audit log page, newest
// first, with what a person's provider says about them escaped.
func TestAuditPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Pauser: f.store, Audit: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	id := f.ids["translator"]
	if body := f.get(t, "/audit", nil).Body.String(); !strings.Contains(body, "Nothing has been changed yet") {
		t.Fatal("the empty audit log is not said so")
	}
	ctx := context.Background()
	mallory := catalog.User("sub-<m>").For(catalog.Request{DisplayName: "<script>alert(1)</script>", Role: "editor", ID: "req-7"})
	if err := f.store.SetPaused(ctx, mallory, id, true); err != nil {
		t.Fatal(err)
	}
	form := url.Values{csrfField: {f.console.processCSRF}}
	if rec := f.post(t, "/agents/"+id+"/resume", form, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("resume = %d", rec.Code)
	}
	rec := f.get(t, "/audit", nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /audit = %d", rec.Code)
	}
	resume, pause := strings.Index(body, catalog.ActionResume), strings.Index(body, catalog.ActionPause)
	if resume < 0 || pause < 0 || resume > pause {
		t.Errorf("want the console's resume listed above the pause: resume at %d, pause at %d", resume, pause)
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "sub-&lt;m&gt;", "req-7", `href="` + agentURL(id) + `"`, `href="/audit"`} {
		if !strings.Contains(body, want) {
			t.Errorf("audit page lacks %s", want)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("a name from the provider is rendered as markup")
	}
	if rec := f.get(t, "/audit?cursor=nope", nil); rec.Code != http.StatusBadRequest {
		t.Errorf("forged cursor = %d, want 400", rec.Code)
	}
}

// TestAuditPageIsTheAdmins: an editor gets no link, and with sign-in on
// the page goes through the admin check.
func TestAuditPageIsTheAdmins(t *testing.T) {
	editor := func(echo.Context) (Principal, bool) { return Principal{Name: "e", Role: auth.Editor}, true }
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Audit: f.store, Principal: editor, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	if body := f.get(t, "/", nil).Body.String(); strings.Contains(body, `href="/audit"`) {
		t.Error("an editor is offered the audit log")
	}
	g := newFixture(t, fixtureOptions{})
	g.console = New(Options{Searcher: g.store, Agents: g.store, Audit: g.store, Authorizer: denyAll{}, Logger: quietLog})
	g.e = echo.New()
	g.console.Mount(g.e)
	if rec := g.get(t, "/audit", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("audit log without the role = %d, want 401", rec.Code)
	}
}
