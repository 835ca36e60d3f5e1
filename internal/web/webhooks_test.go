package web

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/webhook"
)

var _ Webhooks = (*catalog.Store)(nil)

// TestWebhooksPage: a subscription shows with its URL escaped, its
// deliveries linked to their agents, and never its secret.
func TestWebhooksPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Webhooks: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	if body := f.get(t, "/webhooks", nil).Body.String(); !strings.Contains(body, "No subscriptions") {
		t.Fatal("no subscriptions is not said so")
	}
	ctx := context.Background()
	const secret = "whsec_c2VjcmV0LW5ldmVyLXNob3du"
	err := f.store.CreateWebhook(ctx, catalog.System("test"), catalog.Webhook{ID: "wh_1", URL: "https://hooks.example.com/in?<x>",
		EventTypes: []string{"agent.registered"}, CreatedAt: time.Now()}, secret)
	if err != nil {
		t.Fatal(err)
	}
	id := f.ids["translator"]
	if err := f.store.EnqueueWebhookDeliveries(ctx, mustCursor(t, f.store), mustCursor(t, f.store)+1,
		[]catalog.NewWebhookDelivery{{WebhookID: "wh_1", Seq: 1, AgentID: id, EventType: "agent.registered", Payload: "{}"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	rec := f.get(t, "/webhooks", nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /webhooks = %d", rec.Code)
	}
	for _, want := range []string{"https://hooks.example.com/in?&lt;x&gt;", `href="` + agentURL(id) + `"`, "agent.registered", "pending", `href="/webhooks"`} {
		if !strings.Contains(body, want) {
			t.Errorf("webhooks page lacks %s", want)
		}
	}
	if strings.Contains(body, secret) || strings.Contains(body, "<x>") {
		t.Error("the page shows the secret, or a URL as markup")
	}
}

func mustCursor(t *testing.T, s *catalog.Store) int64 {
	t.Helper()
	c, err := s.WebhookCursor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWebhookForms: an admin subscribes (the secret shown once, on the
// answer only), bad input comes back filled in and says what is wrong
// per field, deleting asks first; both writes are audited and refused
// without the CSRF token.
func TestWebhookForms(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Webhooks: f.store, Authorizer: headerAuth{}, Principal: callerOf, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	tok := f.console.processCSRF
	admin := map[string]string{testCaller: "ada:admin"}
	ctx := context.Background()

	page := f.get(t, "/webhooks", admin).Body.String()
	for _, want := range []string{`action="/webhooks"`, `name="csrf_token" value="` + tok + `"`, `value="agent.registered"`, `value="source.failed"`} {
		if !strings.Contains(page, want) {
			t.Errorf("webhooks page lacks %s", want)
		}
	}

	tests := []struct {
		name       string
		form       url.Values
		wantStatus int
		// want are in the answer: the fields kept and what is wrong.
		want      []string
		wantField []string
	}{
		{name: "no token", form: url.Values{"url": {"https://hooks.example.com/a"}, "event_types": {"agent.registered"}},
			wantStatus: http.StatusForbidden},
		{name: "relative URL", form: url.Values{csrfField: {tok}, "url": {"/in<x>"}, "event_types": {"agent.health", "agent.removed"}, "filter": {"q=translate"}},
			wantStatus: http.StatusBadRequest, wantField: []string{"url"},
			want: []string{`value="/in&lt;x&gt;"`, `value="q=translate"`, `value="agent.health" checked`, `value="agent.removed" checked`, "absolute http(s) URL"}},
		{name: "credentials in URL", form: url.Values{csrfField: {tok}, "url": {"https://u:p@hooks.example.com/"}, "event_types": {"agent.health"}},
			wantStatus: http.StatusBadRequest, wantField: []string{"url"}, want: []string{"without credentials"}},
		{name: "no event type, bad filter", form: url.Values{csrfField: {tok}, "url": {"https://hooks.example.com/a"}, "filter": {"nope=1"}},
			wantStatus: http.StatusBadRequest, wantField: []string{"event_types", "filter"},
			want: []string{`value="https://hooks.example.com/a"`, "event_types must name one or more of", "filter is not a valid search query"}},
		{name: "unknown event type", form: url.Values{csrfField: {tok}, "url": {"https://hooks.example.com/a"}, "event_types": {"agent.exploded"}},
			wantStatus: http.StatusBadRequest, wantField: []string{"event_types"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.post(t, "/webhooks", tt.form, admin)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d\n%s", rec.Code, tt.wantStatus, rec.Body)
			}
			body := rec.Body.String()
			for _, want := range tt.want {
				if !strings.Contains(body, want) {
					t.Errorf("answer lacks %s", want)
				}
			}
			for _, field := range tt.wantField {
				if !strings.Contains(body, `data-field="`+field+`"`) {
					t.Errorf("answer does not say what is wrong with %s", field)
				}
			}
			if n := strings.Count(body, "field-error"); n != len(tt.wantField) {
				t.Errorf("%d field errors, want %d", n, len(tt.wantField))
			}
		})
	}
	if ws, err := f.store.Webhooks(ctx); err != nil || len(ws) != 0 {
		t.Fatalf("refused forms stored %v, %v", ws, err)
	}

	form := url.Values{csrfField: {tok}, "url": {"https://hooks.example.com/in"}, "event_types": {"agent.registered", "agent.health"}, "filter": {"q=translate"}}
	rec := f.post(t, "/webhooks", form, admin)
	if rec.Code != http.StatusCreated {
		t.Fatalf("subscribe = %d\n%s", rec.Code, rec.Body)
	}
	secret := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(rec.Body.String())
	if secret == "" || !strings.Contains(rec.Body.String(), "will not be shown again") {
		t.Fatal("the answer does not show the secret once with its warning")
	}
	ws, err := f.store.Webhooks(ctx)
	if err != nil || len(ws) != 1 {
		t.Fatalf("webhooks = %v, %v; want the one added", ws, err)
	}
	w := ws[0]
	if w.URL != "https://hooks.example.com/in" || w.Filter != "q=translate" || strings.Join(w.EventTypes, ",") != "agent.registered,agent.health" {
		t.Errorf("stored %+v", w)
	}
	if _, err := webhook.Sign(secret, "msg_1", time.Now(), nil); err != nil {
		t.Errorf("the shown secret does not sign: %v", err)
	}
	for _, target := range []string{"/webhooks", "/webhooks/" + w.ID, "/webhooks/" + w.ID + "/delete"} {
		rec := f.get(t, target, admin)
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "whsec_") {
			t.Errorf("GET %s = %d, or shows a secret", target, rec.Code)
		}
	}
	if body := f.get(t, "/webhooks/"+w.ID+"/delete", admin).Body.String(); !strings.Contains(body, `action="/webhooks/`+w.ID+`/delete"`) {
		t.Error("the delete step has no form to confirm")
	}
	if rec := f.get(t, "/webhooks/wh_nope", admin); rec.Code != http.StatusNotFound {
		t.Errorf("log of an unknown webhook = %d, want 404", rec.Code)
	}
	if rec := f.post(t, "/webhooks/"+w.ID+"/delete", url.Values{}, admin); rec.Code != http.StatusForbidden {
		t.Errorf("delete without a token = %d, want 403", rec.Code)
	}
	if rec := f.post(t, "/webhooks/wh_nope/delete", url.Values{csrfField: {tok}}, admin); rec.Code != http.StatusNotFound {
		t.Errorf("delete of an unknown webhook = %d, want 404", rec.Code)
	}
	if rec := f.post(t, "/webhooks/"+w.ID+"/delete", url.Values{csrfField: {tok}}, admin); rec.Code != http.StatusSeeOther {
		t.Fatalf("delete = %d, want 303", rec.Code)
	}
	if ws, err := f.store.Webhooks(ctx); err != nil || len(ws) != 0 {
		t.Errorf("after delete: %v, %v", ws, err)
	}
	log, err := f.store.AuditLog(ctx, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	audited := map[string]bool{}
	for _, e := range log.Entries {
		if e.TargetID == w.ID {
			audited[e.Action] = true
		}
	}
	if !audited["webhook.create"] || !audited["webhook.delete"] {
		t.Errorf("audit log of the webhook: %v", audited)
	}
}

// TestWebhooksNeedAdmin: viewers and editors neither see nor change
// subscriptions.
func TestWebhooksNeedAdmin(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Webhooks: f.store, Authorizer: headerAuth{}, Principal: callerOf, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	ctx := context.Background()
	if err := f.store.CreateWebhook(ctx, catalog.System("test"), catalog.Webhook{ID: "wh_1", URL: "https://hooks.example.com/in",
		EventTypes: []string{"agent.registered"}, CreatedAt: time.Now()}, webhook.NewSecret()); err != nil {
		t.Fatal(err)
	}
	tok := f.console.processCSRF
	for _, who := range []string{"vic:viewer", "ed:editor"} {
		t.Run(who, func(t *testing.T) {
			h := map[string]string{testCaller: who}
			if strings.Contains(f.get(t, "/", h).Body.String(), `href="/webhooks"`) {
				t.Error("shown the webhooks link")
			}
			for _, target := range []string{"/webhooks", "/webhooks/wh_1", "/webhooks/wh_1/delete"} {
				if rec := f.get(t, target, h); rec.Code != http.StatusForbidden {
					t.Errorf("GET %s = %d, want 403", target, rec.Code)
				}
			}
			form := url.Values{csrfField: {tok}, "url": {"https://hooks.example.com/b"}, "event_types": {"agent.registered"}}
			if rec := f.post(t, "/webhooks", form, h); rec.Code != http.StatusForbidden {
				t.Errorf("POST /webhooks = %d, want 403", rec.Code)
			}
			if rec := f.post(t, "/webhooks/wh_1/delete", url.Values{csrfField: {tok}}, h); rec.Code != http.StatusForbidden {
				t.Errorf("POST delete = %d, want 403", rec.Code)
			}
		})
	}
	if ws, err := f.store.Webhooks(ctx); err != nil || len(ws) != 1 {
		t.Errorf("webhooks = %v, %v; want the one, untouched", ws, err)
	}
}
