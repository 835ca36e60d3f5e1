// Package ard is the registry's ARD door: the Agentic Resource Discovery
// v0.91 registry API (ards-project/ard-spec, spec/ard.md §7 and
// spec/schemas/ard.openapi.yaml) under BasePath, and the publisher
// manifest at /.well-known/ard.json.
//
// The door decodes ARD requests into the catalog's search request (the same
// search, ranking and scope as the JSON API and the console), and encodes
// agents as ARD entries through internal/ardentry. It imports no other door.
package ard

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
)

// BasePath is the search base of the ARD registry API: the url of the
// registry's own manifest entry, and the "source" of every result.
const BasePath = "/ard/v1"

// ManifestPath is where publishers serve their ARD manifest.
const ManifestPath = "/.well-known/ard.json"

// Catalog is what the door reads; *catalog.Store implements it. Every read
// takes the caller's scope.
type Catalog interface {
	Search(ctx context.Context, q catalog.Query) (catalog.Page, error)
	// Agent returns catalog.ErrNotFound for an agent the scope does not see.
	Agent(ctx context.Context, sc catalog.Scope, id string) (catalog.Agent, error)
	// PublishedVersion changes whenever any manifest may have.
	PublishedVersion(ctx context.Context) (string, error)
	EachPublished(ctx context.Context, sc catalog.Scope, sel catalog.Published, fn func(catalog.PublishedAgent) error) error
}

// Publish is what the manifest lists besides the registry itself.
type Publish struct {
	// Agents lists agents at all; without it the manifest names only the
	// registry (--ard-publish=none).
	Agents bool
	// Collection, when set, lists that collection's members instead of
	// every approved agent.
	Collection string
}

// Options configure the door.
type Options struct {
	Catalog Catalog
	// Authorizer guards the registry API by the viewer role, as the JSON
	// API's reads; nil means no sign-in (every caller sees everything).
	// The manifest is open to every caller and lists what the caller's
	// scope sees.
	Authorizer auth.Authorizer
	Publish    Publish
	// CardPath is the path at which the registry serves an agent's card
	// (the JSON API's raw card route): the url of entries whose card URL is
	// not an http(s) URL (imported card files). Nil leaves theirs as is.
	CardPath func(agentID string) string
	// PublicURL is the registry's URL as users reach it; "" takes the
	// request's scheme and Host.
	PublicURL string
	// Name is the registry's displayName in its manifest.
	Name string
	// TokenKey authenticates page tokens (HMAC-SHA256); replicas that share
	// one keep each other's tokens valid. Nil draws a random key: tokens
	// then hold on this process only.
	TokenKey []byte
	// RegistryID is this registry's id and ChangeFeedPath the path of
	// its change feed, both advertised in the manifest's registry entry
	// for registries that federate from this one; "" leaves each out.
	RegistryID, ChangeFeedPath string
	// Peers lists the peer registries this registry federates from: the
	// referrals of federation referrals and auto. Nil: none.
	Peers  Peers
	Logger *slog.Logger
}

// Peers lists the peer registries (*sources.Service).
type Peers interface {
	Peers(ctx context.Context) ([]catalog.Source, error)
}

// Door holds the ARD handlers.
type Door struct {
	catalog   Catalog
	authz     auth.Authorizer
	publish   Publish
	publicURL string
	cardPath  func(string) string
	name      string
	tokens    tokenSigner
	selfID    string
	feedPath  string
	peers     Peers
	log       *slog.Logger
}

// New returns the door over opts.Catalog, which must not be nil.
func New(opts Options) *Door {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	name := opts.Name
	if name == "" {
		name = "A2A agent registry"
	}
	return &Door{catalog: opts.Catalog, authz: opts.Authorizer, publish: opts.Publish,
		publicURL: strings.TrimRight(opts.PublicURL, "/"), cardPath: opts.CardPath, name: name, tokens: newTokenSigner(opts.TokenKey),
		selfID: opts.RegistryID, feedPath: opts.ChangeFeedPath, peers: opts.Peers, log: log}
}

// Mount adds the registry API under BasePath and the manifest, and wraps
// e.HTTPErrorHandler so that errors under BasePath are ARD error bodies.
func (d *Door) Mount(e *echo.Echo) {
	e.HTTPErrorHandler = errorHandler(e.HTTPErrorHandler, d.log)
	var mw []echo.MiddlewareFunc
	if d.authz != nil {
		mw = append(mw, d.authz.RequireRole(auth.Viewer))
	}
	g := e.Group(BasePath)
	g.POST("/search", d.search, mw...)
	g.POST("/explore", d.explore, mw...)
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		g.Add(m, "/agents", d.listAgents, mw...)
		g.Add(m, "/agents/:identifier", d.getAgent, mw...)
		g.Add(m, "/openapi.json", serveOpenAPI)
		e.Add(m, ManifestPath, d.manifest)
	}
	// Our own catch-all, so that the console's never answers an ARD path.
	notFound := func(echo.Context) error { return errNotFound("no such ARD route") }
	g.RouteNotFound("", notFound)
	g.RouteNotFound("/*", notFound)
}

// scope is what the caller may see.
func (d *Door) scope(c echo.Context) catalog.Scope {
	if d.authz == nil {
		return catalog.ScopeAll
	}
	return auth.ScopeOf(auth.FromContext(c.Request().Context()))
}

// origin is the registry's public origin: the configured public URL, or
// the request's own scheme and Host (which guardServer has checked).
func (d *Door) origin(c echo.Context) string {
	if d.publicURL != "" {
		return d.publicURL
	}
	return c.Scheme() + "://" + c.Request().Host
}

// searchBase is the absolute search base URL, with its trailing slash as
// the spec's examples write it.
func (d *Door) searchBase(c echo.Context) string {
	return d.origin(c) + BasePath + "/"
}

// Advertise adds `Link: </.well-known/ard.json>; rel="ard"` to the
// responses of GET and HEAD requests outside the machine paths (the JSON
// API, the ARD API, well-known documents, probes, static assets), so a
// client that lands on a console page finds the manifest (ARD discovery by
// Link header, RFC 8288).
func Advertise(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && isPage(r.URL.Path) {
			c.Response().Header().Add("Link", "<"+ManifestPath+`>; rel="ard"`)
		}
		return next(c)
	}
}

func isPage(p string) bool {
	for _, prefix := range []string{"/api/", BasePath + "/", "/.well-known/", "/static/", "/healthz", "/readyz", "/metrics", "/auth/"} {
		if strings.HasPrefix(p, prefix) {
			return false
		}
	}
	return true
}
