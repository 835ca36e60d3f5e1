package main

import (
	"context"
	"fmt"
	"time"

	"github.com/a2aregistry/registry/internal/background"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/report"
	"github.com/a2aregistry/registry/internal/webhook"
)

// Intervals of the periodic background work.
const (
	// indexSyncInterval bounds how stale one replica's search results are
	// after another replica's write.
	indexSyncInterval = 5 * time.Second
	// seedPollInterval is how often the seed file is checked for changes.
	seedPollInterval = 10 * time.Second
	// fetchLogPruneInterval is how often old check outcomes are dropped.
	fetchLogPruneInterval = time.Hour
	// sessionPruneInterval is how often dead sign-in sessions are dropped;
	// they are refused when used whether pruned or not.
	sessionPruneInterval = 15 * time.Minute
	// sourcePollInterval is how often due sources are looked for: a new
	// source is checked within it.
	sourcePollInterval = 5 * time.Second
	// runPruneInterval is how often runs past --run-retention are dropped.
	runPruneInterval = time.Hour
	// securityHistoryInterval is how often the day's row of the security
	// report's history is written when missing: within this long of
	// midnight UTC, and at start once the search index is ready.
	securityHistoryInterval = 15 * time.Minute
)

// startBackground starts the work that runs beside the HTTP server: the
// search index build and its sync with other replicas, the crawler and the
// fetch-log pruning (when crawling), the verification runner and the seed
// file. The returned group owns it all; Stop it before a.close so no write
// is cut off. A seed file that cannot be read fails start-up, before
// anything starts.
func (a *app) startBackground(ctx context.Context) (*background.Group, error) {
	var seeds *crawler.SeedFile
	var firstSeeds []string
	if a.cfg.Crawl.Seeds != "" {
		var err error
		if seeds, firstSeeds, err = crawler.OpenSeedFile(a.cfg.Crawl.Seeds); err != nil {
			return nil, fmt.Errorf("reading seeds: %w", err)
		}
	}

	bg := background.NewGroup(ctx, a.log)
	// The search index is built in the background so the server answers
	// at once; a search waits at most the build's first second, then answers
	// 503 with Retry-After until the index is ready. Sync picks up what other replicas
	// sharing a PostgreSQL catalog write.
	bg.Go("search index build", a.warmIndex)
	bg.Every("search index sync", indexSyncInterval, a.syncIndex)
	if a.crawler != nil {
		a.releaseLeases(ctx)
		bg.Go("crawler", a.runCrawler)
		bg.Every("fetch log prune", fetchLogPruneInterval, a.pruneFetchLog)
		// Sources are checked on their own schedules under leases, so
		// replicas share them as they share agents.
		bg.Go("sources", func(ctx context.Context) error {
			a.sources.Run(ctx, sourcePollInterval)
			return nil
		})
	}
	if a.cfg.SignIn() {
		bg.Every("session prune", sessionPruneInterval, a.pruneSessions)
	}
	bg.Every("run prune", runPruneInterval, a.pruneRuns)
	bg.Every("security history", securityHistoryInterval, a.snapshotSecurity)
	// Webhook deliveries go through the guarded outbound client (never a
	// private address unless --allow-networks opens it, never the
	// registry itself). Every replica runs a dispatcher: the fan-out's
	// cursor and the deliveries' leases share the work (internal/webhook).
	hooks := webhook.New(a.store, a.client, a.log.With("component", "webhook"), webhook.Config{})
	bg.Go("webhooks", func(ctx context.Context) error {
		hooks.Run(ctx)
		return nil
	})
	if a.semantic != nil {
		// Agents are embedded in the background, never on the write path:
		// a new version is searchable by its words at once, by meaning
		// once embedded.
		bg.Go("embeddings", func(ctx context.Context) error {
			a.semantic.Run(ctx, a.store)
			return nil
		})
	}
	bg.Go("verification", func(ctx context.Context) error {
		a.runner.Run(ctx)
		return nil
	})
	if a.policy != nil {
		bg.Go("admission policy", func(ctx context.Context) error {
			a.policy.watchSignals(ctx)
			return nil
		})
		bg.Go("admission policy judgement", func(ctx context.Context) error {
			a.policy.rejudgeLoop(ctx, a.store)
			return nil
		})
	}
	if seeds != nil {
		bg.Go("seeds", func(ctx context.Context) error {
			a.watchSeeds(ctx, seeds, firstSeeds)
			return nil
		})
	}
	return bg, nil
}

// releaseLeases takes back the leases a killed predecessor under this
// instance name (default: this host) left, so its agents are checked at
// once instead of after lease expiry.
func (a *app) releaseLeases(ctx context.Context) {
	n, err := a.store.ReleaseLeases(ctx, leaseOwnerPrefix(a.cfg), a.crawler.Config().Owner)
	switch {
	case err != nil:
		a.log.Warn("releasing leases of a previous run", "err", err)
	case n > 0:
		a.log.Info("took back leases of a previous run on this host", "agents", n)
	}
}

// pruneFetchLog drops check outcomes older than the retention.
func (a *app) pruneFetchLog(ctx context.Context) error {
	n, err := a.store.PruneFetchLog(ctx, time.Now().Add(-a.cfg.Crawl.FetchLogRetention))
	if err != nil {
		return fmt.Errorf("pruning fetch log: %w", err)
	}
	if n > 0 {
		a.log.Info("pruned fetch log", "rows", n)
	}
	return nil
}

// pruneRuns drops test runs older than the retention.
func (a *app) pruneRuns(ctx context.Context) error {
	n, err := a.store.PruneRuns(ctx, time.Now().Add(-a.cfg.Runs.Retention))
	if err != nil {
		return fmt.Errorf("pruning runs: %w", err)
	}
	if n > 0 {
		a.log.Info("pruned runs", "rows", n)
	}
	return nil
}

// snapshotSecurity writes today's row of the security report's history
// when it is missing; every replica may, the day's key keeps one. Until
// the search index is built there is nothing to count yet: it waits for
// it, so that a start writes the day at once rather than an interval later.
func (a *app) snapshotSecurity(ctx context.Context) error {
	for !a.store.IndexState().Ready {
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
	n, err := report.Snapshot(ctx, a.store, a.store, time.Now())
	if err != nil {
		return fmt.Errorf("recording the security report's history: %w", err)
	}
	if n > 0 {
		a.log.Info("recorded the security report's day", "rows", n)
	}
	return nil
}

// pruneSessions drops the sign-in sessions past their idle or absolute
// expiry.
func (a *app) pruneSessions(ctx context.Context) error {
	n, err := a.store.PruneSessions(ctx, time.Now())
	if err != nil {
		return fmt.Errorf("pruning sessions: %w", err)
	}
	if n > 0 {
		a.log.Debug("pruned sessions", "rows", n)
	}
	return nil
}

// watchSeeds registers the seeds read at start, then those of every later
// change of the file until ctx ends. A bad edit is logged and the last
// good list stays in force.
func (a *app) watchSeeds(ctx context.Context, f *crawler.SeedFile, first []string) {
	reg := newSeedRegistrar(a.store, a.registrar, a.cfg.Crawl.Concurrency, a.log)
	reg.apply(ctx, first)
	background.Every(ctx, a.log, "seed file", seedPollInterval, func(ctx context.Context) error {
		seeds, changed, err := f.Changed()
		if changed {
			a.log.Info("seed file changed", "path", a.cfg.Crawl.Seeds, "seeds", len(seeds))
			reg.apply(ctx, seeds)
		}
		return err
	})
}
