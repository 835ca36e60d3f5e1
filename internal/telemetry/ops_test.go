package telemetry_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/background"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/telemetry"
)

type fakeVerifyStore struct{}

func (fakeVerifyStore) TrustGeneration(context.Context) (int64, error) { return 0, nil }
func (fakeVerifyStore) DueVerifications(context.Context, time.Time, int) ([]catalog.VerifyTarget, error) {
	return nil, nil
}
func (fakeVerifyStore) RecordVerifications(context.Context, catalog.Actor, []catalog.VerificationInput) error {
	return nil
}
func (fakeVerifyStore) VersionReport(context.Context, string, int) (json.RawMessage, error) {
	return nil, nil
}

type queue catalog.CrawlQueue

func (q queue) CrawlQueue(context.Context, time.Time) (catalog.CrawlQueue, error) {
	return catalog.CrawlQueue(q), nil
}

// slowQueue is a crawl queue whose count does not come back in time.
type slowQueue struct{}

func (slowQueue) CrawlQueue(ctx context.Context, _ time.Time) (catalog.CrawlQueue, error) {
	return catalog.CrawlQueue{}, fmt.Errorf("reading crawl queue: %w", context.DeadlineExceeded)
}

// A gauge that cannot be read leaves only itself out of the scrape: the
// other metrics are still served, with 200.
func TestMetricsServedWhenAGaugeFails(t *testing.T) {
	m := telemetry.New(nil)
	m.RegisterCrawlQueue(slowQueue{})
	m.RegisterDBStats(func() sql.DBStats { return sql.DBStats{MaxOpenConnections: 16} })
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	out := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(out, "registry_db_connections_max 16") {
		t.Fatalf("status %d, body:\n%s", rec.Code, out)
	}
	if strings.Contains(out, "registry_crawl_queue_due ") {
		t.Errorf("the failed gauge is served:\n%s", out)
	}
}

func TestOpsMetrics(t *testing.T) {
	m := telemetry.New(nil)
	vs := m.ObserveVerifications(fakeVerifyStore{})
	if err := vs.RecordVerifications(context.Background(), catalog.System("test"), []catalog.VerificationInput{
		{Status: catalog.SignatureVerified}, {Status: catalog.SignatureUnsigned}, {Status: catalog.SignatureUnsigned},
		{Status: "made-up"},
	}); err != nil {
		t.Fatal(err)
	}
	m.RegisterCrawlQueue(queue{Due: 7, OldestDue: time.Now().Add(-time.Hour)})
	m.RegisterDBStats(func() sql.DBStats { return sql.DBStats{MaxOpenConnections: 16, OpenConnections: 3, InUse: 1, Idle: 2} })
	m.RegisterIndex(func() telemetry.IndexStats {
		return telemetry.IndexStats{Ready: true, Agents: 120, LastSync: time.Now().Add(-3 * time.Second)}
	})
	m.RegisterPriority(func() background.PriorityStats {
		return background.PriorityStats{Foreground: 2, Background: 1, Waiting: 4, Waited: 1500 * time.Millisecond}
	})
	m.RegisterEmbeddings(func() (telemetry.EmbeddingStats, bool) {
		return telemetry.EmbeddingStats{Dimension: 384, Embedded: 100, Agents: 120, VectorBytes: 1 << 20,
			AgentsOK: 4, QueriesOK: 9, QueriesFailed: 2}, true
	})
	out := scrape(t, m)
	for _, want := range []string{
		`registry_verifications_total{status="verified"} 1`,
		`registry_verifications_total{status="unsigned"} 2`,
		`registry_verifications_total{status="invalid"} 0`,
		`registry_verifications_total{status="other"} 1`,
		"registry_crawl_queue_due 7",
		"registry_crawl_lag_seconds 3600",
		"registry_db_connections_max 16",
		"registry_db_connections_in_use 1",
		"registry_search_index_ready 1",
		"registry_search_index_agents 120",
		"registry_search_index_staleness_seconds 3",
		"registry_priority_requests_in_flight 2",
		"registry_priority_background_running 1",
		"registry_priority_background_waiting 4",
		"registry_priority_background_wait_seconds_total 1.5",
		"registry_embeddings_enabled 1",
		"registry_embeddings_dimension 384",
		"registry_embeddings_agents_embedded 100",
		"registry_embeddings_agents_indexed 120",
		`registry_embeddings_requests_total{kind="query",result="error"} 2`,
		"registry_embeddings_query_fallbacks_total 2",
		"registry_embeddings_vector_bytes 1.048576e+06",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	checkDocumented(t, out)
}

// A catalog with nothing due lags by nothing, and an index whose size is
// unknown exports no size.
func TestOpsMetricsIdle(t *testing.T) {
	m := telemetry.New(nil)
	m.RegisterCrawlQueue(queue{})
	m.RegisterIndex(func() telemetry.IndexStats { return telemetry.IndexStats{Agents: -1} })
	m.RegisterEmbeddings(func() (telemetry.EmbeddingStats, bool) { return telemetry.EmbeddingStats{}, false })
	out := scrape(t, m)
	for _, want := range []string{"registry_crawl_queue_due 0", "registry_crawl_lag_seconds 0", "registry_search_index_ready 0", "registry_embeddings_enabled 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	for _, absent := range []string{"registry_search_index_agents", "registry_search_index_staleness_seconds ", "registry_embeddings_dimension"} {
		if strings.Contains(out, absent) {
			t.Errorf("metrics carry %q", absent)
		}
	}
}
