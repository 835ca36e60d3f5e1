package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/a2aregistry/registry/examples"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/importer"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/telemetry"
	"github.com/a2aregistry/registry/internal/verify"
)

// HTTP server limits. Slowloris-style clients are cut off by
// ReadHeaderTimeout; WriteTimeout leaves room for POST /agents, which
// fetches a card (bounded by the fetch timeout) before answering.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
	writeTimeoutSlack = 30 * time.Second
	// indexSyncInterval bounds how stale one replica's search results are
	// after another replica's write.
	indexSyncInterval = 5 * time.Second
	// seedPollInterval is how often the seed file is checked for changes.
	seedPollInterval = 10 * time.Second
)

func runServe(ctx context.Context, args []string, stderr io.Writer, getenv env) int {
	cfg, fs, code, ok := loadConfig("serve", "[flags]", config.All, args, stderr, getenv)
	if !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "registry serve: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	log := newLogger(cfg, stderr)
	if err := serve(ctx, cfg, log, nil); err != nil {
		log.Error("serve failed", "err", err)
		return exitFail
	}
	return exitOK
}

// serve runs the registry until ctx is done, then drains in-flight
// requests for at most cfg.ShutdownTimeout. ready, when set, is called with
// the bound address once the server accepts connections.
func serve(ctx context.Context, cfg config.Config, log *slog.Logger, ready func(net.Addr)) error {
	store, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeStore(store, log)
	// Background work (index, crawler, verifier, seeds) stops with ctx and
	// is waited for before the store closes, so no write is cut off; the
	// derived ctx also stops it when serve fails after starting it.
	ctx, cancel := context.WithCancel(ctx)
	var bg sync.WaitGroup
	defer func() {
		cancel()
		bg.Wait()
	}()

	if cfg.ImportExamples {
		if err := importExamples(ctx, store, cfg, log); err != nil {
			return err
		}
	}

	// The search index is built in the background so the server answers
	// at once; searches wait for it. RunSync picks up what other replicas
	// sharing a PostgreSQL catalog write.
	bg.Go(func() {
		if err := store.WarmIndex(ctx); err != nil && ctx.Err() == nil {
			log.Error("building search index", "err", err)
		}
	})
	bg.Go(func() { store.RunSync(ctx, indexSyncInterval) })

	client := safehttp.New(safehttp.Config{
		AllowNetworks: cfg.AllowNetworks,
		Timeout:       cfg.FetchTimeout,
		MaxBodyBytes:  cfg.MaxCardBytes,
		UserAgent:     "a2a-registry/" + versionString(),
		// Crawl connections to one host are reused, not reopened.
		MaxIdleConnsPerHost: cfg.CrawlPerHost,
	})
	defer client.CloseIdleConnections()

	// Reports are kept current in the background: every new card version,
	// every trusted-key change and every expiring key leads to a new one.
	// Live probes stay off: they reach every declared endpoint of every
	// catalogued agent, which an operator should choose to do.
	vopts := verify.Options{Keys: verify.CatalogKeys{Store: store}, Logger: log}
	if cfg.VerifyFetch {
		vopts.Client, vopts.FetchOIDC, vopts.Probe = client, true, cfg.VerifyProbes
	}
	verifier := verify.New(vopts)
	runner := verify.NewRunner(verifier, store, verify.RunnerOptions{CardLimits: cardLimits(cfg), Logger: log})

	fetcher := crawler.NewFetcher(client, cfg.MaxCardBytes)
	registrar := crawler.NewRegistrar(fetcher, store, cardLimits(cfg), log)
	metrics := telemetry.New(store)
	cr := crawler.New(crawlerConfig(cfg), metrics.ObserveCrawl(store), fetcher, log)
	deps := handlerDeps{log: log, store: store, registrar: registrar, metrics: metrics,
		hosts: cfg.AcceptedHosts(), origins: cfg.TrustedOrigins()}
	var checker *crawler.Crawler
	if cfg.Crawl {
		checker = cr
		if n, err := store.ReleaseLeases(ctx, leaseOwnerPrefix(), cr.Config().Owner); err != nil {
			log.Warn("releasing leases of a previous run", "err", err)
		} else if n > 0 {
			log.Info("took back leases of a previous run on this host", "agents", n)
		}
		deps.refresher = cr
		bg.Go(func() {
			if err := cr.Run(ctx); err != nil {
				log.Error("crawler stopped", "err", err)
			}
		})
		bg.Go(func() { pruneFetchLog(ctx, store, cfg.FetchLogRetention, log) })
	}
	wireChecks(registrar, checker, runner)
	bg.Go(func() { runner.Run(ctx) })
	if cfg.Seeds != "" {
		seeds := newSeedRegistrar(store, registrar, cfg.CrawlConcurrency, log)
		// The first read fails start-up on a bad file; later bad edits are
		// logged and the last good list stays in force.
		first := make(chan error, 1)
		bg.Go(func() {
			started := false
			err := crawler.WatchSeeds(ctx, cfg.Seeds, seedPollInterval, log, func(urls []string) {
				if !started {
					started = true
					first <- nil
				}
				seeds.apply(ctx, urls)
			})
			if !started {
				first <- err
			}
		})
		if err := <-first; err != nil {
			return fmt.Errorf("reading seeds: %w", err)
		}
	}
	handler := newHandler(deps)

	ln, err := listenTCP(cfg.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.Listen, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		// A refresh may fetch twice (the legacy path after a 404).
		WriteTimeout:   2*cfg.FetchTimeout + writeTimeoutSlack,
		IdleTimeout:    idleTimeout,
		MaxHeaderBytes: maxHeaderBytes,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:    func(net.Listener) context.Context { return ctx },
	}
	if !config.IsLoopbackHost(listenHost(ln.Addr())) {
		log.Warn("serving without sign-in on a non-loopback address: anyone who can reach it can register agents",
			"addr", ln.Addr().String())
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("registry listening", "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String()+"/api/v1/agents",
		"db", store.Dialect(), "version", versionString())
	if ready != nil {
		ready(ln.Addr())
	}

	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	// ctx is already cancelled; the drain gets its own deadline.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("shutting down http server: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	log.Info("stopped")
	return nil
}

func listenHost(a net.Addr) string {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return ""
	}
	return host
}

// importExamples loads the shipped example cards into an empty catalog so
// that a first run has something to search. A catalog with any agent is
// left alone, so deleting the examples is permanent. A broken example is
// our fault, logged, and does not stop the server.
func importExamples(ctx context.Context, store *catalog.Store, cfg config.Config, log *slog.Logger) error {
	n, err := store.Count(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	im := &importer.Importer{Store: store, Limits: cardLimits(cfg)}
	results, err := im.FS(ctx, examples.Cards, "cards/*.json")
	if err != nil {
		log.Error("importing example cards", "err", err)
	}
	log.Info("catalog was empty: imported example cards", "count", len(results))
	return nil
}
