package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// Remover removes an agent (catalog.ErrNotFound for an unknown or
// already removed id) and lists the removed ones (catalog.ErrInvalidQuery
// for a bad cursor). *catalog.Store implements it.
type Remover interface {
	RemoveAgent(ctx context.Context, actor catalog.Actor, id string) error
	RemovedAgents(ctx context.Context, cursor string, limit int) (catalog.RemovedPage, error)
}

// removedPageSize is the removed agents of one console page.
const removedPageSize = 50

// mountRemove adds removing an agent, the admin's: a confirmation page
// (GET, changes nothing) whose form POSTs the removal; and the list of
// removed agents.
func (h *Console) mountRemove(e *echo.Echo) {
	if h.opts.Remover == nil {
		return
	}
	admin := h.guarded(auth.Admin)
	e.GET("/agents/:id/remove", h.confirmRemove, admin...)
	e.POST("/agents/:id/remove", h.remove, append(admin, limitBody(4<<10), h.checkCSRF)...)
	e.GET("/removed", h.removedList, admin...)
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
	if av.Agent.Removed != nil {
		// Removed already: its page says by whom and when.
		return c.Redirect(http.StatusSeeOther, agentURL(id))
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
	err := h.opts.Remover.RemoveAgent(ctx, h.actor(c), id)
	if errors.Is(err, catalog.ErrNotFound) {
		return h.agentError(c, err)
	}
	if err != nil {
		return h.agentError(c, fmt.Errorf("removing agent %s: %w", id, err))
	}
	h.log.InfoContext(ctx, "console: agent removed", "agent_id", id, "by", h.callerName(c))
	// The admin lands on what stays of it: the page with its banner.
	return c.Redirect(http.StatusSeeOther, agentURL(id))
}

func (h *Console) removedList(c echo.Context) error {
	ctx := c.Request().Context()
	p, err := h.opts.Remover.RemovedAgents(ctx, c.QueryParam("cursor"), removedPageSize)
	if errors.Is(err, catalog.ErrInvalidQuery) {
		return h.errorPage(c, http.StatusBadRequest, "Bad page link", "This link to an older page of removed agents is not valid. Start again from the most recent.")
	}
	if err != nil {
		h.log.ErrorContext(ctx, "console removed agents failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not list removed agents. The failure is in its log.")
	}
	var v view.RemovedList
	for _, a := range p.Agents {
		name := a.Name
		if name == "" {
			name = a.ID
		}
		v.Agents = append(v.Agents, view.RemovedAgent{URL: agentURL(a.ID), Name: name, CardURL: a.CardURL,
			Versions: a.CurrentVersion, Removal: view.Removal{At: a.At, By: a.By}})
	}
	if p.Next != "" {
		v.Older = "/removed?" + url.Values{"cursor": {p.Next}}.Encode()
	}
	return h.render(c, http.StatusOK, page{title: "Removed agents", body: templates.RemovedPage(v)})
}
