package api

import (
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
)

// ActorOf is who the catalog records as making the writes of request c,
// with what the audit log needs about the request: a signed-in user by
// their subject; in development mode (or with sign-in off) the registry on
// the request's behalf. The console uses it too, so the API and the
// console name one caller alike.
func ActorOf(c echo.Context) catalog.Actor {
	p := auth.FromContext(c.Request().Context())
	req := catalog.Request{
		Email:       p.Email,
		DisplayName: p.Name,
		ID:          c.Response().Header().Get(echo.HeaderXRequestID),
		ClientAddr:  c.RealIP(),
	}
	if p.Role >= auth.Viewer {
		req.Role = p.Role.String()
	}
	switch {
	case p.SignedIn() && p.Subject != "":
		return catalog.User(p.Subject).For(req)
	case p.Source == auth.SourceDev:
		return catalog.System("local-admin").For(req)
	default:
		// No authenticator in front (tests, embedding) or an anonymous
		// caller the anonymous role let through.
		return catalog.System("anonymous").For(req)
	}
}
