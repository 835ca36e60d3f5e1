package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/webhook"
)

// Webhooks stores webhook subscriptions; *catalog.Store implements it.
type Webhooks interface {
	CreateWebhook(ctx context.Context, actor catalog.Actor, w catalog.Webhook, secret string) error
	Webhooks(ctx context.Context) ([]catalog.Webhook, error)
	Webhook(ctx context.Context, id string) (catalog.Webhook, error)
	DeleteWebhook(ctx context.Context, actor catalog.Actor, id string) error
	WebhookDeliveries(ctx context.Context, id string, limit int) ([]catalog.WebhookDelivery, error)
}

// maxWebhookBody bounds a subscription request; webhook.Request.Check
// bounds its fields.
const maxWebhookBody = 8 << 10

// WebhookRequest is the body of POST /webhooks.
type WebhookRequest struct {
	URL        string   `json:"url"`
	EventTypes []string `json:"event_types"`
	// Filter is a search query string (as GET /agents takes): only
	// events of agents it matches are delivered.
	Filter string `json:"filter,omitempty"`
}

// Webhook is a subscription as the API shows it; its secret is shown
// only once, in WebhookCreated.
type Webhook struct {
	ID             string     `json:"id"`
	URL            string     `json:"url"`
	EventTypes     []string   `json:"event_types"`
	Filter         string     `json:"filter,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	CreatedBy      string     `json:"created_by,omitempty"`
	DisabledAt     *time.Time `json:"disabled_at,omitempty"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
}

// WebhookCreated answers POST /webhooks: the subscription and its
// signing secret, which is never shown again.
type WebhookCreated struct {
	Webhook Webhook `json:"webhook"`
	Secret  string  `json:"secret"`
}

// WebhookList lists the subscriptions, oldest first.
type WebhookList struct {
	Items []Webhook `json:"items"`
}

// WebhookDelivery is one entry of a subscription's delivery log.
type WebhookDelivery struct {
	// ID is the webhook-id header of every attempt of the delivery.
	ID            string     `json:"id"`
	Seq           int64      `json:"seq"`
	AgentID       string     `json:"agent_id"`
	EventType     string     `json:"event_type"`
	State         string     `json:"state"`
	Attempts      int        `json:"attempts"`
	CreatedAt     time.Time  `json:"created_at"`
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
	LastAttemptAt *time.Time `json:"last_attempt_at,omitempty"`
	LastStatus    int        `json:"last_status,omitempty"`
	LastError     string     `json:"last_error,omitempty"`
}

// WebhookDeliveryList is a subscription's delivery log, newest first.
type WebhookDeliveryList struct {
	Items []WebhookDelivery `json:"items"`
}

func (a *API) webhookRoutes() []route {
	if a.webhooks == nil {
		return nil
	}
	return []route{
		{method: http.MethodGet, path: "/webhooks", role: auth.Admin, handler: a.listWebhooks},
		{method: http.MethodPost, path: "/webhooks", role: auth.Admin, handler: a.createWebhook},
		{method: http.MethodDelete, path: "/webhooks/:id", role: auth.Admin, handler: a.deleteWebhook},
		{method: http.MethodGet, path: "/webhooks/:id/deliveries", role: auth.Admin, handler: a.listWebhookDeliveries},
	}
}

func newWebhook(w catalog.Webhook) Webhook {
	return Webhook{ID: w.ID, URL: w.URL, EventTypes: w.EventTypes, Filter: w.Filter, CreatedAt: w.CreatedAt,
		CreatedBy: w.CreatedBy, DisabledAt: w.DisabledAt, DisabledReason: w.DisabledReason}
}

func invalidWebhookField(field, format string, args ...any) error {
	e := newError(http.StatusBadRequest, CodeInvalidBody, format, args...)
	e.body.Parameter = field
	return e
}

func (a *API) createWebhook(c echo.Context) error {
	var in WebhookRequest
	if err := decodeJSONBody(c, &in, maxWebhookBody, `{"url": "https://...", "event_types": ["agent.updated"], "filter": "q=..."}`); err != nil {
		return err
	}
	w, secret, problems := webhook.NewSubscription(webhook.Request{URL: in.URL, EventTypes: in.EventTypes, Filter: in.Filter},
		actorOf(c).Name, a.now())
	if len(problems) > 0 {
		return invalidWebhookField(problems[0].Field, "%s", problems[0].Message)
	}
	if err := a.webhooks.CreateWebhook(c.Request().Context(), actorOf(c), w, secret); err != nil {
		return fmt.Errorf("creating webhook: %w", err)
	}
	a.log.Info("api: webhook created", "webhook_id", w.ID)
	return c.JSON(http.StatusCreated, WebhookCreated{Webhook: newWebhook(w), Secret: secret})
}

func (a *API) listWebhooks(c echo.Context) error {
	if err := noQuery(c); err != nil {
		return err
	}
	ws, err := a.webhooks.Webhooks(c.Request().Context())
	if err != nil {
		return fmt.Errorf("listing webhooks: %w", err)
	}
	l := WebhookList{Items: make([]Webhook, len(ws))}
	for i, w := range ws {
		l.Items[i] = newWebhook(w)
	}
	return c.JSON(http.StatusOK, l)
}

func webhookID(c echo.Context) (string, error) {
	id, err := url.PathUnescape(c.Param("id"))
	if err != nil || id == "" || len(id) > maxIDLen {
		return "", newError(http.StatusNotFound, CodeNotFound, "webhook not found")
	}
	return id, nil
}

func (a *API) deleteWebhook(c echo.Context) error {
	id, err := webhookID(c)
	if err != nil {
		return err
	}
	if err := noQuery(c); err != nil {
		return err
	}
	err = a.webhooks.DeleteWebhook(c.Request().Context(), actorOf(c), id)
	if errors.Is(err, catalog.ErrNotFound) {
		return newError(http.StatusNotFound, CodeNotFound, "webhook not found")
	}
	if err != nil {
		return fmt.Errorf("deleting webhook: %w", err)
	}
	return c.NoContent(http.StatusNoContent)
}

func (a *API) listWebhookDeliveries(c echo.Context) error {
	id, err := webhookID(c)
	if err != nil {
		return err
	}
	if err := noQuery(c); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := a.webhooks.Webhook(ctx, id); errors.Is(err, catalog.ErrNotFound) {
		return newError(http.StatusNotFound, CodeNotFound, "webhook not found")
	} else if err != nil {
		return fmt.Errorf("reading webhook: %w", err)
	}
	ds, err := a.webhooks.WebhookDeliveries(ctx, id, catalog.WebhookLogCap+100)
	if err != nil {
		return fmt.Errorf("reading webhook deliveries: %w", err)
	}
	l := WebhookDeliveryList{Items: make([]WebhookDelivery, len(ds))}
	for i, d := range ds {
		l.Items[i] = WebhookDelivery{ID: webhook.MessageID(d.PK), Seq: d.Seq, AgentID: d.AgentID, EventType: d.EventType,
			State: d.State, Attempts: d.Attempts, CreatedAt: d.CreatedAt, LastAttemptAt: d.LastAttemptAt,
			LastStatus: d.LastStatus, LastError: d.LastError}
		if d.State == catalog.DeliveryPending {
			next := d.NextAttemptAt
			l.Items[i].NextAttemptAt = &next
		}
	}
	return c.JSON(http.StatusOK, l)
}

// noQuery refuses any query parameter on a route that takes none.
func noQuery(c echo.Context) error {
	for name := range c.QueryParams() {
		return invalidParameter(name, "unknown parameter %q", name)
	}
	return nil
}
