package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// Remover removes an agent; catalog.ErrNotFound for an unknown id.
// *catalog.Store implements it.
type Remover interface {
	DeleteAgent(ctx context.Context, actor catalog.Actor, id string) error
}

// mountRemove adds removing an agent, the admin's: a confirmation page
// (GET, changes nothing) whose form POSTs the removal.
func (h *Console) mountRemove(e *echo.Echo) {
	if h.opts.Remover == nil {
		return
	}
	admin := h.guarded(auth.Admin)
	e.GET("/agents/:id/remove", h.confirmRemove, admin...)
	e.POST("/agents/:id/remove", h.remove, append(admin, limitBody(4<<10), h.checkCSRF)...)
}

func (h *Console) confirmRemove(c echo.Context) error {
	id, ok := pathID(c)
	if !ok {
		return h.agentError(c, errAgentGone)
	}
	av, err := h.opts.Agents.AgentView(c.Request().Context(), h.scope(c), id, h.now())
	if err != nil {
		return h.agentError(c, fmt.Errorf("loading agent %s: %w", id, err))
	}
	v := view.Remove{Name: id, CardURL: av.Agent.CardURL, URL: agentURL(id), CSRFToken: h.csrfToken(c)}
	if av.Agent.Card != nil && av.Agent.Card.Name != "" {
		v.Name = av.Agent.Card.Name
	}
	return h.render(c, http.StatusOK, page{title: "Remove agent", body: templates.RemovePage(v)})
}

func (h *Console) remove(c echo.Context) error {
	id, ok := pathID(c)
	if !ok {
		return h.agentError(c, errAgentGone)
	}
	ctx := c.Request().Context()
	err := h.opts.Remover.DeleteAgent(ctx, h.actor(c), id)
	if errors.Is(err, catalog.ErrNotFound) {
		return h.agentError(c, err)
	}
	if err != nil {
		return h.agentError(c, fmt.Errorf("removing agent %s: %w", id, err))
	}
	h.log.InfoContext(ctx, "console: agent removed", "agent_id", id, "by", h.callerName(c))
	return c.Redirect(http.StatusSeeOther, "/")
}
