package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
	"github.com/a2aregistry/registry/internal/runs"
)

// TestSignInTokenNeverReachesAnAgent: a card can name the registry's own
// provider in an openIdConnect scheme — any card can claim it — and the
// tester's sign-in must still not be sent to it: the panel offers no such
// option, and a form that asks for it (cred_signin, the field of the
// removed "use my sign-in token") sends the agent no Authorization at all.
func TestSignInTokenNeverReachesAnAgent(t *testing.T) {
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)

	var mu sync.Mutex
	var seen []string // Authorization headers the agent received
	peer := proxytest.Start(t, card.BindingJSONRPC, "0.3", proxytest.Options{
		Wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Header.Get("Authorization"))
				mu.Unlock()
				next.ServeHTTP(w, r)
			})
		},
	})

	cfg := config.Default()
	cfg.Server.PublicURL = srv.URL
	cfg.Auth.Issuer, cfg.Auth.ClientID, cfg.Auth.ClientSecret = m.Issuer(), m.ClientID, config.Secret(m.ClientSecret)
	cfg.Auth.APIAudience = apiAudience
	cfg.Auth.Scopes = append(cfg.Auth.Scopes, "groups")
	cfg.Auth.Roles = []config.RoleClaim{{Role: "tester", Value: "qa"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	store := catalogtest.SQLite(t)
	log := slog.New(slog.DiscardHandler)
	authn, err := newAuthenticator(cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	px := proxy.New(proxy.Options{Client: proxytest.Loopback(), Logger: log})
	h = newHandler(handlerDeps{log: log, store: store, auth: authn, agents: store,
		runs: runs.New(runs.Options{Runner: px, Store: store, Keeper: proxy.NewKeeper(0, 0), Logger: log})})

	raw, err := json.Marshal(map[string]any{
		"name": "Claims the registry's provider", "description": "d", "url": peer.Interface.URL, "version": "1",
		"protocolVersion": "0.3.0", "preferredTransport": "JSONRPC", "capabilities": map[string]any{},
		"defaultInputModes": []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
		"skills": []any{map[string]any{"id": "echo", "name": "Echo", "description": "echoes", "tags": []string{"t"}}},
		"securitySchemes": map[string]any{"oidc": map[string]any{"type": "openIdConnect",
			"openIdConnectUrl": m.Issuer() + "/.well-known/openid-configuration"}},
		"security": []any{map[string]any{"oidc": []string{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Parse(raw, card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	res, err := store.Upsert(context.Background(), catalog.System("test"),
		catalog.UpsertInput{CardURL: "https://claims.example/.well-known/agent-card.json", Card: c, Source: catalog.SourceURL})
	if err != nil {
		t.Fatal(err)
	}

	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	(&signInServer{oidc: m, srv: srv}).signIn(t, b, &mockoidc.MockUser{Subject: "tess", Email: "tess@example.com", Groups: []string{"qa"}})

	tryURL := srv.URL + "/agents/" + res.Agent.ID + "/try"
	_, page := csrfRequest(t, b, http.MethodGet, tryURL, "", map[string]string{"Accept": "text/html"})
	if strings.Contains(page, "cred_signin") {
		t.Error("the Try it panel offers to send the tester's sign-in token")
	}
	tok := pageToken(t, b, tryURL)

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range map[string]string{"csrf_token": tok, "text": "hi", "cred_signin": "1"} {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, tryURL, &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST try: %d %.400s", resp.StatusCode, out)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range seen {
		if a != "" {
			t.Errorf("the agent received Authorization %.20q…: the tester's sign-in reached a card's endpoint", a)
		}
	}
}
