package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/a2aregistry/registry/examples"
	"github.com/a2aregistry/registry/internal/api"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/importer"
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
// requests for at most cfg.Server.ShutdownTimeout. ready, when set, is called with
// the bound address once the server accepts connections.
//
// Shutdown runs in reverse: the HTTP server drains, the background work
// stops and is waited for, and only then the store closes, so no write is
// cut off. The same order holds when serve fails half way.
func serve(ctx context.Context, cfg config.Config, log *slog.Logger, ready func(net.Addr)) error {
	a, err := newApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.close()
	if cfg.Storage.ImportExamples {
		if err := importExamples(ctx, a.store, cfg, log); err != nil {
			return err
		}
	}
	bg, err := a.startBackground(ctx)
	if err != nil {
		return err
	}
	defer bg.Stop()
	return a.serveHTTP(ctx, ready)
}

// serveHTTP serves a.handler() on cfg.Server.Listen until ctx is done, then shuts
// the server down gracefully.
func (a *app) serveHTTP(ctx context.Context, ready func(net.Addr)) error {
	cfg, log := a.cfg, a.log
	ln, err := listenTCP(cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.Server.Listen, err)
	}
	// From here the registry is at the bound address (a port of 0 is
	// now a port), which its outbound clients must not reach.
	if err := a.self.Bind(ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           a.handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		// A refresh may fetch twice (the legacy path after a 404).
		WriteTimeout:   2*cfg.Outbound.FetchTimeout + writeTimeoutSlack,
		IdleTimeout:    idleTimeout,
		MaxHeaderBytes: maxHeaderBytes,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:    func(net.Listener) context.Context { return ctx },
	}
	if !cfg.SignIn() && !config.IsLoopbackHost(listenHost(ln.Addr())) {
		log.Warn("serving without sign-in on a non-loopback address: anyone who can reach it can register agents",
			"addr", ln.Addr().String())
	}
	warnUnsealedSecrets(log, cfg, listenHost(ln.Addr()))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("registry listening", "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String()+api.BasePath+"/agents",
		"db", a.store.Dialect(), "version", versionString())
	if ready != nil {
		ready(ln.Addr())
	}

	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.Server.ShutdownTimeout)
	// ctx is already cancelled; the drain gets its own deadline.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Server.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		<-errc // Serve returns at once after Close
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
// that a first run has something to search. A catalog with any agent,
// removed ones included, is left alone, so removing the examples is
// permanent. A broken example is
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

// warnUnsealedSecrets says, once at start, that stored secrets (webhook
// signing secrets, the registry's own keys) are kept unencrypted because
// no --secret-key-file is given: a warning for a deployment (sign-in on,
// or reachable beyond loopback), a note for a developer's loopback run.
func warnUnsealedSecrets(log *slog.Logger, cfg config.Config, host string) {
	if cfg.Storage.SecretKeyFile != "" {
		return
	}
	level := slog.LevelInfo
	if cfg.SignIn() || !config.IsLoopbackHost(host) {
		level = slog.LevelWarn
	}
	log.Log(context.Background(), level, "no secret key configured (--secret-key-file): webhook secrets and the registry's own keys are stored unencrypted")
}
