package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/query"
	"github.com/a2aregistry/registry/internal/sources"
)

// maxIDLen bounds an agent id in a path.
const maxIDLen = 200

// Parameters of the API's own lists (audit, changes, removed agents,
// runs), named as the search names them.
const (
	paramLimit  = query.ParamLimit
	paramCursor = query.ParamCursor
)

// indexRetryAfter is the Retry-After, in seconds, of a search refused while
// the index is built: builds take seconds (about 15 at 100,000 agents).
const indexRetryAfter = "5"

func (a *API) searchAgents(c echo.Context) error {
	start := time.Now()
	req, err := query.ParseString(c.Request().URL.RawQuery)
	var qerr *query.Error
	if errors.As(err, &qerr) && !errors.Is(err, catalog.ErrInvalidCursor) {
		return invalidParameter(qerr.Parameter, "%s", qerr.Message)
	}
	var page catalog.Page
	if err == nil {
		page, err = a.catalog.Search(c.Request().Context(), req.Query(a.scope(c)))
	}
	switch {
	case errors.Is(err, catalog.ErrInvalidCursor):
		e := newError(http.StatusBadRequest, CodeInvalidCursor, "cursor is invalid or expired; repeat the search without it")
		e.body.Parameter = paramCursor
		return e
	case errors.Is(err, catalog.ErrInvalidQuery):
		// The catalog's sentinel message describes the caller's mistake.
		return newError(http.StatusBadRequest, CodeInvalidQuery, "%v", err)
	case errors.Is(err, catalog.ErrIndexNotReady):
		// Starting up: answer at once rather than hold the request for the
		// whole build (RFC 9110 §15.6.4, §10.2.3).
		c.Response().Header().Set("Retry-After", indexRetryAfter)
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the search index is still being built; retry shortly")
	case err != nil:
		return fmt.Errorf("searching agents: %w", err)
	}
	// How long the search took inside the server (W3C Server Timing), so
	// a client can tell it from time spent in the network or in queues.
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	c.Response().Header().Set("Server-Timing", fmt.Sprintf("search;dur=%.2f, embed;dur=%.2f, index-wait;dur=%.2f, index;dur=%.2f, page;dur=%.2f",
		ms(time.Since(start)), ms(page.Timing.Embed), ms(page.Timing.IndexWait), ms(page.Timing.Index), ms(page.Timing.Load)))
	return c.JSON(http.StatusOK, newSearchResponse(page, query.Suggest(req.Text, req.Filters)))
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// agentID returns the unescaped {id} path parameter, or a not_found
// error for one no agent can have.
func agentID(c echo.Context) (string, error) {
	id, err := url.PathUnescape(c.Param("id"))
	if err != nil || id == "" || len(id) > maxIDLen {
		return "", newError(http.StatusNotFound, CodeNotFound, "agent not found")
	}
	return id, nil
}

func agentNotFound(id string) *apiError {
	return newError(http.StatusNotFound, CodeNotFound, "agent %s not found", id)
}

func (a *API) getAgent(c echo.Context) error {
	id, err := agentID(c)
	if err != nil {
		return err
	}
	d, err := a.agentDetail(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d)
}

// agentDetail reads agent id with its versions, health and verification
// report in one catalog read.
func (a *API) agentDetail(c echo.Context, id string) (AgentDetail, error) {
	v, err := a.catalog.AgentView(c.Request().Context(), a.scope(c), id, a.now())
	if errors.Is(err, catalog.ErrNotFound) {
		// Unknown, or deleted since the caller last saw it.
		return AgentDetail{}, agentNotFound(id)
	}
	if err != nil {
		return AgentDetail{}, fmt.Errorf("loading agent %s: %w", id, err)
	}
	if v.Agent.Card == nil {
		return AgentDetail{}, fmt.Errorf("agent %s has no parsed card", id)
	}
	d := newAgentDetail(v)
	if d.Verification, err = a.scopeReport(c, d.Verification); err != nil {
		return AgentDetail{}, fmt.Errorf("agent %s: %w", id, err)
	}
	d.Annotations = newAnnotations(v.Annotations, a.seesNotes(c))
	ps, err := a.catalog.PolicyState(c.Request().Context(), a.scope(c), id)
	if err != nil {
		return AgentDetail{}, fmt.Errorf("agent %s: %w", id, err)
	}
	d.Policy = newAgentPolicy(ps)
	if d.Check, err = a.latestCheck(c.Request().Context(), a.scope(c), id); err != nil {
		return AgentDetail{}, err
	}
	d.Provenance, d.SourceEntries = []ProvenanceEntry{}, []SourceEntry{}
	if a.prov != nil {
		who := sources.AudienceViewer
		if a.seesNotes(c) {
			who = sources.AudienceOperator
		}
		o, err := sources.AgentOrigins(c.Request().Context(), a.prov, id, who)
		if err != nil {
			return AgentDetail{}, fmt.Errorf("agent %s: %w", id, err)
		}
		d.Provenance = newProvenance(o.Provenance)
		for _, e := range o.Entries {
			d.SourceEntries = append(d.SourceEntries, newEntryView(e))
		}
	}
	return d, nil
}
