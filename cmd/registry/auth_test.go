package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/a2aregistry/registry/internal/api"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// countingRegistrar counts registrations and refuses each as a blocked
// address (422), so a call that got past the role check is visible.
type countingRegistrar struct{ calls atomic.Int32 }

func (r *countingRegistrar) Register(context.Context, catalog.Actor, catalog.Scope, string) (catalog.UpsertResult, error) {
	r.calls.Add(1)
	return catalog.UpsertResult{}, fmt.Errorf("registering: %w", &crawler.FetchError{
		Class: crawler.ClassBlockedAddress, URL: "https://agent.example/", Err: safehttp.ErrBlockedAddress})
}

type signInServer struct {
	header http.Header // sent with every request of do
	oidc   *mockoidc.MockOIDC
	srv    *httptest.Server
	reg    *countingRegistrar
	store  *catalog.Store
}

// apiAudience is the audience of the tests' API tokens: never the
// console's client id (config refuses that).
const apiAudience = "registry-api"

// newSignInServer serves the registry's handler with sign-in through an
// in-process mockoidc, configured as an operator would: flags in a
// config.Config, turned into an Authenticator by newAuthenticator.
func newSignInServer(t *testing.T, tweak func(*config.Config)) *signInServer {
	t.Helper()
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	s := &signInServer{oidc: m, reg: &countingRegistrar{}}
	var h http.Handler
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(s.srv.Close)

	cfg := config.Default()
	cfg.Server.PublicURL = s.srv.URL
	cfg.Auth.Issuer, cfg.Auth.ClientID, cfg.Auth.ClientSecret = m.Issuer(), m.ClientID, config.Secret(m.ClientSecret)
	cfg.Auth.APIAudience = apiAudience
	cfg.Auth.Roles = []config.RoleClaim{{Role: "editor", Value: "eng"}, {Role: "admin", Value: "admins"}}
	if tweak != nil {
		tweak(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	store := catalogtest.SQLite(t)
	log := slog.New(slog.DiscardHandler)
	authn, err := newAuthenticator(cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	h = newHandler(handlerDeps{log: log, store: store, registrar: s.reg, auth: authn, ops: store})
	s.store = store
	return s
}

func (s *signInServer) token(t *testing.T, groups ...string) string {
	t.Helper()
	now := time.Now()
	tok, err := s.oidc.Keypair.SignJWT(jwt.MapClaims{
		"iss": s.oidc.Issuer(), "aud": apiAudience, "sub": "client-1",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "groups": groups,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (s *signInServer) do(t *testing.T, method, path, token string) (*http.Response, api.ErrorResponse) {
	t.Helper()
	var body *strings.Reader
	if method == http.MethodPost && path == "/api/v1/agents" {
		body = strings.NewReader(`{"url":"https://agent.example"}`)
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, s.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range s.header {
		req.Header[k] = v
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e api.ErrorResponse
	if resp.StatusCode >= 400 {
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			t.Fatalf("%s %s: %d with a body that is not an API error: %v", method, path, resp.StatusCode, err)
		}
	}
	return resp, e
}

// TestAPIRoles: the JSON API behind sign-in. Anonymous callers get a JSON
// 401 with a Bearer challenge unless the anonymous role is viewer; a
// viewer cannot register (JSON 403) and the registrar is never reached;
// an editor can.
func TestAPIRoles(t *testing.T) {
	tests := []struct {
		name      string
		anonymous string
		method    string
		groups    []string // nil: no token
		want      int
		wantCode  string
		reaches   bool // the registrar is called
	}{
		{"anonymous read, anonymous role none", config.RoleNone, http.MethodGet, nil, 401, api.CodeUnauthorized, false},
		{"anonymous register, anonymous role none", config.RoleNone, http.MethodPost, nil, 401, api.CodeUnauthorized, false},
		{"anonymous read, anonymous role viewer", "viewer", http.MethodGet, nil, 200, "", false},
		{"anonymous register, anonymous role viewer", "viewer", http.MethodPost, nil, 401, api.CodeUnauthorized, false},
		{"viewer reads", config.RoleNone, http.MethodGet, []string{"design"}, 200, "", false},
		{"viewer cannot register", config.RoleNone, http.MethodPost, []string{"design"}, 403, api.CodeForbidden, false},
		{"editor registers", config.RoleNone, http.MethodPost, []string{"eng"}, 422, api.CodeBlockedAddress, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSignInServer(t, func(c *config.Config) { c.Auth.AnonymousRole = tt.anonymous })
			tok := ""
			if tt.groups != nil {
				tok = s.token(t, tt.groups...)
			}
			resp, e := s.do(t, tt.method, "/api/v1/agents", tok)
			if resp.StatusCode != tt.want || e.Error.Code != tt.wantCode {
				t.Errorf("status %d code %q, want %d %q", resp.StatusCode, e.Error.Code, tt.want, tt.wantCode)
			}
			if resp.StatusCode == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %q", resp.Header.Get("WWW-Authenticate"))
			}
			if reached := s.reg.calls.Load() > 0; reached != tt.reaches {
				t.Errorf("registrar reached %v, want %v", reached, tt.reaches)
			}
		})
	}
}

// TestSignInRoutesMounted: serve's handler answers /auth/login by sending
// the browser to the provider with the redirect URL of the public URL.
func TestSignInRoutesMounted(t *testing.T) {
	s := newSignInServer(t, nil)
	resp, _ := s.do(t, http.MethodGet, "/auth/login?next=/", "")
	loc := resp.Header.Get("Location")
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, s.oidc.AuthorizationEndpoint()) ||
		u.Query().Get("redirect_uri") != s.srv.URL+"/auth/callback" {
		t.Errorf("GET /auth/login: %d to %q, want a redirect to the provider with the callback", resp.StatusCode, loc)
	}
}

// TestDevModeAPIOpen: without a provider the local caller is admin, as
// before sign-in existed, and bearer tokens are not needed.
func TestDevModeAPIOpen(t *testing.T) {
	store := catalogtest.SQLite(t)
	log := slog.New(slog.DiscardHandler)
	authn, err := newAuthenticator(config.Default(), store, log)
	if err != nil {
		t.Fatal(err)
	}
	if !authn.DevMode() {
		t.Fatal("default configuration is not development mode")
	}
	reg := &countingRegistrar{}
	srv := httptest.NewServer(newHandler(handlerDeps{log: log, store: store, registrar: reg, auth: authn}))
	defer srv.Close()
	s := &signInServer{srv: srv, reg: reg}
	if resp, e := s.do(t, http.MethodPost, "/api/v1/agents", ""); resp.StatusCode != 422 || reg.calls.Load() != 1 {
		t.Errorf("POST /api/v1/agents in development mode: %d %+v, registrar calls %d", resp.StatusCode, e, reg.calls.Load())
	}
}

// TestAuditNamesTheSignedInCaller: a write with a bearer token is in the
// audit log under the token's subject and mapped role, with the request's
// id and address; a write the role refuses is not. The request id is the
// registry's own: a client's X-Request-Id is kept apart, capped.
func TestAuditNamesTheSignedInCaller(t *testing.T) {
	s := newSignInServer(t, nil)
	ctx := context.Background()
	c, err := card.Parse([]byte(`{"name":"Echo","description":"d","url":"https://echo.example/a2a","version":"1.0.0",
		"protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`), card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.store.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: "https://echo.example/.well-known/agent-card.json", Card: c})
	if err != nil {
		t.Fatal(err)
	}
	editor := s.token(t, "eng")
	if resp, e := s.do(t, http.MethodDelete, "/api/v1/agents/"+res.Agent.ID, editor); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("editor removing: %d %+v", resp.StatusCode, e)
	}
	s.header = http.Header{"X-Request-Id": {"forged-\tid\u00e9" + strings.Repeat("x", 300)}}
	resp, e := s.do(t, http.MethodPost, "/api/v1/agents/"+res.Agent.ID+"/pause", editor)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("editor pausing: %d %+v", resp.StatusCode, e)
	}
	log, err := s.store.AuditLog(ctx, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Entries) != 1 {
		t.Fatalf("audit log = %+v, want the one pause", log.Entries)
	}
	got := log.Entries[0]
	if got.ActorKind != catalog.ActorUser || got.Subject != "client-1" || got.Role != "editor" || got.Action != catalog.ActionPause ||
		got.TargetID != res.Agent.ID || got.RequestID == "" || got.RequestID != resp.Header.Get("X-Request-Id") || got.ClientAddr != "127.0.0.1" {
		t.Errorf("audit entry = %+v", got)
	}
	if wantClient := ("forged-id" + strings.Repeat("x", 300))[:128]; got.ClientRequestID != wantClient || strings.Contains(got.RequestID, "forged") {
		t.Errorf("audit entry request id %q, client request id %q; want the registry's own and %q", got.RequestID, got.ClientRequestID, wantClient)
	}
}
