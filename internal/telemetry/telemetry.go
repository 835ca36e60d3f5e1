// Package telemetry exposes the registry's Prometheus metrics: HTTP
// requests, crawl outcomes and catalog size. Metrics are recorded at the
// composition root (middleware and store decorators), so the crawler and the
// catalog stay free of a metrics dependency.
package telemetry

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/a2aregistry/registry/internal/catalog"
)

// Metrics is one registry's set of collectors, on a registry of its own
// (no global state, so tests can build as many as they like).
type Metrics struct {
	reg *prometheus.Registry

	requests *prometheus.HistogramVec
	checks   *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	versions prometheus.Counter
}

// Counter reports how many agents the catalog holds, for a gauge read at
// scrape time.
type Counter interface {
	Count(ctx context.Context) (int, error)
}

// New registers the registry's metrics; agents, when set, backs the
// registry_agents gauge.
func New(agents Counter) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "registry_http_request_duration_seconds",
			Help:    "HTTP requests by route, method and status code.",
			Buckets: []float64{.001, .0025, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"route", "method", "code"}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "registry_crawl_checks_total",
			Help: "Agent card checks by result: ok, not_modified, or the failure class (dns, timeout, http_5xx, …).",
		}, []string{"result"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "registry_crawl_fetch_duration_seconds",
			Help:    "Time to fetch an agent card, by whether the check succeeded.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 10),
		}, []string{"ok"}),
		versions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "registry_card_versions_stored_total",
			Help: "New card versions stored by the crawler (the bytes changed).",
		}),
	}
	m.reg.MustRegister(m.requests, m.checks, m.latency, m.versions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if agents != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "registry_agents",
			Help: "Agents in the catalog.",
		}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := agents.Count(ctx)
			if err != nil {
				return -1
			}
			return float64(n)
		}))
	}
	return m
}

// Handler serves the metrics in the Prometheus text format. A gauge that
// cannot be read in time (the crawl queue's count, which asks the
// database, on a loaded server) is left out of that scrape; the rest are
// still served, rather than the whole scrape failing with a 500 when the
// server is busiest and its metrics matter most.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Middleware times every request. The route pattern (/api/v1/agents/:id),
// not the path, is the label, so agent ids do not explode the series count.
func (m *Metrics) Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				// Render now so the recorded status is the one sent.
				c.Error(err)
			}
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			m.requests.WithLabelValues(route, methodLabel(c.Request().Method), strconv.Itoa(c.Response().Status)).
				Observe(time.Since(start).Seconds())
			return nil
		}
	}
}

// methodLabel bounds the method label: a client may send any token as a
// method (RFC 9110 §9.1 allows extension methods), and each distinct one
// would otherwise become a series of its own that lives until the process
// ends. The methods of RFC 9110 §9.3 and PATCH (RFC 5789) keep their name;
// anything else is "other".
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "other"
}

// CrawlStore is the crawler's view of the catalog.
type CrawlStore interface {
	ClaimDue(ctx context.Context, now time.Time, limit int, owner string, lease time.Duration) ([]catalog.CrawlTarget, error)
	RecordFetches(ctx context.Context, actor catalog.Actor, outs []catalog.FetchOutcome) ([]catalog.UpsertResult, error)
	CrawlTarget(ctx context.Context, agentID string) (catalog.CrawlTarget, error)
}

// ObserveCrawl wraps a crawl store so that every recorded outcome is
// counted.
func (m *Metrics) ObserveCrawl(s CrawlStore) CrawlStore {
	return &observedStore{CrawlStore: s, m: m}
}

type observedStore struct {
	CrawlStore
	m *Metrics
}

func (s *observedStore) RecordFetches(ctx context.Context, actor catalog.Actor, outs []catalog.FetchOutcome) ([]catalog.UpsertResult, error) {
	res, err := s.CrawlStore.RecordFetches(ctx, actor, outs)
	if err != nil {
		return res, err
	}
	for i, o := range outs {
		result, ok := o.Class, "false"
		switch {
		case o.Class != "":
		case o.NotModified:
			result, ok = "not_modified", "true"
		default:
			result, ok = "ok", "true"
		}
		s.m.checks.WithLabelValues(result).Inc()
		s.m.latency.WithLabelValues(ok).Observe(o.Latency.Seconds())
		if i < len(res) && res[i].NewVersion {
			s.m.versions.Inc()
		}
	}
	return res, nil
}
