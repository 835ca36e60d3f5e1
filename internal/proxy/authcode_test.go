package proxy

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
	authURL, err := p.AuthCodeURL(c, ac, "state-1", verifier)
	if err != nil {
		t.Fatal(err)
	}
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

	if _, err := p.ExchangeCode(t.Context(), c, ac, code, "another-verifier-0123456789-0123456789-01234"); !errors.Is(err, ErrTokenRequest) {
		t.Errorf("exchange with the wrong verifier = %v, want ErrTokenRequest", err)
	}
	// The failed attempt used the code up; a fresh one with the right
	// verifier succeeds.
	authURL, _ = p.AuthCodeURL(c, ac, "state-2", verifier)
	resp, err = noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ = url.Parse(resp.Header.Get("Location"))
	tok, err := p.ExchangeCode(t.Context(), c, ac, back.Query().Get("code"), verifier)
	if err != nil || tok != "code-token-1" {
		t.Errorf("exchange = %q, %v", tok, err)
	}

	for _, bad := range []AuthCode{
		{Scheme: "cc", ClientID: "registry", RedirectURL: redirect},
		{Scheme: "nope", ClientID: "registry", RedirectURL: redirect},
		{Scheme: "code", RedirectURL: redirect},
	} {
		if _, err := p.AuthCodeURL(c, bad, "s", verifier); !errors.Is(err, ErrCredentials) {
			t.Errorf("AuthCodeURL(%+v) = %v, want ErrCredentials", bad, err)
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
		_, err := p.AuthCodeURL(c, AuthCode{Scheme: "code", ClientID: "registry", RedirectURL: "https://registry.example/cb"}, "s", "verifier-0123456789-0123456789-0123456789-01")
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrCredentials)) {
			t.Errorf("%s → %s: %v, want ok %v", tt.auth, tt.token, err, tt.ok)
		}
	}
}
