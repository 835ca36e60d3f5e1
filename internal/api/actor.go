package api

import (
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
)

// actorOf is who the catalog records as making the writes of request c
// (auth.ActorOf its caller, with the request's id and client address).
func actorOf(c echo.Context) catalog.Actor {
	return auth.ActorOf(auth.FromContext(c.Request().Context()), auth.RequestOf(c))
}
