package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
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
