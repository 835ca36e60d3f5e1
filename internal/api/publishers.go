package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/report"
)

// PublisherResponse is the body of GET /publishers/{domain}: one
// publisher's agents the caller sees, with their signature coverage,
// findings and health, each number with the search listing its agents.
type PublisherResponse struct {
	Domain string `json:"domain"`
	// Agents counts the publisher's agents the caller sees;
	// VerifiedAgents those whose publisher proved it holds their signing
	// key.
	Agents         int           `json:"agents"`
	VerifiedAgents ReportCount   `json:"verified_agents"`
	Signature      []ReportCount `json:"signature"`
	Findings       []ReportCount `json:"findings"`
	Health         []ReportCount `json:"health"`
	// Items are the first report.PublisherAgentsLimit agents; Search
	// lists every one.
	Items  []Summary `json:"items"`
	Search string    `json:"search"`
}

// getPublisher serves GET /publishers/{domain}. Role viewer: every number
// is the caller's own search filtered on publisher, in their scope; a
// publisher none of whose agents the caller sees is 404, as one unknown.
func (a *API) getPublisher(c echo.Context) error {
	p, err := report.PublisherReport(c.Request().Context(), a.catalog, a.scope(c), c.Param("domain"))
	switch {
	case errors.Is(err, report.ErrNoPublisher):
		return invalidParameter("domain", "%s", err.Error())
	case errors.Is(err, catalog.ErrNotFound):
		return newError(http.StatusNotFound, CodeNotFound, "no agent of publisher %s", p.Domain)
	case errors.Is(err, catalog.ErrIndexNotReady):
		c.Response().Header().Set("Retry-After", indexRetryAfter)
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the search index is still being built; retry shortly")
	case err != nil:
		return fmt.Errorf("reporting on a publisher: %w", err)
	}
	out := PublisherResponse{
		Domain: p.Domain, Agents: p.Agents, VerifiedAgents: newReportCount(p.Verified),
		Signature: newReportCounts(p.Signature), Findings: newReportCounts(p.Findings), Health: newReportCounts(p.Health),
		Items: make([]Summary, 0, len(p.Items)), Search: BasePath + "/agents?" + p.Search,
	}
	for _, s := range p.Items {
		out.Items = append(out.Items, newSummary(s))
	}
	return c.JSON(http.StatusOK, out)
}
