package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
)

var _ CrawlStatus = (*catalog.Store)(nil)

// TestCrawlerPage: due agents and a failing host with its error class; a
// viewer has no link and, with sign-in on, no page.
func TestCrawlerPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.console = New(Options{Searcher: f.store, Agents: f.store, Crawl: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	now := time.Now().UTC()
	if _, err := f.store.RecordFetches(context.Background(), catalog.System("crawler"), []catalog.FetchOutcome{{
		AgentID: f.ids["evil"], At: now, Class: "tls", Message: "m", ConsecutiveFailures: 2, Health: catalog.HealthDown,
		NextCheckAt: now.Add(time.Hour),
	}}); err != nil {
		t.Fatal(err)
	}
	rec := f.get(t, "/crawler", nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /crawler = %d", rec.Code)
	}
	for _, want := range []string{"evil.example", ">tls<", "behind its schedule", `href="/crawler"`} {
		if !strings.Contains(body, want) {
			t.Errorf("crawler page lacks %q", want)
		}
	}

	viewer := func(echo.Context) (Principal, bool) { return Principal{Name: "v", Role: auth.Viewer}, true }
	g := newFixture(t, fixtureOptions{})
	g.console = New(Options{Searcher: g.store, Agents: g.store, Crawl: g.store, Principal: viewer, Authorizer: denyAll{}, Logger: quietLog})
	g.e = echo.New()
	g.console.Mount(g.e)
	if rec := g.get(t, "/crawler", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("crawler page without the role = %d, want 401", rec.Code)
	}
}
