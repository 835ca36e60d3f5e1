package web

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// CrawlStatus reports the crawl's backlog and its failures, as GET
// /api/v1/crawler does; *catalog.Store implements it.
type CrawlStatus interface {
	CrawlQueue(ctx context.Context, now time.Time) (catalog.CrawlQueue, error)
	FailingHosts(ctx context.Context, limit int) ([]catalog.FailingHost, error)
}

// crawlPageHosts bounds the failing hosts the page lists.
const crawlPageHosts = 50

// mountCrawl adds the crawler status page, for the editors who act on
// failing agents.
func (h *Console) mountCrawl(e *echo.Echo) {
	if h.opts.Crawl == nil {
		return
	}
	e.GET("/crawler", h.crawlStatus, h.guarded(auth.Editor)...)
}

func (h *Console) crawlStatus(c echo.Context) error {
	ctx := c.Request().Context()
	now := h.now()
	q, err := h.opts.Crawl.CrawlQueue(ctx, now)
	var hosts []catalog.FailingHost
	if err == nil {
		hosts, err = h.opts.Crawl.FailingHosts(ctx, crawlPageHosts)
	}
	if err != nil {
		h.log.ErrorContext(ctx, "console crawler status failed", "err", err)
		return h.errorPage(c, http.StatusInternalServerError, "Something went wrong", "The registry could not read the crawl's state. The failure is in its log.")
	}
	v := view.Crawl{Due: q.Due, OldestDue: q.OldestDue}
	if !q.OldestDue.IsZero() && now.After(q.OldestDue) {
		v.Lag = now.Sub(q.OldestDue).Round(time.Second)
	}
	for _, fh := range hosts {
		v.Failing = append(v.Failing, view.FailingHost{Host: fh.Host, Agents: fh.Agents, Class: fh.LastErrorClass, At: fh.LastErrorAt})
	}
	return h.render(c, http.StatusOK, page{title: "Crawler", body: templates.CrawlPage(v)})
}
