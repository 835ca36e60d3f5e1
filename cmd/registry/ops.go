package main

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/a2aregistry/registry/internal/telemetry"
)

// warmIndex builds the search index and notes when it caught up, for the
// staleness metric (readiness asks the store itself). The build's
// garbage (rows read, text analysed, posting lists outgrown: several
// times the index's own size) is then handed back to the operating
// system at once rather than over minutes, so the resident memory after
// start is the index's and not the build's peak.
func (a *app) warmIndex(ctx context.Context) error {
	if err := a.store.WarmIndex(ctx); err != nil {
		return err
	}
	a.lastSync.Store(time.Now().UnixNano())
	debug.FreeOSMemory()
	return nil
}

// syncIndex applies the other replicas' writes to the search index and
// notes when it caught up, for the staleness metric.
func (a *app) syncIndex(ctx context.Context) error {
	if err := a.store.Sync(ctx); err != nil {
		return err
	}
	if a.store.IndexState().Ready {
		a.lastSync.Store(time.Now().UnixNano())
	}
	return nil
}

// registerOpsMetrics exports what an operator watches besides requests and
// checks: the crawl queue and its lag, the database pool, the index.
func (a *app) registerOpsMetrics() {
	a.metrics.RegisterCrawlQueue(a.store)
	a.metrics.RegisterDBStats(a.store.DBStats)
	a.metrics.RegisterIndex(func() telemetry.IndexStats {
		st := a.store.IndexState()
		s := telemetry.IndexStats{Ready: st.Ready, Agents: st.Agents}
		if ns := a.lastSync.Load(); ns != 0 {
			s.LastSync = time.Unix(0, ns)
		}
		return s
	})
	a.metrics.RegisterPriority(a.priority.Stats)
	a.metrics.RegisterEmbeddings(func() (telemetry.EmbeddingStats, bool) {
		if a.semantic == nil {
			return telemetry.EmbeddingStats{}, false
		}
		st := a.semantic.State(a.store.EmbeddingCoverage())
		return telemetry.EmbeddingStats{Dimension: st.Dimension, Embedded: st.Embedded, Agents: st.Agents, VectorBytes: st.VectorBytes,
			AgentsOK: st.AgentsOK, AgentsFailed: st.AgentsFailed, QueriesOK: st.QueriesOK, QueriesFailed: st.QueriesFailed}, true
	})
}
