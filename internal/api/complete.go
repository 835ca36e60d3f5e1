package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/query"
)

// CompletionsResponse is the body of GET /completions.
type CompletionsResponse struct {
	Completions []Completion `json:"completions"`
}

// Completion is a value a search box may offer: the filter that selects
// it and how many agents the caller sees carry it.
type Completion struct {
	Field string `json:"field"`
	Value string `json:"value"`
	Count int    `json:"count"`
}

// completeAgents answers GET /completions?q=…: the tags and skill names
// of the agents the caller sees that what was typed begins.
func (a *API) completeAgents(c echo.Context) error {
	values, err := url.ParseQuery(c.Request().URL.RawQuery)
	if err != nil {
		return newError(http.StatusBadRequest, CodeInvalidQuery, "the query string is malformed")
	}
	for name, vs := range values {
		switch {
		case name != query.ParamText && name != paramLimit:
			return invalidParameter(name, "unknown parameter %q: only q and limit", name)
		case len(vs) > 1:
			return invalidParameter(name, "%s may be given once", name)
		}
	}
	limit := 0
	if s := values.Get(paramLimit); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > catalog.MaxCompletions {
			return invalidParameter(paramLimit, "limit must be an integer from 1 to %d", catalog.MaxCompletions)
		}
	}
	got, err := a.catalog.Complete(c.Request().Context(), a.scope(c), values.Get(query.ParamText), limit)
	switch {
	case errors.Is(err, catalog.ErrInvalidQuery):
		e := newError(http.StatusBadRequest, CodeInvalidQuery, "%v", err)
		e.body.Parameter = query.ParamText
		return e
	case errors.Is(err, catalog.ErrIndexNotReady):
		c.Response().Header().Set("Retry-After", indexRetryAfter)
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the search index is still being built; retry shortly")
	case err != nil:
		return fmt.Errorf("completing: %w", err)
	}
	out := CompletionsResponse{Completions: make([]Completion, len(got))}
	for i, g := range got {
		out.Completions[i] = Completion{Field: g.Field, Value: g.Value, Count: g.Count}
	}
	return c.JSON(http.StatusOK, out)
}
