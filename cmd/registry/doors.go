package main

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/mcpserver"
)

// doorDeps are what the protocol doors beside the JSON API and the
// console need; nil fields leave a door off.
type doorDeps struct {
	mcp mcpserver.Catalog // nil: no /mcp
}

// mountDoors mounts the MCP server and its protected resource metadata
// (RFC 9728), when configured.
func mountDoors(e *echo.Echo, d handlerDeps) {
	if d.doors.mcp == nil {
		return
	}
	o := mcpserver.Options{Catalog: d.doors.mcp, Logger: d.log, PublicURL: d.publicURL, Version: versionString(), Open: d.auth == nil}
	if d.auth != nil {
		o.Issuer = d.auth.Issuer()
	}
	s := mcpserver.New(o)
	mcp := echo.WrapHandler(s)
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		e.Add(m, mcpserver.Path, mcp)
	}
	meta := echo.WrapHandler(http.HandlerFunc(s.ServeMetadata))
	e.GET(mcpserver.MetadataPath, meta)
	e.GET(mcpserver.MetadataPath+mcpserver.Path, meta)
}
