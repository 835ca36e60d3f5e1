package mcpserver

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2aregistry/registry/internal/catalog"
)

// Card resources: a2a-registry://agents/{id}/card is the current card of
// agent id as published.
const (
	cardURIPrefix  = "a2a-registry://agents/"
	cardURISuffix  = "/card"
	cardTemplate   = cardURIPrefix + "{id}" + cardURISuffix
	cardMediaType  = "application/json"
	resourcesPage  = catalog.MaxLimit
	methodListRsrc = "resources/list"
)

func cardURI(id string) string { return cardURIPrefix + id + cardURISuffix }

func (s *Server) addResources() {
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "agent-card",
		Title:       "Agent card",
		Description: "The A2A card of a registered agent, as the agent published it.",
		URITemplate: cardTemplate,
		MIMEType:    cardMediaType,
	}, s.readCard)
	// The SDK lists the resources added to the server, one set for every
	// session; which cards a caller may see depends on the caller, so
	// resources/list is answered here, from the catalog, in pages.
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != methodListRsrc {
				return next(ctx, method, req)
			}
			lr, ok := req.(*mcp.ListResourcesRequest)
			if !ok {
				return next(ctx, method, req)
			}
			return s.listCards(ctx, lr)
		}
	})
}

func (s *Server) listCards(ctx context.Context, req *mcp.ListResourcesRequest) (*mcp.ListResourcesResult, error) {
	q := catalog.Query{Limit: resourcesPage, Scope: scope(req), FacetLimit: 1}
	if req.Params != nil {
		q.Cursor = req.Params.Cursor
	}
	page, err := s.opts.Catalog.Search(ctx, q)
	if errors.Is(err, catalog.ErrInvalidCursor) {
		// MCP 2025-06-18 §Pagination: an invalid cursor is -32602.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "cursor is invalid or expired; list again without it"}
	}
	if err != nil {
		return nil, s.fault(ctx, "list cards", err)
	}
	out := &mcp.ListResourcesResult{Resources: make([]*mcp.Resource, 0, len(page.Items)), NextCursor: page.NextCursor}
	for _, it := range page.Items {
		out.Resources = append(out.Resources, &mcp.Resource{
			URI: cardURI(it.ID), Name: it.ID, Title: it.Name, Description: excerpt(it.Description, 200), MIMEType: cardMediaType,
		})
	}
	return out, nil
}

func (s *Server) readCard(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, cardURIPrefix)
	if ok {
		id, ok = strings.CutSuffix(id, cardURISuffix)
	}
	if !ok || id == "" || strings.Contains(id, "/") || len(id) > maxIDArgLen {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	sc := scope(req)
	v, err := s.opts.Catalog.AgentView(ctx, sc, id, s.opts.Now())
	if errors.Is(err, catalog.ErrNotFound) || err == nil && (v.Agent.Card == nil || v.Agent.Removed != nil && !sc.All) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, s.fault(ctx, "read the card", err)
	}
	// Card.Raw is the current version byte for byte, as published.
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: cardMediaType, Text: string(v.Agent.Card.Raw)}}}, nil
}
