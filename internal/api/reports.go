package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

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
	// Severity counts agents per finding severity: error, warning, info.
	Severity   []ReportCount `json:"severity"`
	KeyChanges ReportCount   `json:"key_changes"`
	// RecentKeyChanges counts the key changes of the last 30 days.
	RecentKeyChanges ReportCount `json:"key_changes_30d"`
	// PlainHTTP counts agents declaring an interface over plain http.
	PlainHTTP ReportCount `json:"plain_http"`
	// PublisherVerified counts agents whose publisher proved it holds
	// the signing key.
	PublisherVerified ReportCount `json:"publisher_verified"`
	// History is the report's headline numbers per day, oldest first,
	// over the last report.HistoryDays days; [] when none is recorded.
	History []ReportDay `json:"history"`
	// Policy counts agents per admission-policy rule failing, or
	// errored, on the current card.
	Policy []ReportCount `json:"policy"`
}

// ReportDay is one day of the security report's history. Scope is `all`
// (every agent: the history an admin reads) or `public` (the agents every
// viewer sees: the history everyone else reads).
type ReportDay struct {
	Day               string    `json:"day"`
	Scope             string    `json:"scope"`
	TakenAt           time.Time `json:"taken_at"`
	Agents            int       `json:"agents"`
	SignatureVerified int       `json:"signature_verified"`
	SignatureInvalid  int       `json:"signature_invalid"`
	Unsigned          int       `json:"unsigned"`
	KeyUnavailable    int       `json:"key_unavailable"`
	Unchecked         int       `json:"unchecked"`
	Anonymous         int       `json:"anonymous"`
	KeyChanges        int       `json:"key_changes"`
	PublisherVerified int       `json:"publisher_verified"`
	// FindingsError, FindingsWarning and FindingsInfo count agents with
	// findings of that severity; PlainHTTP agents declaring an interface
	// over plain http; KeyChanges30d the key changes of the last 30 days.
	// Days recorded before these existed hold 0.
	FindingsError   int `json:"findings_error"`
	FindingsWarning int `json:"findings_warning"`
	FindingsInfo    int `json:"findings_info"`
	PlainHTTP       int `json:"plain_http"`
	KeyChanges30d   int `json:"key_changes_30d"`
}

func newReportDays(days []catalog.SecurityDay) []ReportDay {
	out := make([]ReportDay, 0, len(days))
	for _, d := range days {
		out = append(out, ReportDay{Day: d.Day, Scope: d.Scope, TakenAt: d.TakenAt, Agents: d.Agents,
			SignatureVerified: d.SignatureVerified, SignatureInvalid: d.SignatureInvalid, Unsigned: d.Unsigned,
			KeyUnavailable: d.KeyUnavailable, Unchecked: d.Unchecked, Anonymous: d.Anonymous, KeyChanges: d.KeyChanges,
			PublisherVerified: d.PublisherVerified, FindingsError: d.FindingsError, FindingsWarning: d.FindingsWarning,
			FindingsInfo: d.FindingsInfo, PlainHTTP: d.PlainHTTP, KeyChanges30d: d.KeyChanges30d})
	}
	return out
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
	ctx := c.Request().Context()
	r, err := report.SecurityReport(ctx, a.catalog, a.scope(c), time.Now())
	switch {
	case errors.Is(err, catalog.ErrIndexNotReady):
		c.Response().Header().Set("Retry-After", indexRetryAfter)
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the search index is still being built; retry shortly")
	case err != nil:
		return fmt.Errorf("reporting security: %w", err)
	}
	var days []catalog.SecurityDay
	if a.history != nil {
		if days, err = report.History(ctx, a.history, a.scope(c), time.Now()); err != nil {
			return fmt.Errorf("reporting security: %w", err)
		}
	}
	return c.JSON(http.StatusOK, SecurityReport{
		Agents:            r.Agents,
		Signature:         newReportCounts(r.Signature),
		SecurityScheme:    newReportCounts(r.SecurityScheme),
		Anonymous:         newReportCount(r.Anonymous),
		Findings:          newReportCounts(r.Findings),
		Severity:          newReportCounts(r.Severity),
		KeyChanges:        newReportCount(r.KeyChanges),
		RecentKeyChanges:  newReportCount(r.RecentKeyChanges),
		PlainHTTP:         newReportCount(r.PlainHTTP),
		PublisherVerified: newReportCount(r.PublisherVerified),
		History:           newReportDays(days),
		Policy:            newReportCounts(r.Policy),
	})
}
