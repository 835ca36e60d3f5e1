package api

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
)

// refreshAgent checks an agent's card now and answers the agent as it is
// after the check. An agent that fails the check is not an API error: the
// check itself succeeded, and health_report.last_error says what the
// agent did wrong, as it would after a scheduled check.
func (a *API) refreshAgent(c echo.Context) error {
	id, err := agentID(c)
	if err != nil {
		return err
	}
	if err := noParameters(c); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := a.mustSee(c, id); err != nil {
		return err
	}
	res, err := a.refresher.RefreshNow(ctx, actorOf(c), id)
	var throttled *crawler.ThrottledError
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		return agentNotFound(id)
	case errors.As(err, &throttled):
		// RFC 6585 §4; Retry-After in whole seconds (RFC 9110 §10.2.3),
		// rounded up so a client that obeys it is not refused again.
		secs := int64((throttled.RetryAfter + time.Second - 1) / time.Second)
		c.Response().Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
		if throttled.HostBusy {
			return newError(http.StatusTooManyRequests, CodeTooManyRequests,
				"the agent's host is being checked already; try again in %d seconds", secs)
		}
		return newError(http.StatusTooManyRequests, CodeTooManyRequests,
			"agent %s was checked less than the minimum interval ago; try again in %d seconds", id, secs)
	case requestEnded(err):
		a.log.Warn("api: refresh cut short", "agent_id", id, "err", err)
		return newError(http.StatusGatewayTimeout, CodeTimeout,
			"the check of agent %s did not finish before the request ended; nothing was recorded, try again", id)
	case err != nil:
		return fmt.Errorf("refreshing agent %s: %w", id, err)
	}
	o := res.Outcome
	a.log.Info("api: agent refreshed", "agent_id", id, "card_url", o.URL, "status", o.Status,
		"class", o.Class, "health", o.Health, "new_version", res.Stored.NewVersion)

	ag, err := a.catalog.Agent(ctx, a.scope(c), id)
	if errors.Is(err, catalog.ErrNotFound) {
		// Deleted while the check ran.
		return agentNotFound(id)
	}
	var d AgentDetail
	if err == nil {
		d, err = a.agentDetail(c, ag.ID)
	}
	if requestEnded(err) {
		a.log.Warn("api: refreshed agent not read back", "agent_id", id, "err", err)
		return newError(http.StatusGatewayTimeout, CodeTimeout,
			"the check of agent %s was recorded but the request ended before it could be read back; GET %s shows it",
			id, agentPath(id))
	}
	if err != nil {
		// An *apiError inside (not_found) still reaches the client:
		// classify looks through the wrapping.
		return fmt.Errorf("loading refreshed agent %s: %w", id, err)
	}
	return c.JSON(http.StatusOK, d)
}

// requestEnded tells whether err comes from the request's context ending
// (its deadline, or the client going away) rather than from a fault. The
// registry acts as a gateway to the agent here, hence 504 (RFC 9110
// §15.6.5) rather than 500; the fetch's own time limit is not such an
// error but a recorded `timeout` failure of the agent.
func requestEnded(err error) bool {
	return errors.Is(err, crawler.ErrRefreshCanceled) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// maxEmptyBody bounds the body of an action that takes no parameters.
const maxEmptyBody = 1 << 10

// noParameters checks the body of an action that takes none (refresh,
// pause, resume, revoke): no body at all, or the empty JSON object `{}`.
// A field is refused like an unknown field on every other write route,
// so a client that believes it set an option learns it did not. It also
// keeps a plain HTML form from triggering the action: a form post always
// carries a body type (application/x-www-form-urlencoded,
// multipart/form-data or text/plain).
func noParameters(c echo.Context) error {
	req := c.Request()
	ct := req.Header.Get(echo.HeaderContentType)
	if req.ContentLength == 0 && len(req.TransferEncoding) == 0 {
		if mt, _, err := mime.ParseMediaType(ct); ct == "" || err == nil && mt == echo.MIMEApplicationJSON {
			return nil
		}
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != echo.MIMEApplicationJSON {
		return newError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
			"send no body, or Content-Type application/json")
	}
	return decodeJSONBody(c, &struct{}{}, maxEmptyBody, "without fields: this action takes no parameters")
}
