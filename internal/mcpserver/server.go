// Package mcpserver is the registry's MCP door: a Model Context Protocol
// server (Streamable HTTP, protocol 2025-06-18 and 2025-11-25, on the
// official Go SDK) whose tools search the catalog and read agents and
// cards, and whose resources are the cards of the agents the caller sees.
//
// Like every door it decodes, calls the application layer (the shared
// search request of internal/query, the catalog's scoped reads) and
// encodes; it writes nothing.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
)

// Paths the door serves.
const (
	Path = "/mcp"
	// MetadataPath is OAuth 2.0 Protected Resource Metadata (RFC 9728 §3)
	// of the registry as a whole; MetadataPath+Path is that of /mcp, the
	// URL RFC 9728 §3.1 derives from the resource /mcp.
	MetadataPath = "/.well-known/oauth-protected-resource"
)

// Limits of a session and a request.
const (
	// maxBody bounds one HTTP request: a tool's arguments are a few
	// short strings, yet a 1 MB argument must reach the schema check and
	// be refused there as a tool error rather than cut off in transport.
	maxBody = 2 << 20
	// sessionIdle closes sessions a client forgot to DELETE, so that
	// abandoned sessions do not hold memory for ever.
	sessionIdle = 10 * time.Minute
)

// Catalog is what the door reads; *catalog.Store implements it.
type Catalog interface {
	Search(ctx context.Context, q catalog.Query) (catalog.Page, error)
	// AgentView returns catalog.ErrNotFound for an agent the scope does
	// not see, as for a missing one.
	AgentView(ctx context.Context, sc catalog.Scope, id string, now time.Time) (catalog.AgentView, error)
	Version(ctx context.Context, sc catalog.Scope, id string, n int) (catalog.Version, error)
	// AgentIDOf is the id of the agent a registry id, ARD identifier or
	// card URL names, as the scope sees it (catalog.Store.AgentIDOf).
	AgentIDOf(ctx context.Context, sc catalog.Scope, ref string) (string, error)
	VisibleAgents(ctx context.Context, sc catalog.Scope, ids []string) (map[string]bool, error)
}

// Options configure a Server.
type Options struct {
	Catalog Catalog
	Logger  *slog.Logger
	// Open serves every caller with every agent in view: no
	// authenticator runs in front (development on loopback, tests).
	// Otherwise the caller is the principal auth put in the request
	// context, and a caller without the viewer role is refused with 401.
	Open bool
	// Issuer is the OIDC provider, named as the authorization server in
	// the protected resource metadata; empty without sign-in.
	Issuer string
	// PublicURL is where clients reach the registry; the request's own
	// origin when empty.
	PublicURL string
	// Version is the registry's, announced at initialization.
	Version string
	Now     func() time.Time
}

// Server is the MCP door.
type Server struct {
	opts    Options
	log     *slog.Logger
	mcp     *mcp.Server
	handler *mcp.StreamableHTTPHandler
}

// New returns the door over o.Catalog.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	s := &Server{opts: o, log: o.Logger}
	// The SDK logs every session's start and end at Info: noise at a
	// registry's scale; its warnings and errors are kept.
	sdkLog := slog.New(minLevel{Handler: o.Logger.Handler(), min: slog.LevelWarn})
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "a2a-registry", Title: "A2A agent registry", Version: o.Version},
		&mcp.ServerOptions{
			Instructions: "Find A2A agents: search_agents by words and filters, list_facets to narrow down, " +
				"get_agent for one agent's skills, interfaces and checks, get_agent_card for its card as published.",
			Logger: sdkLog,
		})
	s.addTools()
	s.mcp.AddReceivingMiddleware(shortErrors)
	s.addResources()
	s.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{
			SessionTimeout: sessionIdle,
			Logger:         sdkLog,
			// A browser page on another site must not drive /mcp with the
			// user's session cookie (Fetch Metadata, Go's
			// CrossOriginProtection); MCP clients are not browsers.
			CrossOriginProtection: http.NewCrossOriginProtection(),
		})
	return s
}

// ServeHTTP serves /mcp: it learns the caller, refuses one without the
// viewer role as the MCP authorization spec asks (2025-06-18
// §Authorization: 401 with the resource metadata URL), and hands the
// caller to the tools through the SDK's token info, the one value of a
// request the SDK passes to handlers of a long-lived session.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, ok := s.caller(r)
	if !ok {
		challenge := fmt.Sprintf(`Bearer resource_metadata=%q`, s.base(r)+MetadataPath+Path)
		msg := "sign-in required: send Authorization: Bearer <token>"
		if r.Header.Get("Authorization") != "" {
			challenge += `, error="invalid_token"`
			msg = "the bearer token is not valid"
		}
		w.Header().Set("WWW-Authenticate", challenge)
		http.Error(w, msg, http.StatusUnauthorized)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	// The SDK's bearer middleware is the only way to give a request's
	// token info to its handlers. The caller is already known, so the
	// "token" it sees is a placeholder: the real one never reaches the
	// SDK, and UserID pins a session to the user who opened it.
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer caller")
	verifier := func(context.Context, string, *http.Request) (*sdkauth.TokenInfo, error) {
		return &sdkauth.TokenInfo{UserID: p.Subject, Expiration: s.opts.Now().Add(time.Hour),
			Extra: map[string]any{principalKey: p}}, nil
	}
	sdkauth.RequireBearerToken(verifier, nil)(s.handler).ServeHTTP(w, r2)
}

const principalKey = "registry_principal"

// caller is the principal of r, and whether they may use the door.
func (s *Server) caller(r *http.Request) (auth.Principal, bool) {
	if s.opts.Open {
		return auth.Principal{Subject: "", Role: auth.Admin, Source: auth.SourceDev}, true
	}
	p := auth.FromContext(r.Context())
	return p, p.Role.Includes(auth.Viewer)
}

// scope is the scope of the caller of req.
func scope(req mcp.Request) catalog.Scope {
	if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
		if p, ok := ex.TokenInfo.Extra[principalKey].(auth.Principal); ok {
			return auth.ScopeOf(p)
		}
	}
	// Not through ServeHTTP (an in-memory transport in tests): the
	// narrowest scope.
	return catalog.Scope{}
}

func (s *Server) base(r *http.Request) string {
	if s.opts.PublicURL != "" {
		return strings.TrimRight(s.opts.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// resourceMetadata is RFC 9728 §2's document.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
}

// ServeMetadata serves the protected resource metadata of the registry
// (at MetadataPath) and of /mcp (at MetadataPath+Path); RFC 9728 §3.3 asks
// that resource be the identifier the URL was derived from.
func (s *Server) ServeMetadata(w http.ResponseWriter, r *http.Request) {
	resource := s.base(r)
	if strings.HasSuffix(r.URL.Path, Path) {
		resource += Path
	}
	doc := resourceMetadata{Resource: resource, BearerMethodsSupported: []string{"header"},
		ResourceName: "A2A agent registry", ResourceDocumentation: s.base(r) + "/api/openapi.json"}
	if s.opts.Issuer != "" {
		doc.AuthorizationServers = []string{s.opts.Issuer}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=3600")
	_ = json.NewEncoder(w).Encode(doc)
}

// toolError is an error the caller can act on; its message is shown to
// the model as the tool's result. Any other error is ours, logged, and
// reported in words that leak nothing.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func userError(format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...)}
}

// fault turns an error of the application layer into a tool error.
func (s *Server) fault(ctx context.Context, what string, err error) error {
	var te *toolError
	switch {
	case errors.As(err, &te):
		return err
	case errors.Is(err, catalog.ErrIndexNotReady):
		return userError("the search index is still being built; retry in a few seconds")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return userError("the request was canceled")
	}
	s.log.ErrorContext(ctx, "mcp tool failed", "tool", what, "err", err)
	return userError("the registry failed to %s; try again later", what)
}

// maxErrorText bounds the text of a tool error: the SDK's schema check
// quotes the offending value, which may be a megabyte long.
const maxErrorText = 1000

// shortErrors cuts the text of tool errors to maxErrorText.
func shortErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if tr, ok := res.(*mcp.CallToolResult); ok && tr != nil && tr.IsError {
			for _, c := range tr.Content {
				if t, ok := c.(*mcp.TextContent); ok && len(t.Text) > maxErrorText {
					t.Text = strings.ToValidUTF8(t.Text[:maxErrorText], "") + "… (cut)"
				}
			}
		}
		return res, err
	}
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(a), min: h.min}
}

func (h minLevel) WithGroup(n string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(n), min: h.min}
}
