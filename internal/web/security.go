package web

import (
	"errors"
	"fmt"
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
	r, err := report.SecurityReport(ctx, h.opts.Searcher, h.scope(c), h.now())
	switch {
	case errors.Is(err, catalog.ErrIndexNotReady):
		c.Response().Header().Set("Retry-After", "5")
		return h.errorPage(c, http.StatusServiceUnavailable, "Starting up", "The search index is still being built; reload in a few seconds.")
	case err != nil:
		h.log.ErrorContext(ctx, "console security report failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not count the agents. The failure is in its log.")
	}
	v := view.Security{Agents: r.Agents, Signature: securityCounts(r.Signature), Schemes: securityCounts(r.SecurityScheme),
		Findings: securityCounts(r.Findings), Severity: securityCounts(r.Severity), Anonymous: securityCount(r.Anonymous), KeyChanges: securityCount(r.KeyChanges),
		RecentKeyChanges:  securityCount(r.RecentKeyChanges),
		PlainHTTP:         securityCount(r.PlainHTTP),
		PublisherVerified: securityCount(r.PublisherVerified), Policy: securityCounts(r.Policy)}
	if h.opts.History != nil {
		sc := h.scope(c)
		days, err := report.History(ctx, h.opts.History, sc, h.now())
		if err != nil {
			// The numbers of today stand without their history.
			h.log.ErrorContext(ctx, "console security history failed", "err", err)
		}
		v.Charts = securityCharts(days)
		v.HistoryNote = "Each day's numbers as they stood when the registry recorded them, for every agent."
		if catalog.HistoryScopeOf(sc) == catalog.HistoryScopePublic {
			v.HistoryNote = "Each day's numbers as they stood when the registry recorded them, for the agents every viewer sees."
		}
	}
	return h.render(c, http.StatusOK, page{title: "Security", body: templates.SecurityPage(v)})
}

// securityCharts draws the report's history: the fleet and its signed
// agents, and what needs a look.
func securityCharts(days []catalog.SecurityDay) []view.Chart {
	if len(days) == 0 {
		return nil
	}
	labels := make([]string, len(days))
	col := func(f func(catalog.SecurityDay) int) []int {
		out := make([]int, len(days))
		for i, d := range days {
			out[i] = f(d)
		}
		return out
	}
	for i, d := range days {
		labels[i] = d.Day
	}
	span := fmt.Sprintf("from %s to %s", labels[0], labels[len(labels)-1])
	return []view.Chart{
		view.NewChart("chart-fleet", "Agents and signatures", "Agents, agents with a verified signature and agents from a verified publisher, per day "+span+".", labels,
			view.SeriesInput{Name: "agents", Class: "series-1", Values: col(func(d catalog.SecurityDay) int { return d.Agents })},
			view.SeriesInput{Name: "signature verified", Class: "series-2", Values: col(func(d catalog.SecurityDay) int { return d.SignatureVerified })},
			view.SeriesInput{Name: "verified publisher", Class: "series-3", Values: col(func(d catalog.SecurityDay) int { return d.PublisherVerified })}),
		view.NewChart("chart-risk", "What needs a look", "Anonymous agents, invalid signatures, agents with an interface over plain http and agents signed by a new key within 30 days, per day "+span+".", labels,
			view.SeriesInput{Name: "anonymous", Class: "series-4", Values: col(func(d catalog.SecurityDay) int { return d.Anonymous })},
			view.SeriesInput{Name: "signature invalid", Class: "series-5", Values: col(func(d catalog.SecurityDay) int { return d.SignatureInvalid })},
			view.SeriesInput{Name: "plain http", Class: "series-3", Values: col(func(d catalog.SecurityDay) int { return d.PlainHTTP })},
			view.SeriesInput{Name: "new signing key (30 days)", Class: "series-6", Values: col(func(d catalog.SecurityDay) int { return d.KeyChanges30d })}),
		view.NewChart("chart-findings", "Findings by severity", "Agents with security-audit or content-scan findings of each severity, per day "+span+".", labels,
			view.SeriesInput{Name: "error", Class: "series-5", Values: col(func(d catalog.SecurityDay) int { return d.FindingsError })},
			view.SeriesInput{Name: "warning", Class: "series-4", Values: col(func(d catalog.SecurityDay) int { return d.FindingsWarning })},
			view.SeriesInput{Name: "info", Class: "series-1", Values: col(func(d catalog.SecurityDay) int { return d.FindingsInfo })}),
	}
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
