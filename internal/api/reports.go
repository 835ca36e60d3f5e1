package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/report"
)

// SecurityReport is the body of GET /reports/security: the fleet's
// security posture in the caller's scope, each number with the search
// that lists its agents.
type SecurityReport struct {
	Agents         int           `json:"agents"`
	Signature      []ReportCount `json:"signature"`
	SecurityScheme []ReportCount `json:"security_scheme"`
	Anonymous      ReportCount   `json:"anonymous"`
	Findings       []ReportCount `json:"findings"`
	KeyChanges     ReportCount   `json:"key_changes"`
}

// ReportCount is one number of a report: Query is the search's filter
// parameters (the same on GET /agents and the console's search), Search
// the API URL that lists the agents counted.
type ReportCount struct {
	Value  string `json:"value"`
	Kind   string `json:"kind,omitempty"`
	Count  int    `json:"count"`
	Query  string `json:"query"`
	Search string `json:"search"`
}

func newReportCount(c report.Count) ReportCount {
	return ReportCount{Value: c.Value, Kind: c.Kind, Count: c.Count, Query: c.Query, Search: BasePath + "/agents?" + c.Query}
}

func newReportCounts(cs []report.Count) []ReportCount {
	out := make([]ReportCount, 0, len(cs))
	for _, c := range cs {
		out = append(out, newReportCount(c))
	}
	return out
}

// securityReport serves GET /reports/security. Role viewer: every number
// is a count of what the caller's search already lists (the signature,
// security_scheme and audit facets), in the caller's scope, so a higher
// role would protect nothing and would keep the report from the
// read-only security teams it is for.
func (a *API) securityReport(c echo.Context) error {
	r, err := report.SecurityReport(c.Request().Context(), a.catalog, a.scope(c))
	switch {
	case errors.Is(err, catalog.ErrIndexNotReady):
		c.Response().Header().Set("Retry-After", indexRetryAfter)
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the search index is still being built; retry shortly")
	case err != nil:
		return fmt.Errorf("reporting security: %w", err)
	}
	return c.JSON(http.StatusOK, SecurityReport{
		Agents:         r.Agents,
		Signature:      newReportCounts(r.Signature),
		SecurityScheme: newReportCounts(r.SecurityScheme),
		Anonymous:      newReportCount(r.Anonymous),
		Findings:       newReportCounts(r.Findings),
		KeyChanges:     newReportCount(r.KeyChanges),
	})
}
