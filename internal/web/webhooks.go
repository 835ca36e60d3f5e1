package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/internal/webhook"
	"github.com/a2aregistry/registry/web/templates"
)

// Webhooks reads webhook subscriptions; *catalog.Store implements it.
type Webhooks interface {
	Webhooks(ctx context.Context) ([]catalog.Webhook, error)
	WebhookDeliveries(ctx context.Context, id string, limit int) ([]catalog.WebhookDelivery, error)
}

// webhookLogSize is the deliveries shown per subscription.
const webhookLogSize = 10

// mountWebhooks adds the webhooks page (admin): subscriptions and their
// latest deliveries.
func (h *Console) mountWebhooks(e *echo.Echo) {
	if h.opts.Webhooks == nil {
		return
	}
	e.GET("/webhooks", h.webhooks, h.guarded(auth.Admin)...)
}

func (h *Console) webhooks(c echo.Context) error {
	ctx := c.Request().Context()
	ws, err := h.opts.Webhooks.Webhooks(ctx)
	var v view.Webhooks
	for _, w := range ws {
		if err != nil {
			break
		}
		vw := view.Webhook{ID: w.ID, URL: w.URL, Filter: w.Filter, EventTypes: w.EventTypes, CreatedAt: w.CreatedAt,
			Disabled: w.DisabledAt != nil, DisabledReason: w.DisabledReason}
		var ds []catalog.WebhookDelivery
		ds, err = h.opts.Webhooks.WebhookDeliveries(ctx, w.ID, webhookLogSize)
		for _, d := range ds {
			vw.Deliveries = append(vw.Deliveries, view.WebhookDelivery{ID: webhook.MessageID(d.PK), AgentID: d.AgentID,
				AgentURL: agentURL(d.AgentID), EventType: d.EventType, State: d.State, Attempts: d.Attempts,
				LastStatus: d.LastStatus, LastError: d.LastError, CreatedAt: d.CreatedAt})
		}
		v.Items = append(v.Items, vw)
	}
	if err != nil {
		h.log.ErrorContext(ctx, "console webhooks failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not read its webhooks. The failure is in its log.")
	}
	return h.render(c, http.StatusOK, page{title: "Webhooks", body: templates.WebhooksPage(v)})
}
