// Package web serves the registry's console: server-rendered pages
// (web/templates) that htmx makes faster where JavaScript runs, and that
// work as plain links and GET forms where it does not.
//
// Everything a page shows from a card is untrusted: templ escapes it, the
// templates render only http(s) links from cards (never icons: a viewer's
// browser must not call a card's hosts), and invisible or bidirectional
// control characters are shown as visible badges. Every response carries a
// Content-Security-Policy without 'unsafe-inline' or 'unsafe-eval', so even
// a template mistake cannot run a card's script.
package web

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/report"
	"github.com/a2aregistry/registry/internal/runs"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/static"
	"github.com/a2aregistry/registry/web/templates"
)

// Searcher runs catalog searches for the search page.
type Searcher interface {
	Search(ctx context.Context, q catalog.Query) (catalog.Page, error)
	// Explain says why agent id matches text (nil: it does not); an agent
	// the scope does not see is catalog.ErrNotFound.
	Explain(ctx context.Context, sc catalog.Scope, id, text string) (*catalog.Explanation, error)
	// Complete returns the tags and skill names of the agents the scope
	// sees that typed begins, at most limit (0: the default).
	Complete(ctx context.Context, sc catalog.Scope, typed string, limit int) ([]catalog.Completion, error)
}

// AgentReader reads what the agent page shows. *catalog.Store implements
// it.
type AgentReader interface {
	// AgentView reads the agent, its versions, health and verification
	// report in one read transaction; catalog.ErrNotFound for an unknown
	// id.
	// An agent the scope does not see is catalog.ErrNotFound too.
	AgentView(ctx context.Context, sc catalog.Scope, id string, now time.Time) (catalog.AgentView, error)
	// Version returns catalog.ErrNotFound for an unknown agent or number.
	Version(ctx context.Context, sc catalog.Scope, id string, n int) (catalog.Version, error)
	// VisibleAgents reports which of ids the scope sees (removed agents
	// only ScopeAll): the agent page links no other agent outside it.
	VisibleAgents(ctx context.Context, sc catalog.Scope, ids []string) (map[string]bool, error)
	// PolicyState is the admission policy's standing on the agent's
	// current version.
	PolicyState(ctx context.Context, sc catalog.Scope, id string) (catalog.PolicyState, error)
}

// Principal is the signed-in caller as the console shows them.
type Principal struct {
	// Subject is the caller's stable id at the provider. Writes name
	// their actor from the request itself (auth.ActorOf), as the API does.
	Subject string
	Name    string
	Role    auth.Role
	// Session tells that the caller signed in through the browser, so
	// the header offers to sign out.
	Session bool
}

// Options configure a Console.
// SemanticState is search's semantic layer as the search page states it.
type SemanticState struct {
	Model string
	// Embedded of Agents indexed have a vector of the model.
	Embedded, Agents int
}

type Options struct {
	Searcher Searcher
	Agents   AgentReader
	// Authorizer guards each page by the role it needs, as it guards the
	// API; nil means no sign-in (development mode): every page is open.
	Authorizer auth.Authorizer
	// Principal returns the caller of a request; nil or false when nobody
	// is signed in.
	Principal func(echo.Context) (Principal, bool)
	// CSRFToken returns the token that state-changing requests of this
	// caller must carry (form field csrf_token, header X-CSRF-Token). When
	// nil (no sign-in), the console uses one random token per process: a
	// cross-site page cannot read it, which is all CSRF protection needs.
	CSRFToken func(echo.Context) string
	// TrustedOrigins may send state-changing requests from a browser
	// besides the request's own origin (the public URL's origin when the
	// registry sits behind a proxy); every other cross-site write is
	// refused, on the console's routes and on those GuardWrites guards.
	TrustedOrigins []string
	// Registrar serves the register page; nil means none (read-only).
	Registrar Registrar
	// Refresher serves "check now" on agent pages; nil means none (the
	// registry does not crawl).
	Refresher Refresher
	// Pauser serves pause and resume on agent pages; nil means none.
	Pauser Pauser
	// Keys serves the trusted-keys page (admin); nil means none.
	Keys KeyStore
	// Runs serves the "Try it" panel (tester); nil means none. It is the
	// API's too: runs from the console count against the same limits,
	// and a run's credentials are remembered for its follow-ups whichever
	// door they come through.
	Runs *runs.Service
	// OAuth, with Runs, lets a tester sign in to an agent's oauth2
	// scheme (authorization code with PKCE) from the panel; nil means
	// no such sign-in. PublicURL is where browsers reach the registry,
	// for the redirect URI (the request's own address when empty).
	OAuth     OAuthFlows
	PublicURL string
	// Remover serves removing an agent (admin); nil means none.
	Remover Remover
	// Crawl serves the crawler status page (editor); nil means none.
	Crawl CrawlStatus
	// Audit serves the audit log page (admin); nil means none.
	Audit AuditLog
	// Webhooks serves the webhooks page (admin); nil means none.
	Webhooks Webhooks
	// Sources serves the sources pages (editor); nil means none.
	// Provenance adds how each agent came to its page; nil means none.
	Sources    Sources
	Provenance Provenance
	// Annotator serves editing annotations on agent pages (editor); nil
	// means they are shown but not editable.
	Annotator Annotator
	// Curator serves the review page, listing transitions and the
	// collections page; nil means none.
	Curator Curator
	// History is the security report's daily history, drawn on
	// /security; nil means none is shown.
	History report.HistoryStore
	// Semantic reports search's semantic layer for the search page's
	// note; nil when it is off.
	Semantic func() SemanticState
	// APIPath is where the JSON API is mounted (the API package's
	// BasePath, handed over by the wiring: the console does not import
	// another door). Pages link a card's exact bytes there, and errors of
	// requests under it are left to the API's own handler.
	APIPath string
	// DevMode shows the development-mode banner on every page.
	DevMode bool
	// SignIn tells that sign-in is on (auth.Authenticator mounted with a
	// provider): the header links to auth.LoginPath for a caller without
	// a session and offers auth.LogoutPath to one with.
	SignIn bool
	// IndexNotReady is the error (matched with errors.Is) a Searcher
	// returns while its index is being built, to show a "being built"
	// page rather than a failure; nil when the Searcher has none.
	IndexNotReady error
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Console holds the console's handlers.
type Console struct {
	opts   Options
	log    *slog.Logger
	assets *assets
	// processCSRF is the token when Options.CSRFToken is nil.
	processCSRF string
	// csrf is the registry's one CSRF check (csrf.go).
	csrf *csrfGuard
	// now is the clock of health reports; tests replace it.
	now func() time.Time
	// grants are the Try panel's sign-ins waiting for their callback.
	grants grantStore
}

// New returns a console over opts; Searcher and Agents must not be nil.
// It panics if the embedded assets are unusable, which is a build defect
// (the tests load them).
func New(opts Options) *Console {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	as, err := loadAssets(static.FS)
	if err != nil {
		panic(fmt.Sprintf("web: loading embedded console assets: %v", err))
	}
	return &Console{opts: opts, log: log, assets: as, processCSRF: rand.Text(), now: time.Now,
		csrf: newCSRFGuard(opts.TrustedOrigins, log)}
}

// Mount adds the console's routes to e. Every route carries the security
// headers; with sign-in on, each also checks the role it needs. Errors of
// requests from pages become the console's error page.
func (h *Console) Mount(e *echo.Echo) {
	read := h.guarded(auth.Viewer)
	e.GET("/", h.search, read...)
	e.GET("/agents/:id", h.agent, read...)
	e.GET("/agents/:id/diff", h.diff, read...)
	e.GET("/agents/:id/why", h.why, read...)
	e.GET("/complete", h.complete, read...)
	if h.opts.Registrar != nil {
		edit := h.guarded(auth.Editor)
		e.GET("/register", h.registerForm, edit...)
		e.POST("/register", h.register, append(edit, limitBody(maxRegisterForm), h.checkCSRF)...)
	}
	h.mountOperations(e)
	h.mountKeys(e)
	h.mountTryIt(e)
	h.mountAudit(e)
	h.mountWebhooks(e)
	h.mountSources(e)
	h.mountRemove(e)
	h.mountCrawl(e)
	h.mountAnnotations(e)
	h.mountCuration(e)
	h.mountSecurity(e)
	h.mountPublishers(e)
	// The signed-out page needs no role: where every page needs one, a
	// guarded landing would send the browser to sign-in, and an SSO
	// provider would sign the user straight back in.
	e.GET(auth.SignedOutPath, h.signedOut, securityHeaders)
	// Assets are the same for everyone and hold nothing secret: the login
	// page needs its stylesheet before anyone is signed in.
	e.GET(assetPrefix+":hash/:name", h.asset, securityHeaders)
	e.RouteNotFound("/*", h.notFound, securityHeaders)
	e.HTTPErrorHandler = h.errorHandler(e.HTTPErrorHandler)
}

// guarded is the middleware of a route that needs role: the security
// headers, then the Authorizer's check (none without sign-in). It goes on
// each route, as in the API: echo turns a group with middleware into a
// catch-all.
func (h *Console) guarded(role auth.Role) []echo.MiddlewareFunc {
	mw := []echo.MiddlewareFunc{securityHeaders}
	if h.opts.Authorizer != nil {
		mw = append(mw, h.opts.Authorizer.RequireRole(role))
	}
	return mw
}

// contentSecurityPolicy allows only our own scripts, styles and images
// and nothing inline: the templates use no inline script, style
// attribute or event handler, and htmx is told not to inject its
// indicator styles (the htmx-config meta tag). Card icons are never
// loaded (img-src 'self'). frame-ancestors 'none' stops clickjacking
// (CSP3 §6.4.2); form-action and base-uri stop injected markup from
// redirecting forms or relative URLs.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// securityHeaders sets the headers every console response carries.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		setSecurityHeaders(c.Response().Header())
		return next(c)
	}
}

func setSecurityHeaders(hd http.Header) {
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	// Card links also carry rel=noreferrer; this covers everything else:
	// a search URL may say what a user was looking for.
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY") // for browsers without CSP frame-ancestors
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// page is what a handler renders: the whole page's main content and the
// part an htmx request swaps in.
type page struct {
	title string
	body  templ.Component
	// fragment answers htmx requests; nil means body.
	fragment templ.Component
}

// render writes p with status: the fragment for an htmx request that
// swaps part of a page, the whole document for everything else (a first
// visit, a no-JS form, a boosted link, a history restore).
func (h *Console) render(c echo.Context, status int, p page) error {
	hd := c.Response().Header()
	// The same URL answers with a fragment or a document, so caches must
	// tell them apart; pages may show signed-in content, so none keep it.
	hd.Add("Vary", hxRequest)
	hd.Set("Cache-Control", "no-store")
	var comp templ.Component
	if isFragmentRequest(c.Request()) {
		comp = p.fragment
		if comp == nil {
			comp = p.body
		}
	} else {
		comp = templates.Page(h.layout(c, p.title), p.body)
	}
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	if err := comp.Render(c.Request().Context(), c.Response()); err != nil {
		return fmt.Errorf("rendering %s: %w", c.Path(), err)
	}
	return nil
}

// layout is the frame of every full page for this request's caller.
func (h *Console) layout(c echo.Context, title string) view.Layout {
	l := view.Layout{Title: title, CSS: h.assets.cssURL, JS: h.assets.jsURL, DevMode: h.opts.DevMode}
	if h.opts.APIPath != "" {
		l.APIDocURL = h.opts.APIPath + "/openapi.json"
	}
	var session bool
	if h.opts.Principal != nil {
		if p, ok := h.opts.Principal(c); ok {
			l.User = &view.User{Name: p.Name, Role: p.Role.String()}
			session = p.Session
		}
	}
	if h.opts.SignIn {
		if session {
			l.SignOutURL = auth.LogoutPath
		} else {
			// Back to this page after signing in; auth keeps next on
			// this site. Signing in from the signed-out page goes to
			// search, not back to "signed out".
			next := c.Request().URL.RequestURI()
			if c.Request().URL.Path == auth.SignedOutPath {
				next = "/"
			}
			l.SignInURL = auth.LoginPath + "?next=" + url.QueryEscape(next)
		}
	}
	l.CanRegister = h.opts.Registrar != nil && h.canOperate(c)
	l.CanKeys = h.opts.Keys != nil && h.holds(c, auth.Admin)
	l.CanAudit = h.opts.Audit != nil && h.holds(c, auth.Admin)
	l.CanWebhooks = h.opts.Webhooks != nil && h.holds(c, auth.Admin)
	l.CanSources = h.opts.Sources != nil && h.canOperate(c)
	l.CanCrawl = h.opts.Crawl != nil && h.canOperate(c)
	l.CanRemoved = h.opts.Remover != nil && h.holds(c, auth.Admin)
	l.CanReview = h.canReview(c)
	l.CanCollections = h.opts.Curator != nil
	if tok := h.csrfToken(c); tok != "" {
		l.CSRFToken = tok
		// htmx sends these headers with every request it makes, so a
		// token never travels in a URL (hx-headers, JSON).
		b, err := json.Marshal(map[string]string{csrfHeader: tok})
		if err == nil {
			l.HXHeaders = string(b)
		}
	}
	return l
}

// signedOut is where sign-out lands. It never redirects on its own; a
// caller who still has a session (another tab signed in again) goes on
// to search.
func (h *Console) signedOut(c echo.Context) error {
	if h.opts.Principal != nil {
		if p, ok := h.opts.Principal(c); ok && p.Session {
			return c.Redirect(http.StatusSeeOther, "/")
		}
	}
	return h.render(c, http.StatusOK, page{title: "Signed out", body: templates.SignedOutPage(h.opts.SignIn, auth.LoginPath+"?next=%2F")})
}

func (h *Console) notFound(c echo.Context) error {
	return h.errorPage(c, http.StatusNotFound, "Not found", "There is no page at this address.")
}

func (h *Console) errorPage(c echo.Context, status int, title, msg string) error {
	e := view.Error{Status: status, Title: title, Message: msg}
	return h.render(c, status, page{title: title, body: templates.ErrorPage(e)})
}

// scope is what the caller of c may see: auth.ScopeOf, every door's rule, or
// everything without sign-in (development mode), where every page is open.
func (h *Console) scope(c echo.Context) catalog.Scope {
	if h.opts.Authorizer == nil {
		return catalog.ScopeAll
	}
	return auth.ScopeOf(auth.FromContext(c.Request().Context()))
}
