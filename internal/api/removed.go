package api

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
)

// RemovedAgents lists the agents an admin removed; *catalog.Store
// implements it.
type RemovedAgents interface {
	// RemovedAgents returns limit agents after cursor ("" for the most
	// recently removed); catalog.ErrInvalidQuery for a bad cursor.
	RemovedAgents(ctx context.Context, cursor string, limit int) (catalog.RemovedPage, error)
}

// seesRemoved tells whether the caller of c may see agents an admin
// removed: admins, and everyone when sign-in is off (development mode's
// local user is admin).
func (a *API) seesRemoved(c echo.Context) bool {
	return a.authz == nil || auth.FromContext(c.Request().Context()).Role.Includes(auth.Admin)
}

// hideRemoved guards the routes that act on one agent. An agent an admin
// removed does not exist for other callers (404, as for an unknown id, and
// as the catalog's scoped reads answer them); an admin acts on it
// (refresh, pause, runs, checks) only after registering its URL again
// (409); removing it again is 404, as the catalog answers.
func (a *API) hideRemoved(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := agentID(c)
		if err != nil {
			return err
		}
		r, err := a.catalog.AgentRemoval(c.Request().Context(), id)
		switch {
		case errors.Is(err, catalog.ErrNotFound):
			return agentNotFound(id)
		case err != nil:
			return fmt.Errorf("checking removal of agent %s: %w", id, err)
		case r == nil:
			return next(c)
		case !a.seesRemoved(c):
			return agentNotFound(id)
		case c.Request().Method == http.MethodDelete:
			return newError(http.StatusNotFound, CodeNotFound, "agent %s is removed already", id)
		}
		return newError(http.StatusConflict, CodeConflict,
			"agent %s was removed by %s at %s; register its card URL again to restore it",
			id, r.By, r.At.Format(time.RFC3339))
	}
}

// RemovedAgentList is GET /removed-agents.
type RemovedAgentList struct {
	// Items are most recently removed first.
	Items []RemovedAgent `json:"items"`
	// NextCursor continues the list; absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// RemovedAgent is one agent an admin removed.
type RemovedAgent struct {
	ID             string  `json:"id"`
	CardURL        string  `json:"card_url"`
	Name           string  `json:"name"`
	CurrentVersion int     `json:"current_version"`
	Removed        Removal `json:"removed"`
}

// Bounds of GET /removed-agents.
const (
	defaultRemovedLimit = 50
	maxRemovedLimit     = 500
)

func (a *API) listRemoved(c echo.Context) error {
	values, err := url.ParseQuery(c.Request().URL.RawQuery)
	if err != nil {
		return newError(http.StatusBadRequest, CodeInvalidParameter, "malformed query string")
	}
	limit := defaultRemovedLimit
	for name, vals := range values {
		if len(vals) > 1 {
			return invalidParameter(name, "parameter %s given %d times; give it once", name, len(vals))
		}
		switch name {
		case paramCursor:
		case paramLimit:
			n, err := strconv.Atoi(vals[0])
			if err != nil || !isDigits(vals[0]) || n < 1 || n > maxRemovedLimit {
				return invalidParameter(paramLimit, "limit must be an integer from 1 to %d", maxRemovedLimit)
			}
			limit = n
		default:
			return invalidParameter(name, "unknown parameter %q", name)
		}
	}
	p, err := a.operator.RemovedAgents(c.Request().Context(), values.Get(paramCursor), limit)
	if errors.Is(err, catalog.ErrInvalidQuery) {
		e := newError(http.StatusBadRequest, CodeInvalidCursor, "cursor is invalid; start again without it")
		e.body.Parameter = paramCursor
		return e
	}
	if err != nil {
		return fmt.Errorf("listing removed agents: %w", err)
	}
	out := RemovedAgentList{Items: make([]RemovedAgent, len(p.Agents)), NextCursor: p.Next}
	for i, r := range p.Agents {
		out.Items[i] = RemovedAgent{ID: r.ID, CardURL: r.CardURL, Name: r.Name, CurrentVersion: r.CurrentVersion,
			Removed: Removal{At: r.At, By: r.By}}
	}
	return c.JSON(http.StatusOK, out)
}
