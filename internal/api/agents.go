package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
)

// Search input bounds beyond those of catalog. Filter values are short
// tokens (tags, media types, scheme names); the bounds keep the work of
// one request small.
const (
	maxFilterValues   = 20
	maxFilterValueLen = 200
	maxCursorLen      = 1024
	maxIDLen          = 200
)

// enumFilters lists the filters whose values the registry itself
// assigns, so any other value is a typo rather than a search that
// matches nothing.
var enumFilters = map[string][]string{
	catalog.FieldSignature: {
		catalog.SignatureUnchecked, catalog.SignatureVerified, catalog.SignatureInvalid,
		catalog.SignatureUnsigned, catalog.SignatureKeyUnavailable,
	},
	catalog.FieldHealth:  {catalog.HealthUnknown, catalog.HealthUp, catalog.HealthDown, catalog.HealthStale, catalog.HealthRemoved},
	catalog.FieldWorks:   {catalog.WorksAll, catalog.WorksSome, catalog.WorksNone, catalog.WorksUnchecked},
	catalog.FieldListing: catalog.ListingStates,
}

const (
	paramText   = "q"
	paramLimit  = "limit"
	paramCursor = "cursor"
)

// indexRetryAfter is the Retry-After, in seconds, of a search refused while
// the index is built: builds take seconds (about 15 at 100,000 agents).
const indexRetryAfter = "5"

func (a *API) searchAgents(c echo.Context) error {
	start := time.Now()
	q, err := parseSearch(c.Request().URL.RawQuery)
	if err != nil {
		return err
	}
	q.Scope = a.scope(c)
	page, err := a.catalog.Search(c.Request().Context(), q)
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
	c.Response().Header().Set("Server-Timing", fmt.Sprintf("search;dur=%.2f, index-wait;dur=%.2f, index;dur=%.2f, page;dur=%.2f",
		ms(time.Since(start)), ms(page.Timing.IndexWait), ms(page.Timing.Index), ms(page.Timing.Load)))
	return c.JSON(http.StatusOK, newSearchResponse(page))
}

// parseSearch is strict: an unknown or repeated parameter is an error
// rather than silently ignored, so a misspelled filter (tags=…) does not
// return unfiltered results that look filtered.
func parseSearch(rawQuery string) (catalog.Query, error) {
	var q catalog.Query
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return q, newError(http.StatusBadRequest, CodeInvalidParameter, "malformed query string")
	}
	filters := make(map[string][]string)
	for name, vals := range values {
		switch name {
		case paramText, paramLimit, paramCursor:
			if len(vals) > 1 {
				return q, invalidParameter(name, "parameter %s given %d times; give it once", name, len(vals))
			}
			continue
		}
		if !slices.Contains(catalog.FilterFields, name) {
			return q, invalidParameter(name, "unknown parameter %q", name)
		}
		if len(vals) > maxFilterValues {
			return q, invalidParameter(name, "at most %d values of %s", maxFilterValues, name)
		}
		for _, v := range vals {
			if v == "" || len(v) > maxFilterValueLen || !utf8.ValidString(v) {
				return q, invalidParameter(name, "each %s value must be 1 to %d bytes of UTF-8", name, maxFilterValueLen)
			}
		}
		if name == catalog.FieldLabel {
			for _, v := range vals {
				if _, _, ok := catalog.ParseLabelFilter(v); !ok {
					return q, invalidParameter(name, "label must be key or key:value, the key 1 to %d characters of a-z, 0-9, '.', '_', '-', '/'",
						catalog.MaxLabelKeyLen)
				}
			}
		}
		if allowed, ok := enumFilters[name]; ok {
			for _, v := range vals {
				if !slices.Contains(allowed, v) {
					return q, invalidParameter(name, "%s must be one of %s", name, strings.Join(allowed, ", "))
				}
			}
		}
		filters[name] = vals
	}
	if len(filters) > 0 {
		q.Filters = filters
	}

	q.Text = values.Get(paramText)
	if !utf8.ValidString(q.Text) || utf8.RuneCountInString(q.Text) > catalog.MaxQueryTextLen {
		return q, invalidParameter(paramText, "q must be UTF-8 text of at most %d characters", catalog.MaxQueryTextLen)
	}

	q.Limit = catalog.DefaultLimit
	if s := values.Get(paramLimit); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || !isDigits(s) || n < 1 || n > catalog.MaxLimit {
			return q, invalidParameter(paramLimit, "limit must be an integer from 1 to %d", catalog.MaxLimit)
		}
		q.Limit = n
	}

	q.Cursor = values.Get(paramCursor)
	if len(q.Cursor) > maxCursorLen {
		e := newError(http.StatusBadRequest, CodeInvalidCursor, "cursor is invalid or expired; repeat the search without it")
		e.body.Parameter = paramCursor
		return q, e
	}
	return q, nil
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
	if d.Check, err = a.latestCheck(c.Request().Context(), a.scope(c), id); err != nil {
		return AgentDetail{}, err
	}
	return d, nil
}
