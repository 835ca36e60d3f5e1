package main

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/api"
	"github.com/a2aregistry/registry/internal/ard"
	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
)

// ardStore is what the ARD door and identifier resolution read;
// *catalog.Store implements it.
type ardStore interface {
	ard.Catalog
	agentResolver
}

// ardPublish is the manifest's selection of --ard-publish.
func ardPublish(c config.ARD) ard.Publish {
	return ard.Publish{Agents: c.Publish != config.ARDPublishNone, Collection: c.PublishedCollection()}
}

// mountARD mounts the ARD door (after the console, whose error handler
// and catch-all it wraps) and advertises its manifest on console pages.
func mountARD(e *echo.Echo, d handlerDeps) {
	opts := ard.Options{Catalog: d.ardStore, Publish: d.ard, PublicURL: d.publicURL, Logger: d.log, TokenKey: d.ardTokenKey,
		CardPath:   func(id string) string { return api.BasePath + "/agents/" + url.PathEscape(id) + "/card" },
		RegistryID: d.registryID, ChangeFeedPath: api.BasePath + "/changes"}
	if d.sources != nil {
		opts.Peers = d.sources
	}
	if d.auth != nil {
		opts.Authorizer = d.auth
	}
	ard.New(opts).Mount(e)
	e.Use(ard.Advertise)
}

// agentResolver finds the agent an ARD identifier or a card URL names, in
// a scope; *catalog.Store implements it.
type agentResolver interface {
	AgentIDOf(ctx context.Context, sc catalog.Scope, ref string) (string, error)
}

// agentParams names, by route prefix, the parameter of the routes that
// take an agent's id.
var agentParams = []struct{ prefix, param string }{
	{api.BasePath + "/agents/:id", "id"},
	{"/agents/:id", "id"},
	{api.BasePath + "/collections/:name/agents/:agent_id", "agent_id"},
}

// resolveAgentRefs lets the JSON API's and the console's agent routes take
// an agent's ARD identifier (card.URNOf) or its card URL wherever they
// take its id (catalog.IsAgentRef): the route's id parameter is replaced by
// the id of the agent the reference names, as the caller's scope sees it.
// A reference that names no agent the caller sees is left as it is, and
// the route answers 404 as for any unknown id.
func resolveAgentRefs(store agentResolver, signIn bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p := c.Path()
			param := ""
			for _, ap := range agentParams {
				if strings.HasPrefix(p, ap.prefix) {
					param = ap.param
					break
				}
			}
			if param == "" {
				return next(c)
			}
			names := c.ParamNames()
			for i, n := range names {
				if n != param {
					continue
				}
				vals := c.ParamValues()
				raw, err := url.PathUnescape(vals[i])
				if err != nil || !catalog.IsAgentRef(raw) {
					break
				}
				sc := catalog.ScopeAll
				if signIn {
					sc = auth.ScopeOf(auth.FromContext(c.Request().Context()))
				}
				id, err := store.AgentIDOf(c.Request().Context(), sc, raw)
				if errors.Is(err, catalog.ErrNotFound) || errors.Is(err, card.ErrMalformedURN) || errors.Is(err, card.ErrInvalidURL) {
					break
				}
				if err != nil {
					return err
				}
				vals[i] = url.PathEscape(id)
				c.SetParamValues(vals...)
				break
			}
			return next(c)
		}
	}
}
