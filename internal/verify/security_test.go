package verify

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

func auditCodes(t *testing.T, v *Verifier, raw string) []string {
	t.Helper()
	c, err := card.Parse([]byte(raw), card.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, f := range v.AuditSecurity(t.Context(), c) {
		codes = append(codes, f.Code)
	}
	return codes
}

func TestAuditSecurity(t *testing.T) {
	var oidcURL string
	oidc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iss := oidcURL
		if r.URL.Path == "/liar/.well-known/openid-configuration" {
			iss = "https://accounts.example.com"
		} else if r.URL.Path != "/.well-known/openid-configuration" {
			w.Write([]byte(`<html>`))
			return
		}
		w.Write([]byte(`{"issuer":"` + iss + `","authorization_endpoint":"x","jwks_uri":"y","response_types_supported":["code"]}`))
	}))
	defer oidc.Close()
	oidcURL = oidc.URL
	v := New(Options{Client: safehttp.New(safehttp.Config{AllowNetworks: loopback}), FetchOIDC: true})

	iface := func(u string) string {
		return `"supportedInterfaces":[{"url":"` + u + `","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]`
	}
	scheme := func(name, body string) string { return `"securitySchemes":{"` + name + `":` + body + `}` }
	card := func(parts ...string) string {
		return `{"name":"n","description":"d","version":"1",` + strings.Join(parts, ",") + `,"skills":[]}`
	}
	tests := []struct {
		name string
		raw  string
		want []string
	}{
		{"no security", card(iface("https://a.example.com")), []string{FindingNoSecurity}},
		{"api key in query", card(iface("https://a.example.com"), scheme("k", `{"apiKeySecurityScheme":{"name":"key","location":"query"}}`)), []string{FindingAPIKeyInQuery}},
		{"basic over http", card(iface("http://a.example.com"), scheme("b", `{"httpAuthSecurityScheme":{"scheme":"Basic"}}`)), []string{FindingPlainHTTPInterface, FindingBasicOverHTTP}},
		{"bearer over http", card(iface("http://a.example.com"), scheme("b", `{"httpAuthSecurityScheme":{"scheme":"Bearer"}}`)), []string{FindingPlainHTTPInterface, FindingCredentialsOverHTTP}},
		{"anonymous over http", card(iface("http://a.example.com")), []string{FindingNoSecurity, FindingPlainHTTPInterface}},
		{"mtls over http", card(iface("http://a.example.com"), scheme("m", `{"mtlsSecurityScheme":{}}`)), []string{FindingPlainHTTPInterface}},
		{"oauth http token url and implicit", card(iface("https://a.example.com"), scheme("o", `{"oauth2SecurityScheme":{"flows":{"implicit":{"authorizationUrl":"http://id.example.com/auth","scopes":{}}}}}`)),
			[]string{FindingInsecureOAuthURL, FindingDeprecatedFlow}},
		{"undeclared in skill", `{"name":"n","description":"d","version":"1",` + iface("https://a.example.com") + `,` + scheme("b", `{"httpAuthSecurityScheme":{"scheme":"Bearer"}}`) +
			`,"skills":[{"id":"s","name":"s","description":"d","tags":[],"securityRequirements":[{"schemes":{"ghost":{"list":[]}}}]}]}`, []string{FindingUndeclaredScheme}},
		{"oidc ok", card(iface("https://a.example.com"), scheme("o", `{"openIdConnectSecurityScheme":{"openIdConnectUrl":"`+oidc.URL+`/.well-known/openid-configuration"}}`)),
			[]string{FindingInsecureOIDCURL}}, // loopback test server is http
		{"oidc issuer mismatch", card(iface("https://a.example.com"), scheme("o", `{"openIdConnectSecurityScheme":{"openIdConnectUrl":"`+oidc.URL+`/liar/.well-known/openid-configuration"}}`)),
			[]string{FindingInsecureOIDCURL, FindingOIDCIssuerMismatch}},
		{"oidc not a discovery document", card(iface("https://a.example.com"), scheme("o", `{"openIdConnectSecurityScheme":{"openIdConnectUrl":"`+oidc.URL+`/html"}}`)),
			[]string{FindingInsecureOIDCURL, FindingOIDCNotDiscovery}},
		{"invalid scheme", card(iface("https://a.example.com"), scheme("k", `{"apiKeySecurityScheme":{"location":"header"}}`)), []string{FindingInvalidScheme}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := auditCodes(t, v, tt.raw)
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("codes = %v, want %v", got, want)
			}
		})
	}
}

// TestOIDCFindingHidesAddresses: the finding is shown to anyone reading the
// agent, so a refused discovery URL is named by its host, never by the
// address that host resolved to.
func TestOIDCFindingHidesAddresses(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	v := New(Options{Client: safehttp.New(safehttp.Config{}), FetchOIDC: true})
	raw := `{"name":"n","description":"d","version":"1",` +
		`"supportedInterfaces":[{"url":"https://a.example.com","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
		`"securitySchemes":{"o":{"openIdConnectSecurityScheme":{"openIdConnectUrl":"http://localhost:` + port + `/.well-known/openid-configuration"}}},"skills":[]}`
	c, err := card.Parse([]byte(raw), card.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range v.AuditSecurity(t.Context(), c) {
		if f.Code != FindingOIDCUnreachable {
			continue
		}
		found = true
		if strings.Contains(f.Message, "127.0.0.1") || strings.Contains(f.Message, "::1") || !strings.Contains(f.Message, "loopback") {
			t.Errorf("finding message %q: want the address class, not the address", f.Message)
		}
	}
	if !found {
		t.Fatalf("no %s finding", FindingOIDCUnreachable)
	}
}
