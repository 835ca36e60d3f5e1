package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/report"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// mountSecurity adds the fleet security report, for viewers as the API's
// GET /reports/security: every number is what the caller's own search
// facets already show.
func (h *Console) mountSecurity(e *echo.Echo) {
	e.GET("/security", h.security, h.guarded(auth.Viewer)...)
}

func (h *Console) security(c echo.Context) error {
	ctx := c.Request().Context()
	r, err := report.SecurityReport(ctx, h.opts.Searcher, h.scope(c))
	switch {
	case errors.Is(err, catalog.ErrIndexNotReady):
		c.Response().Header().Set("Retry-After", "5")
		return h.errorPage(c, http.StatusServiceUnavailable, "Starting up", "The search index is still being built; reload in a few seconds.")
	case err != nil:
		h.log.ErrorContext(ctx, "console security report failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not count the agents. The failure is in its log.")
	}
	v := view.Security{Agents: r.Agents, Signature: securityCounts(r.Signature), Schemes: securityCounts(r.SecurityScheme),
		Findings: securityCounts(r.Findings), Anonymous: securityCount(r.Anonymous), KeyChanges: securityCount(r.KeyChanges)}
	return h.render(c, http.StatusOK, page{title: "Security", body: templates.SecurityPage(v)})
}

// securityCount links a number to the console search listing its agents:
// the report's query is the search's own filter parameters.
func securityCount(c report.Count) view.SecurityCount {
	return view.SecurityCount{Label: c.Value, Kind: c.Kind, Count: c.Count, URL: "/?" + c.Query}
}

func securityCounts(cs []report.Count) []view.SecurityCount {
	out := make([]view.SecurityCount, 0, len(cs))
	for _, c := range cs {
		out = append(out, securityCount(c))
	}
	return out
}
