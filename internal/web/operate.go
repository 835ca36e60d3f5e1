package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
)

// Refresher checks one agent's card now and records the outcome; a failed
// fetch is recorded in the agent's health, not returned. *crawler.Crawler
// implements it.
type Refresher interface {
	RefreshNow(ctx context.Context, actor catalog.Actor, agentID string) (crawler.RefreshResult, error)
}

// Pauser stops and resumes crawling one agent; catalog.ErrNotFound for an
// unknown id. *catalog.Store implements it.
type Pauser interface {
	SetPaused(ctx context.Context, actor catalog.Actor, agentID string, paused bool) error
}

// mountOperations adds the agent actions an editor may take. Each is a
// plain POST form answered with 303 See Other to the agent's health
// section, so it works the same with and without JavaScript and a reload
// does not repeat it.
func (h *Console) mountOperations(e *echo.Echo) {
	mw := append(h.guarded(auth.Editor), limitBody(4<<10), h.checkCSRF)
	if h.opts.Refresher != nil {
		e.POST("/agents/:id/refresh", h.refresh, mw...)
	}
	if h.opts.Pauser != nil {
		e.POST("/agents/:id/pause", func(c echo.Context) error { return h.setPaused(c, true) }, mw...)
		e.POST("/agents/:id/resume", func(c echo.Context) error { return h.setPaused(c, false) }, mw...)
	}
}

func (h *Console) refresh(c echo.Context) error {
	id, ok := pathID(c)
	if !ok {
		return h.agentError(c, errAgentGone)
	}
	if err := h.mustSee(c, id); err != nil {
		return h.agentError(c, err)
	}
	_, err := h.opts.Refresher.RefreshNow(c.Request().Context(), h.actor(c), id)
	var throttled *crawler.ThrottledError
	if errors.As(err, &throttled) {
		return h.tooSoon(c, throttled)
	}
	if errors.Is(err, crawler.ErrRefreshCanceled) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return h.errorPage(c, http.StatusServiceUnavailable, "Check not finished",
			"The check did not finish before the request ended; nothing was recorded. Try again.")
	}
	if err != nil {
		return h.agentError(c, fmt.Errorf("refreshing agent %s: %w", id, err))
	}
	h.log.InfoContext(c.Request().Context(), "console: agent refreshed", "agent_id", id, "by", h.callerName(c))
	return h.backToHealth(c, id)
}

// tooSoon answers a refused check as the API does (429, RFC 6585 §4, with
// Retry-After), with the time the next check will be accepted, so the
// editor knows when to press the button again.
func (h *Console) tooSoon(c echo.Context, t *crawler.ThrottledError) error {
	secs := int64((t.RetryAfter + time.Second - 1) / time.Second)
	secs = max(secs, 1)
	c.Response().Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	next := time.Now().UTC().Add(time.Duration(secs) * time.Second).Format("15:04:05 MST")
	if t.HostBusy {
		return h.errorPage(c, http.StatusTooManyRequests, "Too soon",
			fmt.Sprintf("The agent's host is being checked already; next possible at %s (in %d seconds).", next, secs))
	}
	return h.errorPage(c, http.StatusTooManyRequests, "Too soon",
		fmt.Sprintf("This agent was checked less than the minimum interval ago; next possible at %s (in %d seconds).", next, secs))
}

func (h *Console) setPaused(c echo.Context, paused bool) error {
	id, ok := pathID(c)
	if !ok {
		return h.agentError(c, errAgentGone)
	}
	if err := h.mustSee(c, id); err != nil {
		return h.agentError(c, err)
	}
	if err := h.opts.Pauser.SetPaused(c.Request().Context(), h.actor(c), id, paused); err != nil {
		return h.agentError(c, fmt.Errorf("setting paused=%v on agent %s: %w", paused, id, err))
	}
	h.log.InfoContext(c.Request().Context(), "console: agent crawling changed", "agent_id", id, "paused", paused, "by", h.callerName(c))
	return h.backToHealth(c, id)
}

// backToHealth sends the browser to the agent's page after an action
// (RFC 9110 §15.4.4: 303 turns the POST into a GET).
func (h *Console) backToHealth(c echo.Context, id string) error {
	return c.Redirect(http.StatusSeeOther, agentURL(id)+"#health")
}

// pathID is the unescaped {id} path parameter.
func pathID(c echo.Context) (string, bool) {
	id, err := url.PathUnescape(c.Param("id"))
	if err != nil || id == "" || len(id) > maxIDLen {
		return "", false
	}
	return id, true
}

// callerName names the caller in logs: their name, or "local admin" in
// development mode.
func (h *Console) callerName(c echo.Context) string {
	if h.opts.Principal != nil {
		if p, ok := h.opts.Principal(c); ok {
			return p.Name
		}
	}
	return "local admin"
}

// actor is who the catalog records as making the caller's writes
// (auth.ActorOf, as every door names them: the signed-in user, or the
// local admin in development mode) with the request the audit log
// records.
func (h *Console) actor(c echo.Context) catalog.Actor {
	return auth.ActorOf(auth.FromContext(c.Request().Context()), auth.RequestOf(c))
}

// canOperate reports whether the caller may take the actions above.
func (h *Console) canOperate(c echo.Context) bool {
	return h.holds(c, auth.Editor)
}

// holds reports whether the caller holds role, to decide which links and
// buttons a page shows; the routes themselves are guarded by the
// Authorizer.
func (h *Console) holds(c echo.Context, role auth.Role) bool {
	if h.opts.Principal == nil {
		return true // no sign-in: the local user is admin
	}
	p, ok := h.opts.Principal(c)
	return ok && p.Role.Includes(role)
}

// mustSee is catalog.ErrNotFound for an agent the caller does not see, so
// that an action on it answers as for a missing one.
func (h *Console) mustSee(c echo.Context, id string) error {
	sc := h.scope(c)
	if sc.All {
		return nil
	}
	if _, err := h.opts.Agents.AgentView(c.Request().Context(), sc, id, h.now()); err != nil {
		return fmt.Errorf("loading agent %s: %w", id, err)
	}
	return nil
}
