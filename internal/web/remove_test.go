package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
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
	if _, err := f.store.AgentView(context.Background(), catalog.ScopeAll, id, f.console.now()); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("after removal: %v, want ErrNotFound", err)
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
