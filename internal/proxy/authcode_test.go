package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

func authCodeCard(t *testing.T, authURL, tokenURL string) *card.Card {
	t.Helper()
	raw := fmt.Sprintf(`{"name": "a", "description": "d", "version": "1",
		"supportedInterfaces": [{"url": "http://127.0.0.1:1/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
		"capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [],
		"securitySchemes": {
			"code": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {"authorizationUrl": %q, "tokenUrl": %q, "scopes": {"read": "r"}}}}},
			"cc": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": %q, "scopes": {}}}}}
		}}`, authURL, tokenURL, tokenURL)
	c, err := card.Parse([]byte(raw), card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAuthCode runs the authorization-code grant with PKCE against an
// in-process authorization server, as the console's browser would.
func TestAuthCode(t *testing.T) {
	as := proxytest.StartAuthServer(t, "registry", "s3cret", "code-token-1")
	c := authCodeCard(t, as.AuthorizeURL, as.TokenURL)
	p := New(Options{Client: proxytest.Loopback()})
	if got := AuthCodeSchemes(c); len(got) != 1 || len(got["code"]) != 1 {
		t.Errorf("AuthCodeSchemes = %v, want only code with scope read", got)
	}
	const redirect = "http://registry.test/tryit/oauth/callback"
	ac := AuthCode{Scheme: "code", ClientID: "registry", ClientSecret: "s3cret", Scopes: []string{"read"}, RedirectURL: redirect}
	verifier := "verifier-0123456789-0123456789-0123456789-0123456789"

	// The browser's trip: authorize answers with a redirect to the callback.
	g, err := p.StartAuthCode(t.Context(), c, ac, "state-1", verifier)
	if err != nil {
		t.Fatal(err)
	}
	authURL := g.URL
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || back.Query().Get("state") != "state-1" || back.Query().Get("code") == "" {
		t.Fatalf("authorize answered %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	code := back.Query().Get("code")

	if _, err := p.ExchangeCode(t.Context(), g, Callback{Code: code}, "another-verifier-0123456789-0123456789-01234"); !errors.Is(err, ErrTokenRequest) {
		t.Errorf("exchange with the wrong verifier = %v, want ErrTokenRequest", err)
	}
	// The failed attempt used the code up; a fresh one with the right
	// verifier succeeds.
	g, _ = p.StartAuthCode(t.Context(), c, ac, "state-2", verifier)
	resp, err = noFollow.Get(g.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ = url.Parse(resp.Header.Get("Location"))
	tok, err := p.ExchangeCode(t.Context(), g, Callback{Code: back.Query().Get("code")}, verifier)
	if err != nil || tok != "code-token-1" {
		t.Errorf("exchange = %q, %v", tok, err)
	}

	for _, bad := range []AuthCode{
		{Scheme: "cc", ClientID: "registry", RedirectURL: redirect},
		{Scheme: "nope", ClientID: "registry", RedirectURL: redirect},
		{Scheme: "code", RedirectURL: redirect},
	} {
		if _, err := p.StartAuthCode(t.Context(), c, bad, "s", verifier); !errors.Is(err, ErrCredentials) {
			t.Errorf("StartAuthCode(%+v) = %v, want ErrCredentials", bad, err)
		}
	}
}

// TestAuthCodeTokenURLSameServer: a card whose token URL is on another
// origin than its authorization URL gets no sign-in: the code would go to
// a server that did not issue it.
func TestAuthCodeTokenURLSameServer(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	for _, tt := range []struct {
		auth, token string
		ok          bool
	}{
		{"https://id.example.com/authorize", "https://id.example.com/token", true},
		{"https://ID.example.com/authorize", "https://id.example.com:443/token", false},
		{"https://id.example.com/authorize", "https://collector.example/token", false},
		{"https://id.example.com/authorize", "http://id.example.com/token", false},
	} {
		c := &card.Card{SecuritySchemes: []card.SecurityScheme{{Name: "code", Type: card.SchemeOAuth2,
			Flows: []card.OAuthFlow{{Name: "authorizationCode", AuthorizationURL: tt.auth, TokenURL: tt.token}}}}}
		_, err := p.StartAuthCode(t.Context(), c, AuthCode{Scheme: "code", ClientID: "registry", RedirectURL: "https://registry.example/cb"}, "s", "verifier-0123456789-0123456789-0123456789-01")
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrCredentials)) {
			t.Errorf("%s → %s: %v, want ok %v", tt.auth, tt.token, err, tt.ok)
		}
	}
}

// metadataServer serves RFC 8414 metadata that doc builds from the
// server's own origin, at path.
func metadataServer(t *testing.T, path string, doc func(origin string) map[string]any) (origin string) {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc(srv.URL))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestAuthCodeBinding holds the rule that decides where a code may go:
// the issuer's RFC 8414 metadata when the scheme names it (nothing else
// overrules it), else the authorization URL's origin, else a host the
// operator listed.
func TestAuthCodeBinding(t *testing.T) {
	const wk = "/.well-known/oauth-authorization-server"
	honest := func(o string) map[string]any {
		return map[string]any{"issuer": o, "authorization_endpoint": o + "/authorize", "token_endpoint": "https://tokens.example/token"}
	}
	good := metadataServer(t, wk, honest)
	// An issuer whose sign-in page is elsewhere, which sends iss.
	withIss := metadataServer(t, wk, func(o string) map[string]any {
		return map[string]any{"issuer": o, "authorization_endpoint": "https://login.example/authorize",
			"token_endpoint": o + "/token", "authorization_response_iss_parameter_supported": true}
	})
	withoutIss := metadataServer(t, wk, func(o string) map[string]any {
		return map[string]any{"issuer": o, "authorization_endpoint": "https://login.example/authorize", "token_endpoint": o + "/token"}
	})
	// A document claiming to be another issuer's.
	impostor := metadataServer(t, wk, func(string) map[string]any {
		return map[string]any{"issuer": "https://id.example.com", "authorization_endpoint": "https://id.example.com/authorize",
			"token_endpoint": "https://id.example.com/token"}
	})
	// OpenID Connect Discovery's form, for an issuer with a path.
	oidc := metadataServer(t, "/realms/r1/.well-known/openid-configuration", func(o string) map[string]any {
		return map[string]any{"issuer": o + "/realms/r1", "authorization_endpoint": o + "/realms/r1/auth", "token_endpoint": o + "/realms/r1/token"}
	})
	huge := metadataServer(t, wk, func(o string) map[string]any {
		m := honest(o)
		m["padding"] = strings.Repeat("x", maxMetadataBytes)
		return m
	})
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(broken.Close)

	p := New(Options{Client: proxytest.Loopback(), TokenHosts: []string{"Tokens.example", "127.0.0.1:9"}})
	for _, tt := range []struct {
		name                  string
		metadata, auth, token string
		basis                 string // "" when refused
		issuer                string
		issRequired           bool
	}{
		{"same origin", "", "https://id.example.com/authorize", "https://id.example.com/token", BasisSameOrigin, "", false},
		{"another origin, listed", "", "https://id.example.com/authorize", "https://tokens.example/token", BasisAllowList, "", false},
		{"another origin, not listed", "", "https://id.example.com/authorize", "https://collector.example/token", "", "", false},
		{"a listed host on another port", "", "https://id.example.com/authorize", "https://tokens.example:8443/token", "", "", false},
		{"metadata names both URLs", good + wk, good + "/authorize", "https://tokens.example/token", BasisMetadata, good, false},
		{"metadata names another token URL", good + wk, good + "/authorize", "https://collector.example/token", "", "", false},
		{"metadata overrules the same origin", good + wk, good + "/authorize", good + "/token", "", "", false},
		{"metadata overrules the list", good + wk, good + "/authorize", "https://127.0.0.1:9/token", "", "", false},
		{"metadata names another authorization URL", good + wk, "https://id.example.com/authorize", "https://tokens.example/token", "", "", false},
		{"sign-in elsewhere, iss promised", withIss + wk, "https://login.example/authorize", withIss + "/token", BasisMetadata, withIss, true},
		{"sign-in elsewhere, no iss", withoutIss + wk, "https://login.example/authorize", withoutIss + "/token", "", "", false},
		{"metadata of another issuer", impostor + wk, "https://id.example.com/authorize", "https://id.example.com/token", "", "", false},
		{"OpenID Connect discovery", oidc + "/realms/r1/.well-known/openid-configuration", oidc + "/realms/r1/auth", oidc + "/realms/r1/token", BasisMetadata, oidc + "/realms/r1", false},
		{"metadata too large", huge + wk, huge + "/authorize", "https://tokens.example/token", "", "", false},
		{"metadata unavailable", broken.URL + wk, broken.URL + "/authorize", broken.URL + "/token", "", "", false},
		{"not http", "", "ftp://id.example.com/authorize", "ftp://id.example.com/token", "", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &card.Card{SecuritySchemes: []card.SecurityScheme{{Name: "code", Type: card.SchemeOAuth2, OAuth2MetadataURL: tt.metadata,
				Flows: []card.OAuthFlow{{Name: "authorizationCode", AuthorizationURL: tt.auth, TokenURL: tt.token}}}}}
			g, err := p.StartAuthCode(t.Context(), c, AuthCode{Scheme: "code", ClientID: "registry", RedirectURL: "https://registry.example/cb"},
				"s", "verifier-0123456789-0123456789-0123456789-01")
			if tt.basis == "" {
				if !errors.Is(err, ErrCredentials) {
					t.Errorf("got %+v, %v; want ErrCredentials", g, err)
				}
				return
			}
			if err != nil || g.Basis != tt.basis || g.Issuer != tt.issuer || g.IssRequired != tt.issRequired || !strings.HasPrefix(g.URL, tt.auth+"?") {
				t.Errorf("got %+v, %v; want basis %s, issuer %q, iss required %v", g, err, tt.basis, tt.issuer, tt.issRequired)
			}
		})
	}
}

// TestCheckIssuer holds callbacks to RFC 9207 §2.4.
func TestCheckIssuer(t *testing.T) {
	withMD := Grant{Issuer: "https://id.example.com/t1", authOrigin: "https://id.example.com"}
	promised := Grant{Issuer: "https://id.example.com", IssRequired: true, authOrigin: "https://login.example"}
	noMD := Grant{authOrigin: "https://id.example.com"}
	for _, tt := range []struct {
		g  Grant
		cb Callback
		ok bool
	}{
		{withMD, Callback{}, true},
		{withMD, Callback{Iss: "https://id.example.com/t1", HasIss: true}, true},
		{withMD, Callback{Iss: "https://id.example.com/t2", HasIss: true}, false},
		{withMD, Callback{Iss: "https://id.example.com/t1/", HasIss: true}, false},
		{withMD, Callback{HasIss: true}, false},
		{promised, Callback{}, false},
		{promised, Callback{Iss: "https://id.example.com", HasIss: true}, true},
		{promised, Callback{Iss: "https://login.example", HasIss: true}, false},
		{noMD, Callback{}, true},
		{noMD, Callback{Iss: "https://ID.example.com/realm", HasIss: true}, true},
		{noMD, Callback{Iss: "https://other.example", HasIss: true}, false},
		{noMD, Callback{Iss: "not a url", HasIss: true}, false},
	} {
		if err := tt.g.CheckIssuer(tt.cb); (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrIssuer)) {
			t.Errorf("%+v with %+v: %v, want ok %v", tt.g, tt.cb, err, tt.ok)
		}
	}
}

// TestAuthCodeIssuer runs the grant against a server whose metadata
// promises iss: its own iss is accepted, and a response claiming another
// issuer, or none, never reaches the token endpoint.
func TestAuthCodeIssuer(t *testing.T) {
	as := proxytest.StartAuthServer(t, "registry", "s3cret", "code-token-1")
	as.SendIss(true)
	c := &card.Card{SecuritySchemes: []card.SecurityScheme{{Name: "code", Type: card.SchemeOAuth2, OAuth2MetadataURL: as.MetadataURL,
		Flows: []card.OAuthFlow{{Name: "authorizationCode", AuthorizationURL: as.AuthorizeURL, TokenURL: as.TokenURL}}}}}
	p := New(Options{Client: proxytest.Loopback()})
	ac := AuthCode{Scheme: "code", ClientID: "registry", ClientSecret: "s3cret", RedirectURL: "http://registry.test/cb"}
	const verifier = "verifier-0123456789-0123456789-0123456789-0123456789"
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	signIn := func() (Grant, url.Values) {
		t.Helper()
		g, err := p.StartAuthCode(t.Context(), c, ac, "st", verifier)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := noFollow.Get(g.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		back, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		return g, back.Query()
	}
	for _, cb := range []func(q url.Values) Callback{
		func(q url.Values) Callback {
			return Callback{Code: q.Get("code"), Iss: "https://attacker.example", HasIss: true}
		},
		func(q url.Values) Callback { return Callback{Code: q.Get("code")} },
	} {
		g, q := signIn()
		if _, err := p.ExchangeCode(t.Context(), g, cb(q), verifier); !errors.Is(err, ErrIssuer) {
			t.Errorf("exchange = %v, want ErrIssuer", err)
		}
	}
	if as.Exchanged() != 0 {
		t.Fatalf("%d codes reached the token endpoint after a refused iss", as.Exchanged())
	}
	g, q := signIn()
	if q.Get("iss") != as.Issuer {
		t.Fatalf("the server sent iss %q", q.Get("iss"))
	}
	tok, err := p.ExchangeCode(t.Context(), g, Callback{Code: q.Get("code"), Iss: q.Get("iss"), HasIss: true}, verifier)
	if err != nil || tok != "code-token-1" {
		t.Errorf("exchange = %q, %v", tok, err)
	}
}
