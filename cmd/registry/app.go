package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/background"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/embeddings"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/sources"
	"github.com/a2aregistry/registry/internal/telemetry"
	"github.com/a2aregistry/registry/internal/verify"
)

// app holds the parts of a serving registry, built once from the
// configuration. Building starts nothing: startBackground starts the
// background work and serve the HTTP server; close releases what newApp
// opened, after both have stopped.
type app struct {
	cfg    config.Config
	log    *slog.Logger
	store  *catalog.Store
	client *safehttp.Client // every outbound request: crawl, register, verify
	// self is the registry's own server, which no outbound client
	// reaches; serveHTTP binds it to the listener's address.
	self      *safehttp.Self
	registrar *crawler.Registrar
	crawler   *crawler.Crawler // nil when crawling is off
	runner    *verify.Runner
	metrics   *telemetry.Metrics
	auth      *auth.Authenticator
	lastSync  atomic.Int64 // unix nanoseconds of the index's last catch-up (metrics)
	// proxy runs testers' tasks against agents over proxyClient, within
	// runLimits.
	proxy       *proxy.Proxy
	proxyClient *safehttp.Client
	runLimits   *proxy.Limiter
	// keeper remembers a conversation's credentials, in memory only, for
	// its follow-ups from the API and the console alike.
	keeper *proxy.Keeper
	// priority gives the reads people wait for the CPU before the
	// crawler's and the verifier's work.
	priority *background.Priority
	// ardTokenKey authenticates ARD page tokens on every replica alike.
	ardTokenKey []byte
	// registryID is this registry's id (catalog.Store.RegistryID), which
	// its ARD manifest and change feed advertise to federating peers.
	registryID string
	// semantic is search's semantic layer (nil when off), reaching its
	// API through semanticClient.
	semantic       *embeddings.Service
	semanticClient *safehttp.Client
	// sources reads manifests over manifestClient and registers their
	// agents through registrar.
	sources        *sources.Service
	manifestClient *safehttp.Client
	// policy is the admission policy file; nil when there is none.
	policy *policyFile
}

// newApp opens the catalog (migrating it) and wires the parts over it.
func newApp(ctx context.Context, cfg config.Config, log *slog.Logger) (*app, error) {
	// A bad policy stops serve before it touches the database.
	var pol *policyFile
	if cfg.Listing.Policy != "" {
		var err error
		if pol, err = loadPolicyFile(cfg.Listing.Policy, log); err != nil {
			return nil, err
		}
	}
	self, err := registrySelf(cfg.Server)
	if err != nil {
		return nil, err
	}
	sem, semClient, err := newEmbeddings(cfg, self, log)
	if err != nil {
		return nil, fmt.Errorf("configuring embeddings: %w", err)
	}
	store, err := openStoreWith(ctx, cfg, log, sem)
	if err != nil {
		return nil, err
	}
	if pol != nil {
		pol.attach(func(adm *verify.Admission) { store.SetAdmission(adm) })
	}
	authn, err := newAuthenticator(cfg, store, log)
	if err != nil {
		closeStore(store, log)
		return nil, fmt.Errorf("configuring sign-in: %w", err)
	}
	ardKey, err := store.Secret(ctx, catalog.SecretARDPageTokens)
	if err != nil {
		closeStore(store, log)
		return nil, err
	}
	registryID, err := store.RegistryID(ctx)
	if err != nil {
		closeStore(store, log)
		return nil, err
	}
	a := &app{
		policy:         pol,
		semantic:       sem,
		semanticClient: semClient,
		ardTokenKey:    ardKey,
		registryID:     registryID,
		cfg:            cfg,
		log:            log,
		store:          store,
		self:           self,
		client:         newOutboundClient(cfg, self, cfg.Crawl.PerHost),
		metrics:        telemetry.New(store),
		auth:           authn,
		// One CPU for Go code is left to requests while any is served.
		priority: background.NewPriority(0),
	}

	// Reports are kept current in the background: every new card version,
	// every trusted-key change and every expiring key leads to a new one.
	// Live probes stay off: they reach every declared endpoint of every
	// catalogued agent, which an operator should choose to do.
	vopts := verify.Options{Keys: verify.CatalogKeys{Store: store}, Names: verify.CatalogNames{Store: store},
		Manifests: sources.ManifestListings{Store: store}, Priority: a.priority, Logger: log}
	if cfg.Verify.Fetch {
		vopts.Client, vopts.FetchOIDC, vopts.Probe = a.client, true, cfg.Verify.Probes
	}
	verifier := verify.New(vopts)
	a.runner = verify.NewRunner(verifier, a.metrics.ObserveVerifications(store), verify.RunnerOptions{CardLimits: cardLimits(cfg), Logger: log})

	fetcher := crawler.NewFetcher(a.client, cfg.Outbound.MaxCardBytes)
	a.registrar = crawler.NewRegistrar(fetcher, store, cardLimits(cfg), log)
	if cfg.Crawl.Enabled {
		ccfg := crawlerConfig(cfg)
		ccfg.Priority = a.priority
		a.crawler = crawler.New(ccfg, a.metrics.ObserveCrawl(store), fetcher, log)
	}
	wireChecks(a.registrar, a.crawler, a.runner)
	if pol != nil {
		// The policy judges the signatures of what it admits: each new
		// card is checked before the write that stores it.
		wirePrecheck(a.registrar, a.crawler, verifier)
	}
	a.manifestClient = newManifestClient(cfg, self)
	a.sources = newSources(cfg, store, a.registrar, a.manifestClient, log)
	a.registerOpsMetrics()
	a.proxyClient = newProxyClient(cfg, self)
	a.proxy = proxy.New(proxy.Options{Client: a.proxyClient, MaxRun: cfg.Runs.MaxDuration,
		MaxMessageBytes: cfg.Runs.MaxMessageBytes, MaxFileBytes: cfg.Runs.MaxFileBytes,
		TokenHosts: cfg.Runs.OAuthTokenHosts, Logger: log})
	a.runLimits = proxy.NewLimiter(proxy.Limits{MaxConcurrent: cfg.Runs.MaxConcurrent,
		MaxConcurrentPerUser: cfg.Runs.MaxConcurrentUser, PerUserPerMinute: cfg.Runs.RatePerMinute})
	a.keeper = proxy.NewKeeper(proxy.DefaultKeeperMax, proxy.DefaultKeeperTTL)
	return a, nil
}

// close releases the client's connections and the store. The background
// work and the HTTP server must have stopped.
func (a *app) close() {
	a.client.CloseIdleConnections()
	a.proxyClient.CloseIdleConnections()
	if a.semanticClient != nil {
		a.semanticClient.CloseIdleConnections()
	}
	a.manifestClient.CloseIdleConnections()
	closeStore(a.store, a.log)
}
