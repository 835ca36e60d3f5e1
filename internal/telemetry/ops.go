package telemetry

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/a2aregistry/registry/internal/background"
	"github.com/a2aregistry/registry/internal/catalog"
)

// scrapeTimeout bounds the database queries one scrape makes.
const scrapeTimeout = 2 * time.Second

// VerifyStore is the verification runner's view of the catalog.
type VerifyStore interface {
	TrustGeneration(ctx context.Context) (int64, error)
	DueVerifications(ctx context.Context, now time.Time, limit int) ([]catalog.VerifyTarget, error)
	RecordVerifications(ctx context.Context, actor catalog.Actor, ins []catalog.VerificationInput) error
	VersionReport(ctx context.Context, agentID string, version int) (json.RawMessage, error)
}

// verificationStatuses bounds the status label to the catalog's values.
var verificationStatuses = map[string]bool{
	catalog.SignatureVerified: true, catalog.SignatureInvalid: true,
	catalog.SignatureUnsigned: true, catalog.SignatureKeyUnavailable: true,
}

// ObserveVerifications wraps the runner's store so that every stored
// report is counted by its signature status.
func (m *Metrics) ObserveVerifications(s VerifyStore) VerifyStore {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "registry_verifications_total",
		Help: "Verification reports stored, by signature status (verified, invalid, unsigned, key_unavailable).",
	}, []string{"status"})
	for st := range verificationStatuses {
		c.WithLabelValues(st) // every series exists from the start, at 0
	}
	m.reg.MustRegister(c)
	return &observedVerifyStore{VerifyStore: s, count: c}
}

type observedVerifyStore struct {
	VerifyStore
	count *prometheus.CounterVec
}

func (s *observedVerifyStore) RecordVerifications(ctx context.Context, actor catalog.Actor, ins []catalog.VerificationInput) error {
	if err := s.VerifyStore.RecordVerifications(ctx, actor, ins); err != nil {
		return err
	}
	for _, in := range ins {
		st := in.Status
		if !verificationStatuses[st] {
			st = "other"
		}
		s.count.WithLabelValues(st).Inc()
	}
	return nil
}

// QueueReader reports the crawl work waiting; *catalog.Store implements it.
type QueueReader interface {
	CrawlQueue(ctx context.Context, now time.Time) (catalog.CrawlQueue, error)
}

// RegisterCrawlQueue exports how many agents are due and unclaimed and
// how far the oldest of them is behind its schedule, read at scrape time
// (one query per scrape; every replica reports the same shared queue).
func (m *Metrics) RegisterCrawlQueue(q QueueReader) {
	m.reg.MustRegister(&queueCollector{q: q, now: time.Now,
		due: prometheus.NewDesc("registry_crawl_queue_due",
			"Agents whose check is due and that no replica has claimed.", nil, nil),
		lag: prometheus.NewDesc("registry_crawl_lag_seconds",
			"How far the most overdue unclaimed check is behind its schedule; 0 when none is due.", nil, nil),
	})
}

type queueCollector struct {
	q        QueueReader
	now      func() time.Time
	due, lag *prometheus.Desc
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.due; ch <- c.lag }

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	now := c.now()
	q, err := c.q.CrawlQueue(ctx, now)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.due, err)
		return
	}
	lag := 0.0
	if !q.OldestDue.IsZero() {
		lag = max(now.Sub(q.OldestDue).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.due, prometheus.GaugeValue, float64(q.Due))
	ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, lag)
}

// RegisterDBStats exports the database connection pool's statistics.
func (m *Metrics) RegisterDBStats(stats func() sql.DBStats) {
	m.reg.MustRegister(&dbStatsCollector{stats: stats,
		open:    prometheus.NewDesc("registry_db_connections_open", "Open database connections.", nil, nil),
		inUse:   prometheus.NewDesc("registry_db_connections_in_use", "Database connections in use.", nil, nil),
		idle:    prometheus.NewDesc("registry_db_connections_idle", "Idle database connections.", nil, nil),
		max:     prometheus.NewDesc("registry_db_connections_max", "Most database connections the pool opens.", nil, nil),
		waits:   prometheus.NewDesc("registry_db_waits_total", "Times a query waited for a free connection.", nil, nil),
		waitDur: prometheus.NewDesc("registry_db_wait_seconds_total", "Time spent waiting for a free connection.", nil, nil),
	})
}

type dbStatsCollector struct {
	stats                                  func() sql.DBStats
	open, inUse, idle, max, waits, waitDur *prometheus.Desc
}

func (c *dbStatsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.open, c.inUse, c.idle, c.max, c.waits, c.waitDur} {
		ch <- d
	}
}

func (c *dbStatsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(s.OpenConnections))
	ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, float64(s.InUse))
	ch <- prometheus.MustNewConstMetric(c.idle, prometheus.GaugeValue, float64(s.Idle))
	ch <- prometheus.MustNewConstMetric(c.max, prometheus.GaugeValue, float64(s.MaxOpenConnections))
	ch <- prometheus.MustNewConstMetric(c.waits, prometheus.CounterValue, float64(s.WaitCount))
	ch <- prometheus.MustNewConstMetric(c.waitDur, prometheus.CounterValue, s.WaitDuration.Seconds())
}

// IndexStats describes this process's search index.
type IndexStats struct {
	Ready bool
	// Agents counts the agents indexed; negative when unknown.
	Agents int
	// LastSync is when the index last caught up with the database (its
	// build, or a sync with the other replicas' writes); zero before.
	LastSync time.Time
}

// RegisterIndex exports the search index's state: whether it is built,
// its size, and its staleness (time since it last caught up with the
// database; other replicas' writes are at most this old when missing).
func (m *Metrics) RegisterIndex(stats func() IndexStats) {
	m.reg.MustRegister(&indexCollector{stats: stats, now: time.Now,
		ready:  prometheus.NewDesc("registry_search_index_ready", "1 when the search index is built.", nil, nil),
		agents: prometheus.NewDesc("registry_search_index_agents", "Agents in the search index.", nil, nil),
		age: prometheus.NewDesc("registry_search_index_staleness_seconds",
			"Time since the search index last caught up with the database (build or sync).", nil, nil),
	})
}

type indexCollector struct {
	stats              func() IndexStats
	now                func() time.Time
	ready, agents, age *prometheus.Desc
}

func (c *indexCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.ready
	ch <- c.agents
	ch <- c.age
}

func (c *indexCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ready := 0.0
	if s.Ready {
		ready = 1
	}
	ch <- prometheus.MustNewConstMetric(c.ready, prometheus.GaugeValue, ready)
	if s.Agents >= 0 {
		ch <- prometheus.MustNewConstMetric(c.agents, prometheus.GaugeValue, float64(s.Agents))
	}
	if !s.LastSync.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, max(c.now().Sub(s.LastSync).Seconds(), 0))
	}
}

// RegisterPriority exports how background work yields to requests (see
// background.Priority): requests in flight, background units running and
// waiting for a turn, and the seconds background work has waited in all.
// A crawl that keeps waiting is one that searches slow down.
func (m *Metrics) RegisterPriority(stats func() background.PriorityStats) {
	m.reg.MustRegister(&priorityCollector{stats: stats,
		fg: prometheus.NewDesc("registry_priority_requests_in_flight",
			"Reads people wait for (GET and HEAD of the API and console) being served.", nil, nil),
		running: prometheus.NewDesc("registry_priority_background_running",
			"Units of background work (crawl claims, writes and parsing, verification) running.", nil, nil),
		waiting: prometheus.NewDesc("registry_priority_background_waiting",
			"Units of background work waiting for a turn (while requests are served, and for 5 ms after).", nil, nil),
		waited: prometheus.NewDesc("registry_priority_background_wait_seconds_total",
			"Time background work has waited for a turn.", nil, nil),
	})
}

type priorityCollector struct {
	stats                        func() background.PriorityStats
	fg, running, waiting, waited *prometheus.Desc
}

func (c *priorityCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.fg
	ch <- c.running
	ch <- c.waiting
	ch <- c.waited
}

func (c *priorityCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(c.fg, prometheus.GaugeValue, float64(s.Foreground))
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(s.Background))
	ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(s.Waiting))
	ch <- prometheus.MustNewConstMetric(c.waited, prometheus.CounterValue, s.Waited.Seconds())
}

// EmbeddingStats describes search's semantic layer in this process.
type EmbeddingStats struct {
	Dimension int
	// Embedded counts the indexed agents with a vector of the configured
	// model; Agents all indexed agents.
	Embedded, Agents int
	VectorBytes      int
	// Requests to the embeddings API by kind and outcome; QueryFallbacks
	// counts searches answered by words alone because their text could
	// not be embedded.
	AgentsOK, AgentsFailed, QueriesOK, QueriesFailed int64
}

// RegisterEmbeddings exports the semantic layer's state; with it off,
// registry_embeddings_enabled is 0 and nothing else is exported.
func (m *Metrics) RegisterEmbeddings(stats func() (EmbeddingStats, bool)) {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	m.reg.MustRegister(&embeddingsCollector{stats: stats,
		enabled:   d("registry_embeddings_enabled", "1 when an embeddings API is configured (--embeddings-url)."),
		dim:       d("registry_embeddings_dimension", "Dimension of the configured model's vectors."),
		embedded:  d("registry_embeddings_agents_embedded", "Indexed agents with a vector of the configured model."),
		agents:    d("registry_embeddings_agents_indexed", "Agents in the search index."),
		requests:  d("registry_embeddings_requests_total", "Requests to the embeddings API by kind (agents, query) and result (ok, error).", "kind", "result"),
		fallbacks: d("registry_embeddings_query_fallbacks_total", "Searches answered by words alone because their text could not be embedded."),
		bytes:     d("registry_embeddings_vector_bytes", "Memory of the vectors held in this process."),
	})
}

type embeddingsCollector struct {
	stats                                                      func() (EmbeddingStats, bool)
	enabled, dim, embedded, agents, requests, fallbacks, bytes *prometheus.Desc
}

func (c *embeddingsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.enabled, c.dim, c.embedded, c.agents, c.requests, c.fallbacks, c.bytes} {
		ch <- d
	}
}

func (c *embeddingsCollector) Collect(ch chan<- prometheus.Metric) {
	s, on := c.stats()
	if !on {
		ch <- prometheus.MustNewConstMetric(c.enabled, prometheus.GaugeValue, 0)
		return
	}
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	gauge(c.enabled, 1)
	gauge(c.dim, float64(s.Dimension))
	gauge(c.embedded, float64(s.Embedded))
	gauge(c.agents, float64(s.Agents))
	gauge(c.bytes, float64(s.VectorBytes))
	for _, r := range []struct {
		kind, result string
		n            int64
	}{{"agents", "ok", s.AgentsOK}, {"agents", "error", s.AgentsFailed}, {"query", "ok", s.QueriesOK}, {"query", "error", s.QueriesFailed}} {
		ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(r.n), r.kind, r.result)
	}
	ch <- prometheus.MustNewConstMetric(c.fallbacks, prometheus.CounterValue, float64(s.QueriesFailed))
}
