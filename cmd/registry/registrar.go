package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"sync"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/sources"
)

// newSources wires the sources service: manifests read over client (whose
// body cap is --source-max-bytes), cards registered through the one
// registration path, leases named like the crawler's.
func newSources(cfg config.Config, store *catalog.Store, reg *crawler.Registrar, client *safehttp.Client, log *slog.Logger) *sources.Service {
	return sources.New(store, reg, crawler.NewFetcher(client, cfg.Sources.MaxBytes), client, sources.Config{
		Owner:       leaseOwnerPrefix(cfg) + "sources",
		Interval:    cfg.Sources.Interval,
		MaxEntries:  cfg.Sources.MaxEntries,
		Concurrency: cfg.Crawl.Concurrency * 2,
		Trust:       cfg.Sources.Trust,
		// A peer's pages are read under the manifest size cap each.
		MaxPeerEntries: cfg.Sources.FederationMaxEntries,
		SyncTimeout:    cfg.Sources.FederationSyncTimeout,
	}, log.With("component", "sources"))
}

// crawlerConfig maps the crawl settings onto the crawler's. The lease
// owner starts with the instance name (default: the host name) so that a
// restart can take back the leases of its killed predecessor (see
// leaseOwnerPrefix).
//
// A claim takes at most a few rounds of work for this replica's workers:
// leases it holds but cannot start yet keep the other replicas off those
// agents, and when it dies they wait for the lease to expire.
func crawlerConfig(cfg config.Config) crawler.Config {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	lease := cfg.Crawl.Lease
	if lease == 0 {
		lease = max(crawler.DefaultLease, 4*cfg.Outbound.FetchTimeout)
	}
	return crawler.Config{
		Owner:       leaseOwnerPrefix(cfg) + hex.EncodeToString(b),
		Concurrency: cfg.Crawl.Concurrency,
		PerHost:     cfg.Crawl.PerHost,
		BatchSize:   min(crawler.DefaultBatchSize, 4*cfg.Crawl.Concurrency),
		MinInterval: cfg.Crawl.MinInterval,
		MaxInterval: cfg.Crawl.MaxInterval,
		DownAfter:   cfg.Crawl.DownAfter,
		Lease:       lease,
		Limits:      cardLimits(cfg),
	}
}

// leaseOwnerPrefix is the part of this replica's lease owner that
// survives a restart: the instance name, else the host name.
func leaseOwnerPrefix(cfg config.Config) string {
	if cfg.Crawl.Instance != "" {
		return cfg.Crawl.Instance + "/"
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "registry"
	}
	return host + "/"
}

// seedRegistrar registers the agents of a seed list that the catalog does
// not know yet; known ones are the crawler's business.
type seedRegistrar struct {
	store       *catalog.Store
	registrar   *crawler.Registrar
	concurrency int
	log         *slog.Logger

	mu   sync.Mutex
	done map[string]bool // seeds registered (or known) in this process
}

func newSeedRegistrar(store *catalog.Store, r *crawler.Registrar, concurrency int, log *slog.Logger) *seedRegistrar {
	return &seedRegistrar{store: store, registrar: r, concurrency: max(concurrency, 1), log: log, done: map[string]bool{}}
}

func (s *seedRegistrar) apply(ctx context.Context, seeds []string) {
	sem := make(chan struct{}, s.concurrency)
	var wg sync.WaitGroup
	for _, seed := range seeds {
		s.mu.Lock()
		done := s.done[seed]
		s.mu.Unlock()
		if done || s.known(ctx, seed) {
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Go(func() {
			defer func() { <-sem }()
			out := s.registrar.RegisterMany(ctx, seedActor, catalog.ScopeAll,
				[]crawler.Registration{{Input: seed, Via: &catalog.Via{Kind: catalog.ProvenanceSeeded}}}, 1)
			res, err := out[0].Result, out[0].Err
			if err != nil {
				if ctx.Err() == nil {
					// Not remembered as done: the next change of the file
					// tries again.
					s.log.Warn("registering seed", "seed", seed, "err", err)
				}
				return
			}
			s.mu.Lock()
			s.done[seed] = true
			s.mu.Unlock()
			if res.Created {
				s.log.Info("registered seed", "seed", seed, "agent_id", res.Agent.ID)
			}
		})
	}
	wg.Wait()
}

// known tells whether the catalog has the agent a seed names, under any of
// the card URLs the seed resolves to.
func (s *seedRegistrar) known(ctx context.Context, seed string) bool {
	urls, err := crawler.ResolveCardURLs(seed)
	if err != nil {
		return false
	}
	for _, u := range urls {
		// A removed agent is not known: registering its seed restores it.
		if a, err := s.store.AgentByURL(ctx, u); err == nil && a.Removed == nil {
			s.mu.Lock()
			s.done[seed] = true
			s.mu.Unlock()
			return true
		}
	}
	return false
}

// seedActor is who the catalog records as registering the agents of a
// seed file; not audited, like the crawler's own writes.
var seedActor = catalog.System("seed")
