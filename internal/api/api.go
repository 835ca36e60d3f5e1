// Package api serves the registry's JSON API under /api/v1 and the
// OpenAPI 3 document that describes it (GET /api/v1/openapi.json).
//
// Every error is an ErrorResponse with a stable code. Raw card bytes are
// untrusted third-party content: they are served byte for byte as
// application/json with nosniff and a deny-all Content-Security-Policy,
// never as HTML.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/report"
	"github.com/a2aregistry/registry/internal/runs"
)

// BasePath is where Mount puts the API.
const BasePath = "/api/v1"

// Catalog is the part of the catalog store the API reads.
type Catalog interface {
	Search(ctx context.Context, q catalog.Query) (catalog.Page, error)
	// Agent returns catalog.ErrNotFound for an unknown id.
	// Every read takes the caller's scope (ScopeOf): an agent it does not
	// see is catalog.ErrNotFound, as a missing one.
	Agent(ctx context.Context, sc catalog.Scope, id string) (catalog.Agent, error)
	// RawCard returns the current version's bytes as received.
	RawCard(ctx context.Context, sc catalog.Scope, id string) ([]byte, error)
	// Versions lists an agent's versions, newest first.
	Versions(ctx context.Context, sc catalog.Scope, id string) ([]catalog.VersionSummary, error)
	Version(ctx context.Context, sc catalog.Scope, id string, n int) (catalog.Version, error)
	// AgentView reads an agent with its versions, health (uptimes as of
	// now) and verification report in one transaction; it returns
	// catalog.ErrNotFound for an unknown id.
	AgentView(ctx context.Context, sc catalog.Scope, id string, now time.Time) (catalog.AgentView, error)
	// AgentRemoval is nil for a listed agent, the removal of one an admin
	// removed, and catalog.ErrNotFound for an unknown id. The reads above
	// return removed agents too: the API decides who sees them.
	AgentRemoval(ctx context.Context, id string) (*catalog.Removal, error)
	// Changes lists the change feed after seq since, oldest first, at most
	// limit entries.
	Changes(ctx context.Context, sc catalog.Scope, since int64, limit int) ([]catalog.Change, error)
	// VisibleAgents reports which of ids the scope sees (removed agents
	// only ScopeAll): the agent view names no other agent outside it.
	VisibleAgents(ctx context.Context, sc catalog.Scope, ids []string) (map[string]bool, error)
	// Complete returns the tags and skill names of the agents the scope
	// sees that typed begins, at most limit (0: the default).
	Complete(ctx context.Context, sc catalog.Scope, typed string, limit int) ([]catalog.Completion, error)
	// PolicyState is the admission policy's standing on the agent's
	// current version.
	PolicyState(ctx context.Context, sc catalog.Scope, id string) (catalog.PolicyState, error)
}

// Registrar fetches, checks and stores the card behind a URL.
type Registrar interface {
	Register(ctx context.Context, actor catalog.Actor, sc catalog.Scope, input string) (catalog.UpsertResult, error)
}

// Refresher checks one agent's card now, outside the crawl schedule, and
// records the outcome. A failed fetch is not an error (it is recorded in
// the agent's health); errors are catalog.ErrNotFound for an unknown id,
// crawler.ErrRefreshCanceled or a context error when the request ended
// first, and the registry's own faults. *crawler.Crawler implements it.
type Refresher interface {
	RefreshNow(ctx context.Context, actor catalog.Actor, agentID string) (crawler.RefreshResult, error)
}

// Options configure an API.
type Options struct {
	Catalog Catalog
	// RegistryID is this registry's id (catalog.Store.RegistryID), sent
	// with the change feed so that a registry federating from this one
	// refuses to federate from itself; "" sends none.
	RegistryID string
	// Registrar serves POST /agents; when nil the API is read-only and
	// POST answers 405.
	Registrar Registrar
	// Refresher serves POST /agents/{id}/refresh; when nil the route does
	// not exist (404), as in a registry that does not crawl.
	Refresher Refresher
	// Runs serves test runs against agents (role tester); when nil the
	// run routes do not exist. Share it with the console: its limits and
	// remembered credentials hold whichever door a run comes through.
	Runs *runs.Service
	// Audit serves GET /audit (role admin); Operator the agent actions
	// pause, resume (editor) and remove (admin); Keys the trusted keys
	// (admin); Crawl GET /crawler. Each route is absent when its field is
	// nil.
	Audit    AuditLog
	Operator Operator
	Keys     Keys
	Crawl    CrawlStatus
	// Annotator serves PUT /agents/{id}/annotations (editor); the route
	// is absent when it is nil.
	Annotator Annotator
	// Curator serves listing transitions and collections; their routes
	// are absent when it is nil.
	Curator Curator
	// Webhooks serves the webhook subscriptions (admin); their routes are
	// absent when it is nil.
	Webhooks Webhooks
	// History is the security report's daily history, returned with the
	// report; nil means the report has none.
	History report.HistoryStore
	// Sources serves the sources (editor); their routes are absent when
	// it is nil. Provenance adds to an agent's detail how it came and
	// what sources say of it; absent when nil.
	Sources    Sources
	Provenance Provenance
	// Authorizer guards each route by the role it needs (see routes).
	// Nil means no sign-in: every route is open, for development on
	// loopback.
	Authorizer auth.Authorizer
	// CrossSite is the error (matched with errors.Is) with which the
	// CSRF check the wiring gives Mount refuses a write from another site
	// (web.ErrCrossSite); it is answered 403 cross_site. The API has no
	// CSRF check of its own: the registry has one, the console's.
	CrossSite error
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// API holds the handlers of the JSON API.
type API struct {
	catalog   Catalog
	registrar Registrar
	refresher Refresher
	authz     auth.Authorizer
	runs      *runs.Service
	audit     AuditLog
	operator  Operator
	keys      Keys
	crawl     CrawlStatus
	annotator Annotator
	curator   Curator
	webhooks  Webhooks
	history   report.HistoryStore
	sources   Sources
	prov      Provenance
	// registryID is Options.RegistryID.
	registryID string
	// crossSite is Options.CrossSite.
	crossSite error
	log       *slog.Logger
	// now is the clock of health reports; tests replace it.
	now func() time.Time
	// bodyTimeout bounds the arrival of a request body; tests shorten it.
	bodyTimeout time.Duration
}

// New returns an API over opts.Catalog, which must not be nil.
func New(opts Options) *API {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &API{
		catalog:     opts.Catalog,
		registrar:   opts.Registrar,
		refresher:   opts.Refresher,
		authz:       opts.Authorizer,
		runs:        opts.Runs,
		audit:       opts.Audit,
		operator:    opts.Operator,
		keys:        opts.Keys,
		crawl:       opts.Crawl,
		annotator:   opts.Annotator,
		curator:     opts.Curator,
		webhooks:    opts.Webhooks,
		history:     opts.History,
		sources:     opts.Sources,
		prov:        opts.Provenance,
		registryID:  opts.RegistryID,
		crossSite:   opts.CrossSite,
		log:         log,
		now:         time.Now,
		bodyTimeout: defaultBodyTimeout,
	}
}

// Mount adds the API's routes to e under BasePath behind mw (the
// wiring's CSRF check), answers unknown paths under BasePath with a
// JSON 404 or 405, and wraps e.HTTPErrorHandler so errors under BasePath
// are ErrorResponses while other paths keep the previous handler.
func (a *API) Mount(e *echo.Echo, mw ...echo.MiddlewareFunc) {
	e.HTTPErrorHandler = a.ErrorHandler(e.HTTPErrorHandler)
	mw = append([]echo.MiddlewareFunc{noSniff, a.guardBody}, mw...)
	// Middleware goes on each route, not on the group: echo gives a group
	// with middleware a catch-all 404 route that turns every 405 into 404.
	g := e.Group(BasePath)
	known := echo.New()
	for _, r := range a.routes() {
		g.Add(r.method, r.path, r.handler, a.routeMiddleware(mw, r)...)
		known.Add(r.method, BasePath+r.path, echo.NotFoundHandler)
		if r.method == http.MethodGet {
			// RFC 9110 §9.3.2: HEAD is GET without the content; net/http
			// drops the body of a HEAD response.
			g.Add(http.MethodHead, r.path, r.handler, a.routeMiddleware(mw, r)...)
			known.Add(http.MethodHead, BasePath+r.path, echo.NotFoundHandler)
		}
	}
	// Our own catch-all, so that a catch-all route elsewhere (the
	// console's, say) never answers an API path; it asks a router holding
	// only the API's routes whether the path exists with other methods.
	unmatched := func(c echo.Context) error {
		kc := known.NewContext(c.Request(), nil)
		known.Router().Find(c.Request().Method, echo.GetPath(c.Request()), kc)
		if allow := kc.Get(echo.ContextKeyHeaderAllow); allow != nil {
			c.Set(echo.ContextKeyHeaderAllow, allow)
		}
		// NotFoundHandler, MethodNotAllowedHandler or the OPTIONS answer.
		return kc.Handler()(c)
	}
	g.RouteNotFound("", unmatched)
	g.RouteNotFound("/*", unmatched)
}

// route is one API endpoint and the role its caller needs.
type route struct {
	method, path string
	role         auth.Role
	handler      echo.HandlerFunc
}

// actsOnAgent tells whether r changes one agent, for hideRemoved to guard.
// Reads need no guard: the catalog answers ErrNotFound for a removed agent
// to every scope but the admins' (catalog.Scope).
func (r route) actsOnAgent() bool {
	return strings.HasPrefix(r.path, "/agents/:id") && r.method != http.MethodGet && r.method != http.MethodHead
}

func (a *API) routes() []route {
	rs := []route{
		{method: http.MethodGet, path: "/openapi.json", role: auth.Viewer, handler: serveOpenAPI},
		{method: http.MethodGet, path: "/agents", role: auth.Viewer, handler: a.searchAgents},
		{method: http.MethodGet, path: "/completions", role: auth.Viewer, handler: a.completeAgents},
		{method: http.MethodGet, path: "/agents/:id", role: auth.Viewer, handler: a.getAgent},
		{method: http.MethodGet, path: "/agents/:id/card", role: auth.Viewer, handler: a.getRawCard},
		{method: http.MethodGet, path: "/agents/:id/versions", role: auth.Viewer, handler: a.listVersions},
		{method: http.MethodGet, path: "/agents/:id/versions/:n", role: auth.Viewer, handler: a.getVersion},
		{method: http.MethodGet, path: "/changes", role: auth.Viewer, handler: a.listChanges},
		{method: http.MethodGet, path: "/reports/security", role: auth.Viewer, handler: a.securityReport},
		{method: http.MethodGet, path: "/publishers/:domain", role: auth.Viewer, handler: a.getPublisher},
	}
	// The findings export walks the catalog's current cards; a catalog
	// that cannot (a test double) has no such route.
	if r, ok := a.catalog.(report.CardReader); ok {
		rs = append(rs, route{method: http.MethodGet, path: "/reports/security/findings", role: auth.Viewer, handler: a.securityFindings(r)})
	}
	if a.registrar != nil {
		rs = append(rs, route{method: http.MethodPost, path: "/agents", role: auth.Editor, handler: a.registerAgent})
	}
	if a.refresher != nil {
		rs = append(rs, route{method: http.MethodPost, path: "/agents/:id/refresh", role: auth.Editor, handler: a.refreshAgent})
	}
	if a.runs != nil {
		rs = append(rs,
			route{method: http.MethodPost, path: "/agents/:id/runs", role: auth.Tester, handler: a.startRun},
			route{method: http.MethodGet, path: "/agents/:id/runs", role: auth.Tester, handler: a.listRuns},
			route{method: http.MethodGet, path: "/runs/:id", role: auth.Tester, handler: a.getRun},
			route{method: http.MethodPost, path: "/runs/:id/cancel", role: auth.Tester, handler: a.cancelRun},
			route{method: http.MethodPost, path: "/runs/:id/messages", role: auth.Tester, handler: a.continueRun},
			route{method: http.MethodPost, path: "/runs/:id/resubscribe", role: auth.Tester, handler: a.resubscribeRun},
			route{method: http.MethodPost, path: "/agents/:id/checks", role: auth.Tester, handler: a.checkAgent},
		)
	}
	if a.annotator != nil {
		rs = append(rs, route{method: http.MethodPut, path: "/agents/:id/annotations", role: auth.Editor, handler: a.setAnnotations})
	}
	rs = append(rs, a.curationRoutes()...)
	rs = append(rs, a.webhookRoutes()...)
	rs = append(rs, a.sourceRoutes()...)
	return append(rs, a.operatorRoutes()...)
}

// routeMiddleware is mw (the wiring's: the CSRF check), then the role
// check of r when sign-in is on, then for a route that acts on one agent
// the check that refuses removed agents.
func (a *API) routeMiddleware(mw []echo.MiddlewareFunc, r route) []echo.MiddlewareFunc {
	mw = slices.Clip(mw)
	if a.authz != nil {
		mw = append(mw, a.authz.RequireRole(r.role))
	}
	if r.actsOnAgent() {
		mw = append(mw, a.hideRemoved)
	}
	return mw
}

// noSniff stops browsers from guessing a type for any API response
// (https://fetch.spec.whatwg.org/#x-content-type-options-header).
func noSniff(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("X-Content-Type-Options", "nosniff")
		return next(c)
	}
}

// agentPath is the canonical URL path of an agent, for Location headers.
func agentPath(id string) string {
	return BasePath + "/agents/" + url.PathEscape(id)
}
