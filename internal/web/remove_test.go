package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

var _ Remover = (*catalog.Store)(nil)

// TestRemoveAgent: the admin confirms on a page of its own, the form
// needs the CSRF token, and the removal is in the audit log.
func TestRemoveAgent(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Remover: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	id := f.ids["evil"]
	page := agentURL(id)
	if body := f.get(t, page, nil).Body.String(); !strings.Contains(body, `href="`+page+`/remove"`) {
		t.Fatal("the admin is not offered to remove the agent")
	}
	confirm := f.get(t, page+"/remove", nil)
	if confirm.Code != http.StatusOK || !strings.Contains(confirm.Body.String(), `action="`+page+`/remove"`) {
		t.Fatalf("confirmation page = %d", confirm.Code)
	}
	if strings.Contains(confirm.Body.String(), "<script>") {
		t.Error("the card's name is rendered as markup on the confirmation page")
	}
	if _, err := f.store.AgentView(context.Background(), catalog.ScopeAll, id, f.console.now()); err != nil {
		t.Fatalf("showing the confirmation removed the agent: %v", err)
	}
	tests := []struct {
		name       string
		form       url.Values
		wantStatus int
	}{
		{"without the token", url.Values{}, http.StatusForbidden},
		{"with the token", url.Values{csrfField: {f.console.processCSRF}}, http.StatusSeeOther},
		{"again", url.Values{csrfField: {f.console.processCSRF}}, http.StatusNotFound},
	}
	for _, tt := range tests {
		if rec := f.post(t, page+"/remove", tt.form, nil); rec.Code != tt.wantStatus {
			t.Errorf("%s: status %d, want %d", tt.name, rec.Code, tt.wantStatus)
		}
	}
	if v, err := f.store.AgentView(context.Background(), catalog.ScopeAll, id, f.console.now()); err != nil || v.Agent.Removed == nil {
		t.Errorf("after removal: removed %+v (%v), want the agent kept and marked removed", v.Agent.Removed, err)
	}
	log, err := f.store.AuditLog(context.Background(), "", 10)
	if err != nil || len(log.Entries) != 1 || log.Entries[0].Action != catalog.ActionRemove || log.Entries[0].TargetID != id {
		t.Errorf("audit log = %+v (%v), want the one removal", log.Entries, err)
	}
}

// TestRemoveIsTheAdmins: an editor is not offered it, and with sign-in on
// both routes go through the admin check.
func TestRemoveIsTheAdmins(t *testing.T) {
	editor := func(echo.Context) (Principal, bool) { return Principal{Name: "e", Role: auth.Editor}, true }
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Remover: f.store, Pauser: f.store, Principal: editor, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	if body := f.get(t, agentURL(f.ids["translator"]), nil).Body.String(); strings.Contains(body, "/remove\"") {
		t.Error("an editor is offered to remove an agent")
	}
	g := newFixture(t, fixtureOptions{})
	g.console = New(Options{Searcher: g.store, Agents: g.store, Remover: g.store, Authorizer: denyAll{}, Logger: quietLog})
	g.e = echo.New()
	g.console.Mount(g.e)
	page := agentURL(g.ids["translator"])
	if rec := g.get(t, page+"/remove", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("confirmation without the role = %d, want 401", rec.Code)
	}
	if rec := g.post(t, page+"/remove", url.Values{csrfField: {g.console.processCSRF}}, nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("removal without the role = %d, want 401", rec.Code)
	}
}

// TestRemovedAgentPages: an admin sees what stays of a removed agent (its
// page with a banner naming who removed it and when, its version diff,
// the list of removed agents); everyone else gets 404 and search leaves
// it out; registering it again brings the page back for all.
func TestRemovedAgentPages(t *testing.T) {
	role := auth.Admin
	principal := func(echo.Context) (Principal, bool) { return Principal{Subject: "s", Name: "n", Role: role}, true }
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Remover: f.store, Pauser: f.store, Principal: principal, Logger: quietLog,
		Registrar: storeRegistrar{f.store}, Audit: f.store})
	f.e = echo.New()
	f.console.Mount(f.e)
	ctx := context.Background()
	id := f.ids["evil"]
	page := agentURL(id)
	remover := catalog.User("sub-root").For(catalog.Request{DisplayName: "Root <b>Admin</b>", Role: "admin"})
	if err := f.store.RemoveAgent(ctx, remover, id); err != nil {
		t.Fatal(err)
	}

	rec := f.get(t, page, nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `class="notice bad removed-banner"`) {
		t.Fatalf("admin's page of the removed agent = %d, without the banner", rec.Code)
	}
	if !strings.Contains(body, "Removed by Root &lt;b&gt;Admin&lt;/b&gt;") || strings.Contains(body, "<b>Admin</b>") {
		t.Error("the banner does not name the remover, escaped")
	}
	if !strings.Contains(body, `<time datetime="`) {
		t.Error("the banner does not say when")
	}
	audit := body[strings.Index(body, `id="audit"`)+1:]
	if !strings.Contains(body, `id="audit"`) || !strings.Contains(audit, "<code>agent.remove</code>") {
		t.Error("the admin's page of the removed agent does not show its audit entries")
	}
	for _, action := range []string{`href="` + page + `/remove"`, `action="` + page + `/pause"`} {
		if strings.Contains(body, action) {
			t.Errorf("the removed agent's page offers %s", action)
		}
	}
	if rec := f.get(t, page+"/diff?from=1&to=2", nil); rec.Code != http.StatusOK {
		t.Errorf("admin's diff of the removed agent = %d, want 200", rec.Code)
	}
	if rec := f.get(t, page+"/remove", nil); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != page {
		t.Errorf("confirming a second removal = %d to %q, want 303 to the page", rec.Code, rec.Header().Get("Location"))
	}
	list := f.get(t, "/removed", nil)
	if list.Code != http.StatusOK || !strings.Contains(list.Body.String(), `href="`+page+`"`) ||
		!strings.Contains(list.Body.String(), "Root &lt;b&gt;Admin&lt;/b&gt;") {
		t.Errorf("removed agents page = %d, without the agent and its remover", list.Code)
	}
	if !strings.Contains(list.Body.String(), `href="/removed"`) {
		t.Error("the admin's navigation has no link to removed agents")
	}
	if strings.Contains(f.get(t, "/", nil).Body.String(), `href="`+page+`"`) {
		t.Error("search lists the removed agent")
	}

	for _, r := range []auth.Role{auth.Viewer, auth.Editor} {
		role = r
		for _, target := range []string{page, page + "/diff?from=1&to=2"} {
			if rec := f.get(t, target, nil); rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "removed-banner") {
				t.Errorf("%v GET %s = %d, want 404 without the banner", r, target, rec.Code)
			}
		}
		if strings.Contains(f.get(t, "/", nil).Body.String(), `href="/removed"`) {
			t.Errorf("%v is shown the link to removed agents", r)
		}
	}

	// An editor registers its URL again from the console.
	role = auth.Editor
	rec = f.post(t, "/register", url.Values{"urls": {"https://evil.example/.well-known/agent-card.json"},
		csrfField: {f.console.processCSRF}}, nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), ">restored<") || !strings.Contains(rec.Body.String(), `href="`+page+`"`) {
		t.Errorf("registering the removed agent's URL = %d, without a restored result linking to its page", rec.Code)
	}
	role = auth.Viewer
	if rec := f.get(t, page, nil); rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "removed-banner") {
		t.Errorf("viewer's page of the restored agent = %d (banner shown: %v)", rec.Code, strings.Contains(rec.Body.String(), "removed-banner"))
	} else if strings.Contains(rec.Body.String(), `id="audit"`) {
		t.Error("a viewer is shown the agent's audit entries")
	}
	role = auth.Admin
	if strings.Contains(f.get(t, "/removed", nil).Body.String(), `href="`+page+`"`) {
		t.Error("the restored agent is still listed as removed")
	}
	if !strings.Contains(f.get(t, page, nil).Body.String(), "<code>agent.restore</code>") {
		t.Error("the admin's page of the restored agent does not show the restore in its audit entries")
	}
}

// The removed agents page is the admin's.
func TestRemovedListIsTheAdmins(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Remover: f.store, Authorizer: denyAll{}, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	if rec := f.get(t, "/removed", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("removed agents without the role = %d, want 401", rec.Code)
	}
}

// storeRegistrar registers the evil card (as it is served now) under any
// URL, as the crawler's Registrar does after its fetch.
type storeRegistrar struct{ store *catalog.Store }

func (r storeRegistrar) Register(ctx context.Context, actor catalog.Actor, _ catalog.Scope, input string) (catalog.UpsertResult, error) {
	c, err := card.Parse(evilCard("1.1.0"), card.DefaultLimits())
	if err != nil {
		return catalog.UpsertResult{}, err
	}
	return r.store.Upsert(ctx, actor, catalog.UpsertInput{CardURL: input, Card: c, Source: catalog.SourceURL})
}
