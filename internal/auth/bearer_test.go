package auth

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

func apiRequest(t *testing.T, h *harness, method, authz string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+"/api/v1/things", nil)
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// tamper replaces the payload of a signed token with one claiming admin,
// keeping the signature.
func tamper(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	claims["groups"] = []string{"admins"}
	b, _ := json.Marshal(claims)
	parts[1] = base64.RawURLEncoding.EncodeToString(b)
	return strings.Join(parts, ".")
}

// TestBearerTokens: the API accepts the provider's tokens with their
// role, and refuses every token that does not verify with 401 and an
// RFC 6750 challenge.
func TestBearerTokens(t *testing.T) {
	h := newHarness(t, newStore(t), nil)
	other, err := mockoidc.RandomKeypair(2048)
	if err != nil {
		t.Fatal(err)
	}
	valid := func(t *testing.T) string { return h.token(t, nil, nil) }
	tests := []struct {
		name   string
		authz  func(t *testing.T) string
		method string
		want   int
		// challenge is the WWW-Authenticate a 401 must carry.
		challenge string
	}{
		{"valid editor reads", func(t *testing.T) string { return "Bearer " + valid(t) }, http.MethodGet, 200, ""},
		{"valid editor writes", func(t *testing.T) string { return "Bearer " + valid(t) }, http.MethodPost, 200, ""},
		{"scheme is case-insensitive", func(t *testing.T) string { return "bearer " + valid(t) }, http.MethodGet, 200, ""},
		{"viewer cannot write", func(t *testing.T) string {
			return "Bearer " + h.token(t, nil, func(c jwt.MapClaims) { c["groups"] = []string{"design"} })
		}, http.MethodPost, 403, ""},
		{"single group as a string", func(t *testing.T) string {
			return "Bearer " + h.token(t, nil, func(c jwt.MapClaims) { c["groups"] = "admins" })
		}, http.MethodPost, 200, ""},
		{"no token", func(*testing.T) string { return "" }, http.MethodGet, 401, `Bearer realm="registry"`},
		{"expired", func(t *testing.T) string {
			return "Bearer " + h.token(t, nil, func(c jwt.MapClaims) {
				c["iat"], c["nbf"], c["exp"] = time.Now().Add(-time.Hour).Unix(), time.Now().Add(-time.Hour).Unix(), time.Now().Add(-time.Minute).Unix()
			})
		}, http.MethodGet, 401, `Bearer realm="registry", error="invalid_token"`},
		{"wrong audience", func(t *testing.T) string {
			return "Bearer " + h.token(t, nil, func(c jwt.MapClaims) { c["aud"] = "another-client" })
		}, http.MethodGet, 401, `Bearer realm="registry", error="invalid_token"`},
		{"wrong issuer", func(t *testing.T) string {
			return "Bearer " + h.token(t, nil, func(c jwt.MapClaims) { c["iss"] = "https://evil.example/oidc" })
		}, http.MethodGet, 401, `Bearer realm="registry", error="invalid_token"`},
		{"tampered payload", func(t *testing.T) string { return "Bearer " + tamper(t, valid(t)) }, http.MethodGet, 401,
			`Bearer realm="registry", error="invalid_token"`},
		{"signed by another key", func(t *testing.T) string { return "Bearer " + h.token(t, other, nil) }, http.MethodGet, 401,
			`Bearer realm="registry", error="invalid_token"`},
		{"no subject", func(t *testing.T) string {
			return "Bearer " + h.token(t, nil, func(c jwt.MapClaims) { delete(c, "sub") })
		}, http.MethodGet, 401, `Bearer realm="registry", error="invalid_token"`},
		{"not a bearer token", func(*testing.T) string { return "Basic dXNlcjpwYXNz" }, http.MethodGet, 401,
			`Bearer realm="registry", error="invalid_token"`},
		{"garbage", func(*testing.T) string { return "Bearer not.a.jwt" }, http.MethodGet, 401,
			`Bearer realm="registry", error="invalid_token"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := apiRequest(t, h, tt.method, tt.authz(t))
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, tt.challenge)
			}
		})
	}
}

// TestAPIAudience: with an API audience configured, API tokens must name
// it, and tokens issued to the console's client id are refused.
func TestAPIAudience(t *testing.T) {
	h := newHarness(t, newStore(t), func(c *Config) { c.APIAudience = "registry-api" })
	for _, tt := range []struct {
		aud  any
		want int
	}{
		{"registry-api", 200},
		{[]string{"something-else", "registry-api"}, 200},
		{h.oidc.ClientID, 401},
	} {
		tok := h.token(t, nil, func(c jwt.MapClaims) { c["aud"] = tt.aud })
		if resp := apiRequest(t, h, http.MethodGet, "Bearer "+tok); resp.StatusCode != tt.want {
			t.Errorf("aud %v: status %d, want %d", tt.aud, resp.StatusCode, tt.want)
		}
	}
}

// TestBearerDefaultNone: a token whose groups map to no role, with the
// default role none, is known but may do nothing: 403, not 401.
func TestBearerDefaultNone(t *testing.T) {
	h := newHarness(t, newStore(t), func(c *Config) { c.DefaultRole = 0 })
	tok := h.token(t, nil, func(c jwt.MapClaims) { c["groups"] = []string{"design"} })
	if resp := apiRequest(t, h, http.MethodGet, "Bearer "+tok); resp.StatusCode != http.StatusForbidden {
		t.Errorf("status %d, want 403", resp.StatusCode)
	}
}

// TestAnonymousRole: without sign-in a caller holds the anonymous role:
// none by default (401 on the API, a redirect to sign-in on pages),
// viewer when configured (reads open, writes still need sign-in).
func TestAnonymousRole(t *testing.T) {
	tests := []struct {
		name     string
		anon     Role
		method   string
		path     string
		want     int
		location string
	}{
		{"none: API read", 0, http.MethodGet, "/api/v1/things", 401, ""},
		{"none: page", 0, http.MethodGet, "/whoami?q=a%20b", 303, "/auth/login?next=" + url.QueryEscape("/whoami?q=a%20b")},
		{"viewer: API read", Viewer, http.MethodGet, "/api/v1/things", 200, ""},
		{"viewer: page", Viewer, http.MethodGet, "/whoami", 200, ""},
		{"viewer: API write", Viewer, http.MethodPost, "/api/v1/things", 401, ""},
		{"viewer: page write", Viewer, http.MethodPost, "/things", 401, ""},
	}
	store := newStore(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, store, func(c *Config) { c.AnonymousRole = tt.anon })
			req, _ := http.NewRequest(tt.method, h.srv.URL+tt.path, nil)
			resp, err := h.browser(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.want || resp.Header.Get("Location") != tt.location {
				t.Errorf("status %d, Location %q; want %d, %q", resp.StatusCode, resp.Header.Get("Location"), tt.want, tt.location)
			}
			if tt.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge")
			}
		})
	}
}

// TestGroupsClaim: the principal's groups (which open restricted
// collections) come from the roles claim, or from --oidc-groups-claim
// when it names another; roles always come from the roles claim.
func TestGroupsClaim(t *testing.T) {
	for _, tc := range []struct {
		name, groupsClaim string
		wantGroups        []string
	}{
		{"roles claim by default", "", []string{"eng"}},
		{"another claim", "teams", []string{"finance", "ops"}},
		{"a nested claim", "org.teams", []string{"treasury"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, newStore(t), func(c *Config) { c.GroupsClaim = tc.groupsClaim })
			tok := h.token(t, nil, func(c jwt.MapClaims) {
				c["teams"] = []string{"finance", "ops"}
				c["org"] = map[string]any{"teams": []string{"treasury"}}
			})
			req, err := http.NewRequest(http.MethodGet, h.srv.URL+"/whoami", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var w whoami
			if err := json.NewDecoder(resp.Body).Decode(&w); err != nil {
				t.Fatalf("status %d: %v", resp.StatusCode, err)
			}
			if w.Role != Editor.String() || !slices.Equal(w.Groups, tc.wantGroups) {
				t.Errorf("role %s groups %v, want editor %v", w.Role, w.Groups, tc.wantGroups)
			}
		})
	}
}
