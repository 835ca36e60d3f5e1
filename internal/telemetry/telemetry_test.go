package telemetry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/telemetry"
)

// testActor is who the tests write as.
var testActor = catalog.System("test")

type count int

func (c count) Count(context.Context) (int, error) { return int(c), nil }

type fakeStore struct{ results []catalog.UpsertResult }

func (fakeStore) ClaimDue(context.Context, time.Time, int, string, time.Duration) ([]catalog.CrawlTarget, error) {
	return nil, nil
}
func (f fakeStore) RecordFetches(context.Context, catalog.Actor, []catalog.FetchOutcome) ([]catalog.UpsertResult, error) {
	return f.results, nil
}
func (fakeStore) CrawlTarget(context.Context, string) (catalog.CrawlTarget, error) {
	return catalog.CrawlTarget{}, nil
}

func scrape(t *testing.T, m *telemetry.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestMetrics(t *testing.T) {
	m := telemetry.New(count(42))
	e := echo.New()
	e.Use(m.Middleware())
	e.GET("/api/v1/agents/:id", func(c echo.Context) error {
		if c.Param("id") == "missing" {
			return echo.NewHTTPError(http.StatusNotFound)
		}
		return c.String(http.StatusOK, "ok")
	})
	for _, id := range []string{"a", "b", "missing"} {
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/agents/"+id, nil))
	}
	store := m.ObserveCrawl(fakeStore{results: []catalog.UpsertResult{{NewVersion: true}, {}, {}}})
	if _, err := store.RecordFetches(context.Background(), testActor, []catalog.FetchOutcome{
		{Status: 200, Latency: 20 * time.Millisecond},
		{Status: 304, NotModified: true, Latency: 5 * time.Millisecond},
		{Class: "timeout", Latency: 10 * time.Second},
	}); err != nil {
		t.Fatal(err)
	}
	out := scrape(t, m)
	for _, want := range []string{
		`registry_agents 42`,
		`registry_http_request_duration_seconds_count{code="200",method="GET",route="/api/v1/agents/:id"} 2`,
		`registry_http_request_duration_seconds_count{code="404",method="GET",route="/api/v1/agents/:id"} 1`,
		`registry_crawl_checks_total{result="ok"} 1`,
		`registry_crawl_checks_total{result="not_modified"} 1`,
		`registry_crawl_checks_total{result="timeout"} 1`,
		`registry_crawl_fetch_duration_seconds_count{ok="false"} 1`,
		`registry_card_versions_stored_total 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	checkDocumented(t, out)
}

// A failed write records nothing: the outcomes were not stored.
func TestObserveCrawlFailure(t *testing.T) {
	m := telemetry.New(nil)
	store := m.ObserveCrawl(failingStore{})
	if _, err := store.RecordFetches(context.Background(), testActor, []catalog.FetchOutcome{{Status: 200}}); err == nil {
		t.Fatal("error swallowed")
	}
	if out := scrape(t, m); strings.Contains(out, `registry_crawl_checks_total{`) {
		t.Errorf("failed write counted: %s", out)
	}
}

type failingStore struct{ fakeStore }

func (failingStore) RecordFetches(context.Context, catalog.Actor, []catalog.FetchOutcome) ([]catalog.UpsertResult, error) {
	return nil, errors.New("disk full")
}

// An attack run grew /metrics from 61 KB to 4.2 MB with 2,000 made-up
// methods: the method label must not take values from the client.
func TestMethodLabelIsBounded(t *testing.T) {
	m := telemetry.New(nil)
	e := echo.New()
	e.Use(m.Middleware())
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	for i := range 200 {
		method := "X" + strings.Repeat("Y", i)
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, "/healthz", nil))
	}
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/healthz", nil))
	out := scrape(t, m)
	series := 0
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "registry_http_request_duration_seconds_count{") {
			series++
		}
	}
	if series != 2 {
		t.Errorf("got %d request series, want 2 (GET and other):\n%s", series, out)
	}
	if !strings.Contains(out, `method="other"`) {
		t.Errorf("made-up methods are not counted as other")
	}
}

// checkDocumented fails for each registry_* family in a scrape that
// docs/operations.md does not list, so a new metric cannot ship
// undocumented.
func checkDocumented(t *testing.T, scraped string) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatalf("docs/operations.md not readable: %v", err)
	}
	found := 0
	for line := range strings.Lines(scraped) {
		name, ok := strings.CutPrefix(line, "# HELP ")
		if !ok || !strings.HasPrefix(name, "registry_") {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		found++
		// Named in backticks, alone or with its labels: `name` or `name{…}`.
		if !strings.Contains(string(doc), "`"+name+"`") && !strings.Contains(string(doc), "`"+name+"{") {
			t.Errorf("docs/operations.md does not list the metric %s", name)
		}
	}
	if found == 0 {
		t.Error("no registry_* metric in the scrape")
	}
}
