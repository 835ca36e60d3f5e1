package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/a2aagent"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/mcpserver"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// doorDeps are what the protocol doors beside the JSON API and the
// console need; nil fields leave a door off.
type doorDeps struct {
	mcp   mcpserver.Catalog // nil: no /mcp
	agent a2aagent.Catalog  // nil: the registry is no A2A agent
	// self, when set with agent, is told the registry's own card and
	// interface URLs, the one exception to "the registry never calls
	// itself" (see exemptOwnCard).
	self *safehttp.Self
	// signingKey is the PEM file the agent's card is signed with; empty:
	// unsigned.
	signingKey string
}

// mountDoors mounts the MCP server and its protected resource metadata
// (RFC 9728), and the registry as an A2A agent, when configured.
func mountDoors(e *echo.Echo, d handlerDeps) {
	if d.doors.agent != nil {
		o := a2aagent.Options{Catalog: d.doors.agent, Logger: d.log, BaseURL: d.publicURL, Version: versionString(), Open: d.auth == nil}
		if d.auth != nil {
			o.Issuer = d.auth.Issuer()
		}
		var err error
		if d.doors.signingKey != "" {
			o.SigningKey, err = a2aagent.LoadSigningKey(d.doors.signingKey)
		}
		// Without the key the operator asked for, or with a card the SDK
		// cannot render, the door stays shut: the rest of the registry
		// still serves.
		var ag *a2aagent.Agent
		if err == nil {
			ag, err = a2aagent.New(o)
		}
		if err != nil {
			d.log.Error("the registry as an A2A agent is off", "err", err)
		} else {
			mountAgent(e, ag)
			if d.doors.self != nil && d.publicURL != "" {
				if err := exemptOwnCard(d.doors.self, d.publicURL, ag.Card()); err != nil {
					d.log.Error("the registry's own card cannot be fetched by the registry", "err", err)
				}
			}
		}
	}
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

// exemptOwnCard lets the outbound clients reach the registry's own card
// at publicURL and exactly the interface URLs it declares, without
// credentials (safehttp.Self.Exempt), so the registry can list, verify and
// try itself like any agent. Without a public URL the card names whichever
// host a client used, and nothing is exempt. The HTTP+JSON interface's
// calls go to paths under its URL, which the exception does not open: it
// is probed and tried as refused.
func exemptOwnCard(self *safehttp.Self, publicURL string, raw []byte) error {
	c, err := card.Parse(raw, card.Limits{})
	if err != nil {
		return fmt.Errorf("reading the registry's own card: %w", err)
	}
	base := strings.TrimRight(publicURL, "/")
	urls := []string{base + a2aagent.CardPath}
	for _, in := range c.Interfaces {
		urls = append(urls, in.URL)
	}
	if len(c.Signatures) > 0 {
		// A signed card names the key set it is verified with (jku): the
		// verifier fetches it like the card, with no credential.
		urls = append(urls, base+a2aagent.JWKSPath)
	}
	return self.Exempt(urls...)
}

// mountAgent serves the registry's card and the interfaces it declares.
func mountAgent(e *echo.Echo, ag *a2aagent.Agent) {
	card := echo.WrapHandler(http.HandlerFunc(ag.ServeCard))
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodOptions} {
		e.Add(m, a2aagent.CardPath, card)
	}
	e.Any("/a2a/*", echo.WrapHandler(ag))
	e.GET(a2aagent.JWKSPath, echo.WrapHandler(http.HandlerFunc(ag.ServeJWKS)))
}
