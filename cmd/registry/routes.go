package main

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/a2aregistry/registry/internal/a2aagent"
	"github.com/a2aregistry/registry/internal/api"
	"github.com/a2aregistry/registry/internal/ard"
	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/background"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/mcpserver"
	"github.com/a2aregistry/registry/internal/report"
	"github.com/a2aregistry/registry/internal/runs"
	"github.com/a2aregistry/registry/internal/sources"
	"github.com/a2aregistry/registry/internal/telemetry"
	"github.com/a2aregistry/registry/internal/web"
)

// handler is the registry's HTTP handler over the app's parts.
func (a *app) handler() http.Handler {
	d := handlerDeps{log: a.log, store: a.store, registrar: a.registrar, metrics: a.metrics, auth: a.auth,
		hosts: a.cfg.Server.AcceptedHosts(), origins: a.cfg.Server.TrustedOrigins(), agents: a.store, pauser: a.store, keys: a.store,
		ops: a.store, annotator: a.store, publicURL: a.cfg.Server.PublicURL, curator: a.store, priority: a.priority,
		ard: ardPublish(a.cfg.ARD), ardStore: a.store, ardTokenKey: a.ardTokenKey, sources: a.sources, provenance: a.store,
		registryID: a.registryID}
	if a.semantic != nil {
		d.semantic = func() web.SemanticState {
			st := a.semantic.State(a.store.EmbeddingCoverage())
			return web.SemanticState{Model: st.Model, Embedded: st.Embedded, Agents: st.Agents}
		}
	}
	if a.crawler != nil {
		d.refresher = a.crawler
	}
	if a.cfg.Doors.MCP {
		d.doors.mcp = a.store
	}
	if a.cfg.Doors.Agent {
		d.doors.agent, d.doors.self, d.doors.signingKey = a.store, a.self, a.cfg.Doors.SigningKey
	}
	d.ready = &readiness{store: a.store, indexReady: func() bool { return a.store.IndexState().Ready }, semantic: a.readySemantic, log: a.log}
	if a.policy != nil {
		d.ready.policy = a.policy.state
	}
	if a.proxy != nil {
		// One run service for both doors: runs count against the same
		// limits, and a run's credentials serve its follow-ups, whichever
		// door they come through.
		d.runs = runs.New(runs.Options{Runner: a.proxy, Store: a.store, Limiter: a.runLimits, Keeper: a.keeper, Logger: a.log,
			PrivateAll: a.cfg.Runs.PrivateAll})
		d.oauth = a.proxy
	}
	return newHandler(d)
}

// catalogReads is what both doors read of the catalog.
type catalogReads interface {
	api.Catalog
	web.Searcher
}

type handlerDeps struct {
	log       *slog.Logger
	store     catalogReads
	registrar api.Registrar       // nil: read-only API
	refresher api.Refresher       // nil: no refresh endpoint (crawling off)
	metrics   *telemetry.Metrics  // nil: no /metrics
	auth      *auth.Authenticator // nil: no sign-in, every route open
	hosts     []string            // accepted Host names; nil: any
	origins   []string            // origins trusted for browser writes
	agents    web.AgentReader     // the console's agent pages
	pauser    web.Pauser          // nil: the console cannot pause crawling
	keys      web.KeyStore        // nil: no trusted-keys page
	ops       operations          // nil: no audit log, no operator endpoints
	annotator annotator           // nil: annotations are read-only
	ready     *readiness          // nil: no /readyz
	runs      *runs.Service       // nil: no test runs
	oauth     web.OAuthFlows      // nil: no OAuth sign-in to agents from the console
	publicURL string
	curator   web.Curator // nil: no listing transitions, no collections (API and console)
	// priority, when set, hears of the reads people wait for, so that
	// background work leaves them a CPU (see foreground).
	priority *background.Priority
	doors    doorDeps
	// ard is what the ARD manifest publishes; ardStore, when set, serves
	// the ARD door and ARD identifiers in agent routes.
	ard      ard.Publish
	ardStore ardStore
	// ardTokenKey authenticates ARD page tokens, the same on every
	// replica (catalog.Store.Secret); nil: a key of this process only.
	ardTokenKey []byte
	// registryID is advertised by the ARD manifest and the change feed;
	// "": none.
	registryID string
	// semantic reports search's semantic layer to the console; nil: off.
	semantic func() web.SemanticState
	// sources serves the sources routes and pages; nil: none.
	sources *sources.Service
	// provenance adds how each agent came to its API detail and page.
	provenance api.Provenance
}

// operations is what the API's and the console's operator pages need
// besides the above; *catalog.Store implements it.
type operations interface {
	api.AuditLog
	api.Operator
	api.Keys
	api.CrawlStatus
	api.Webhooks
	web.AuditLog
	report.HistoryStore
}

// annotator writes annotations for the API and the console;
// *catalog.Store implements it.
type annotator interface {
	api.Annotator
	web.Annotator
}

// foreground marks the reads a person or a client waits for (GET and HEAD
// of the API and the console, and the machine doors' questions: MCP tool
// calls, A2A messages, ARD search and explore, which are POSTs) as in
// flight while they are served, so the crawler and the verifier take
// fewer CPUs meanwhile. Probes, metrics and event streams, which wait
// rather than compute, are not marked: an open stream would slow the
// background for as long as it lasts. Other writes are not marked either:
// a registration waits on the agent's own host, not on the CPU.
func foreground(p *background.Priority) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			switch r.Method {
			case http.MethodGet, http.MethodHead:
				switch r.URL.Path {
				case "/healthz", "/readyz", "/metrics":
					return next(c)
				}
				if strings.Contains(r.Header.Get(echo.HeaderAccept), "text/event-stream") {
					return next(c)
				}
			case http.MethodPost:
				if !questionPost(r.URL.Path) {
					return next(c)
				}
				// MCP clients accept an event stream on every POST; an
				// answer to one call is still one answer. An A2A
				// streaming message is a stream (its client asks for
				// events alone).
				if r.URL.Path != mcpserver.Path && r.Header.Get(echo.HeaderAccept) == "text/event-stream" {
					return next(c)
				}
			default:
				return next(c)
			}
			done := p.Foreground()
			defer done()
			return next(c)
		}
	}
}

// questionPost reports whether a POST to path asks the catalog a question
// through a machine door (MCP, A2A, ARD search and explore).
func questionPost(path string) bool {
	switch path {
	case mcpserver.Path, a2aagent.JSONRPCPath, ard.BasePath + "/search", ard.BasePath + "/explore":
		return true
	}
	// HTTP+JSON's SendMessage, with or without a tenant before it.
	return strings.HasPrefix(path, a2aagent.RESTPath+"/") && strings.HasSuffix(path, "/message:send")
}

// newHandler mounts every route: /healthz and the JSON API.
func newHandler(d handlerDeps) http.Handler {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	guardServer(e, d.hosts)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			d.log.Error("panic in handler", "method", c.Request().Method, "path", c.Path(),
				"err", err, "stack", string(stack))
			return err
		},
	}))
	e.Use(auth.RequestIDs())
	if d.metrics != nil {
		// Outside the logger, which renders errors: the status is final here.
		e.Use(d.metrics.Middleware())
	}
	e.Use(requestLogger(d.log))
	if d.priority != nil {
		e.Use(foreground(d.priority))
	}

	// Liveness: the process serves HTTP. It does not touch the database so
	// a slow database does not get healthy replicas restarted.
	healthz := func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	}
	e.GET("/healthz", healthz)
	e.HEAD("/healthz", healthz)
	if d.ready != nil {
		e.GET("/readyz", d.ready.serve)
		e.HEAD("/readyz", d.ready.serve)
	}

	if d.metrics != nil {
		// Prometheus text format; served on the API's listener, which is
		// loopback unless the operator opened it.
		e.GET("/metrics", echo.WrapHandler(d.metrics.Handler()))
		e.HEAD("/metrics", echo.WrapHandler(d.metrics.Handler()))
	}

	// The console's CSRF check is the registry's one: on its own forms,
	// on sign-out, and on the API's writes (a token there only for a
	// caller signed in by session cookie: a bearer token is no ambient
	// credential).
	console := web.New(consoleOptions(d))
	opts := api.Options{Catalog: d.store, Registrar: d.registrar, Logger: d.log, CrossSite: web.ErrCrossSite, RegistryID: d.registryID}
	if d.auth != nil {
		// Every request learns its caller; /auth/* signs in and out.
		d.auth.Mount(e, console.GuardWrites(nil))
		opts.Authorizer = d.auth
	}
	// After sign-in, so that an agent named by its ARD identifier or card
	// URL is resolved in the caller's scope.
	if d.ardStore != nil {
		e.Use(resolveAgentRefs(d.ardStore, d.auth != nil))
	}
	if d.refresher != nil {
		opts.Refresher = d.refresher
	}
	opts.Runs = d.runs
	if d.ops != nil {
		opts.Audit, opts.Operator, opts.Keys, opts.Crawl, opts.Webhooks = d.ops, d.ops, d.ops, d.ops, d.ops
		opts.History = d.ops
	}
	if d.annotator != nil {
		opts.Annotator = d.annotator
	}
	if d.curator != nil {
		opts.Curator = d.curator
	}
	if d.sources != nil {
		opts.Sources = d.sources
	}
	opts.Provenance = d.provenance
	api.New(opts).Mount(e, console.GuardWrites(bySession))
	console.Mount(e)
	mountDoors(e, d)
	if d.ardStore != nil {
		mountARD(e, d)
	}
	return e
}

// bySession tells a caller signed in by the session cookie, which the
// browser attaches to any request, from one signed in by a bearer token
// or not at all.
func bySession(c echo.Context) bool {
	return auth.FromContext(c.Request().Context()).Source == auth.SourceSession
}

// consoleOptions wires the console to the catalog, the crawler and
// sign-in: pages see the caller and CSRF token that auth put in the
// request context. Without an Authenticator (handler tests) the console
// runs as in development mode.
func consoleOptions(d handlerDeps) web.Options {
	o := web.Options{Searcher: d.store, Agents: d.agents, Registrar: d.registrar, Refresher: d.refresher, APIPath: api.BasePath,
		Pauser: d.pauser, Keys: d.keys, IndexNotReady: catalog.ErrIndexNotReady, Logger: d.log, DevMode: true,
		TrustedOrigins: d.origins}
	if d.runs != nil {
		o.Runs, o.OAuth, o.PublicURL = d.runs, d.oauth, d.publicURL
	}
	if d.auth != nil {
		o.Authorizer = d.auth
		o.DevMode = d.auth.DevMode()
		o.SignIn = !o.DevMode
		o.Principal = func(c echo.Context) (web.Principal, bool) {
			p := auth.FromContext(c.Request().Context())
			return web.Principal{Subject: p.Subject, Name: p.Name, Role: p.Role, Session: p.Source == auth.SourceSession}, p.Role != 0
		}
		o.CSRFToken = func(c echo.Context) string { return auth.CSRFToken(c.Request().Context()) }
	}
	if d.ops != nil {
		o.Audit, o.Remover, o.Crawl, o.Webhooks = d.ops, d.ops, d.ops, d.ops
		o.History = d.ops
	}
	if d.sources != nil {
		o.Sources = d.sources
	}
	if d.provenance != nil {
		o.Provenance = d.provenance
	}
	if d.annotator != nil {
		o.Annotator = d.annotator
	}
	if d.curator != nil {
		o.Curator = d.curator
	}
	o.Semantic = d.semantic
	return o
}

// requestLogger logs one line per request. 5xx are errors (our fault),
// 4xx are info: clients get things wrong all the time.
//
// The handler's error is rendered (HandleError) before logging so the
// logged status is the one sent. The error is then dropped: passing it on
// would make echo run the error handler a second time on a response that
// is already written.
func requestLogger(log *slog.Logger) echo.MiddlewareFunc {
	logger := middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		HandleError:  true,
		LogMethod:    true,
		LogURIPath:   true,
		LogRoutePath: true,
		LogStatus:    true,
		LogLatency:   true,
		LogRemoteIP:  true,
		LogRequestID: true,
		LogError:     true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			level := slog.LevelInfo
			if v.Status >= 500 {
				level = slog.LevelError
			}
			attrs := []slog.Attr{
				slog.String("method", v.Method),
				slog.String("path", v.URIPath),
				slog.String("route", v.RoutePath),
				slog.Int("status", v.Status),
				slog.Duration("latency", v.Latency),
				slog.String("remote_ip", v.RemoteIP),
				slog.String("request_id", v.RequestID),
			}
			if v.Error != nil {
				attrs = append(attrs, slog.String("err", v.Error.Error()))
			}
			log.LogAttrs(c.Request().Context(), level, "http request", attrs...)
			return nil
		},
	})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		h := logger(next)
		return func(c echo.Context) error {
			if err := h(c); err != nil && !c.Response().Committed {
				return err
			}
			return nil
		}
	}
}
