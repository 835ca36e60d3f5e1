package web

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/report"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// mountPublishers adds the publisher pages, for viewers as the API's
// GET /publishers/{domain}: what the caller's own search filtered on the
// publisher shows.
func (h *Console) mountPublishers(e *echo.Echo) {
	e.GET("/publishers/:domain", h.publisher, h.guarded(auth.Viewer)...)
}

// publisherURL is the console page of publisher domain.
func publisherURL(domain string) string {
	return "/publishers/" + url.PathEscape(domain)
}

func (h *Console) publisher(c echo.Context) error {
	ctx := c.Request().Context()
	p, err := report.PublisherReport(ctx, h.opts.Searcher, h.scope(c), c.Param("domain"))
	switch {
	case errors.Is(err, report.ErrNoPublisher):
		return h.errorPage(c, http.StatusBadRequest, "No such publisher", "A publisher is a domain name, such as example.com, or an IP address.")
	case errors.Is(err, catalog.ErrNotFound):
		return h.errorPage(c, http.StatusNotFound, "No agents", "You can see no agent of this publisher.")
	case errors.Is(err, catalog.ErrIndexNotReady):
		c.Response().Header().Set("Retry-After", "5")
		return h.errorPage(c, http.StatusServiceUnavailable, "Starting up", "The search index is still being built; reload in a few seconds.")
	case err != nil:
		h.log.ErrorContext(ctx, "console publisher page failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not count the publisher's agents. The failure is in its log.")
	}
	if c.Param("domain") != p.Domain {
		// One address per publisher, however it was typed.
		return c.Redirect(http.StatusMovedPermanently, publisherURL(p.Domain))
	}
	v := view.Publisher{Domain: p.Domain, Agents: p.Agents, Verified: securityCount(p.Verified),
		Signature: securityCounts(p.Signature), Findings: securityCounts(p.Findings), Health: securityCounts(p.Health),
		SearchURL: "/?" + p.Search}
	for _, s := range p.Items {
		v.Results = append(v.Results, resultView(s))
	}
	return h.render(c, http.StatusOK, page{title: p.Domain, body: templates.PublisherPage(v)})
}
