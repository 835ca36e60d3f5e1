package web

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/internal/webhook"
	"github.com/a2aregistry/registry/web/templates"
)

// Webhooks stores webhook subscriptions; *catalog.Store implements it.
// Its writes are audited as the API's are (the same calls, the caller's
// actor).
type Webhooks interface {
	CreateWebhook(ctx context.Context, actor catalog.Actor, w catalog.Webhook, secret string) error
	Webhooks(ctx context.Context) ([]catalog.Webhook, error)
	// Webhook returns catalog.ErrNotFound for an unknown id.
	Webhook(ctx context.Context, id string) (catalog.Webhook, error)
	// DeleteWebhook returns catalog.ErrNotFound for an unknown id.
	DeleteWebhook(ctx context.Context, actor catalog.Actor, id string) error
	WebhookDeliveries(ctx context.Context, id string, limit int) ([]catalog.WebhookDelivery, error)
}

// webhookLogSize is the deliveries shown per subscription on the list;
// its own page shows the whole log.
const webhookLogSize = 10

// maxWebhookForm bounds the add form: a URL, event types and a filter.
const maxWebhookForm = 8 << 10

// mountWebhooks adds the webhooks pages (admin): subscriptions, their
// delivery logs, adding and deleting them.
func (h *Console) mountWebhooks(e *echo.Echo) {
	if h.opts.Webhooks == nil {
		return
	}
	admin := h.guarded(auth.Admin)
	e.GET("/webhooks", h.webhooks, admin...)
	e.POST("/webhooks", h.createWebhook, append(admin, limitBody(maxWebhookForm), h.checkCSRF)...)
	e.GET("/webhooks/:id", h.webhookLog, admin...)
	e.GET("/webhooks/:id/delete", h.confirmDeleteWebhook, admin...)
	e.POST("/webhooks/:id/delete", h.deleteWebhook, append(admin, limitBody(4<<10), h.checkCSRF)...)
}

func (h *Console) webhooks(c echo.Context) error {
	return h.renderWebhooks(c, http.StatusOK, view.Webhooks{})
}

// renderWebhooks shows the subscriptions under the add form as v left it.
func (h *Console) renderWebhooks(c echo.Context, status int, v view.Webhooks) error {
	ctx := c.Request().Context()
	ws, err := h.opts.Webhooks.Webhooks(ctx)
	for _, w := range ws {
		if err != nil {
			break
		}
		var vw view.Webhook
		vw, err = h.webhookView(ctx, w, webhookLogSize)
		v.Items = append(v.Items, vw)
	}
	if err != nil {
		h.log.ErrorContext(ctx, "console webhooks failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not read its webhooks. The failure is in its log.")
	}
	v.CSRFToken = h.csrfToken(c)
	v.EventTypes = webhook.EventTypes()
	return h.render(c, status, page{title: "Webhooks", body: templates.WebhooksPage(v)})
}

// webhookView is w with its latest limit deliveries.
func (h *Console) webhookView(ctx context.Context, w catalog.Webhook, limit int) (view.Webhook, error) {
	vw := view.Webhook{ID: w.ID, URL: w.URL, Filter: w.Filter, EventTypes: w.EventTypes, CreatedAt: w.CreatedAt,
		CreatedBy: w.CreatedBy, Disabled: w.DisabledAt != nil, DisabledReason: w.DisabledReason}
	if limit == 0 {
		return vw, nil
	}
	ds, err := h.opts.Webhooks.WebhookDeliveries(ctx, w.ID, limit)
	if err != nil {
		return vw, err
	}
	for _, d := range ds {
		vw.Deliveries = append(vw.Deliveries, view.WebhookDelivery{ID: webhook.MessageID(d.PK), AgentID: d.AgentID,
			AgentURL: agentURL(d.AgentID), EventType: d.EventType, State: d.State, Attempts: d.Attempts,
			LastStatus: d.LastStatus, LastError: d.LastError, CreatedAt: d.CreatedAt})
	}
	return vw, nil
}

func (h *Console) createWebhook(c echo.Context) error {
	if err := c.Request().ParseForm(); err != nil {
		return h.errorPage(c, http.StatusRequestEntityTooLarge, "Too large", "The webhook form is too large or unreadable.")
	}
	f := c.Request().PostForm
	r := webhook.Request{URL: strings.TrimSpace(f.Get("url")), EventTypes: f["event_types"], Filter: strings.TrimSpace(f.Get("filter"))}
	form := view.WebhookForm{URL: r.URL, Filter: r.Filter, EventTypes: map[string]bool{}}
	for _, t := range r.EventTypes {
		form.EventTypes[t] = true
	}
	actor := h.actor(c)
	w, secret, problems := webhook.NewSubscription(r, actor.Name, h.now())
	if len(problems) > 0 {
		form.Errors = map[string]string{}
		for _, p := range problems {
			form.Errors[p.Field] = p.Message
		}
		return h.renderWebhooks(c, http.StatusBadRequest, view.Webhooks{Form: form})
	}
	ctx := c.Request().Context()
	if err := h.opts.Webhooks.CreateWebhook(ctx, actor, w, secret); err != nil {
		h.log.ErrorContext(ctx, "console webhook create failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not store the subscription. The failure is in its log.")
	}
	h.log.InfoContext(ctx, "console: webhook created", "webhook_id", w.ID, "by", h.callerName(c))
	return h.renderWebhooks(c, http.StatusCreated, view.Webhooks{Created: &view.WebhookCreated{ID: w.ID, URL: w.URL, Secret: secret}})
}

// webhookPage reads the subscription the path names.
func (h *Console) webhookPage(c echo.Context, logSize int) (view.WebhookPage, error) {
	id, ok := pathID(c)
	if !ok {
		return view.WebhookPage{}, catalog.ErrNotFound
	}
	ctx := c.Request().Context()
	w, err := h.opts.Webhooks.Webhook(ctx, id)
	if err != nil {
		return view.WebhookPage{}, err
	}
	vw, err := h.webhookView(ctx, w, logSize)
	return view.WebhookPage{Webhook: vw, CSRFToken: h.csrfToken(c)}, err
}

// webhookFailed answers a failed read of a subscription.
func (h *Console) webhookFailed(c echo.Context, err error) error {
	if errors.Is(err, catalog.ErrNotFound) {
		return h.errorPage(c, http.StatusNotFound, "Webhook not found", "No webhook subscription has this id.")
	}
	h.log.ErrorContext(c.Request().Context(), "console webhook failed", "err", err)
	return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not read the webhook. The failure is in its log.")
}

// webhookLog shows a subscription and its whole delivery log.
func (h *Console) webhookLog(c echo.Context) error {
	v, err := h.webhookPage(c, catalog.WebhookLogCap+100)
	if err != nil {
		return h.webhookFailed(c, err)
	}
	return h.render(c, http.StatusOK, page{title: "Webhook", body: templates.WebhookPage(v)})
}

// confirmDeleteWebhook asks before deleting: a plain form, and a link
// back that changes nothing.
func (h *Console) confirmDeleteWebhook(c echo.Context) error {
	v, err := h.webhookPage(c, 0)
	if err != nil {
		return h.webhookFailed(c, err)
	}
	return h.render(c, http.StatusOK, page{title: "Delete webhook", body: templates.WebhookDeletePage(v)})
}

func (h *Console) deleteWebhook(c echo.Context) error {
	id, ok := pathID(c)
	if !ok {
		return h.webhookFailed(c, catalog.ErrNotFound)
	}
	ctx := c.Request().Context()
	err := h.opts.Webhooks.DeleteWebhook(ctx, h.actor(c), id)
	if err != nil {
		return h.webhookFailed(c, err)
	}
	h.log.InfoContext(ctx, "console: webhook deleted", "webhook_id", id, "by", h.callerName(c))
	return c.Redirect(http.StatusSeeOther, "/webhooks")
}
