package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
)

// TestHostGuard: a page that rebinds its own name to the registry's
// loopback address reaches it with that name as Host; only the names the
// registry is known by (and IP literals) pass.
func TestHostGuard(t *testing.T) {
	e := echo.New()
	New(Options{Catalog: newFakeCatalog()}).Mount(e)
	e.Pre(HostGuard([]string{"localhost", "127.0.0.1", "::1", "registry.example.com"}))
	tests := []struct {
		host string
		want int
	}{
		{"127.0.0.1:8080", http.StatusOK},
		{"localhost:8080", http.StatusOK},
		{"LOCALHOST", http.StatusOK},
		{"[::1]:8080", http.StatusOK},
		{"registry.example.com", http.StatusOK},
		{"registry.example.com.", http.StatusOK},
		{"10.1.2.3:8080", http.StatusOK},
		{"attacker.example:8080", http.StatusMisdirectedRequest},
		{"registry.example.com.attacker.example", http.StatusMisdirectedRequest},
		{"", http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/agents", nil)
			req.Host = tt.host
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("Host %q: status %d, want %d", tt.host, rec.Code, tt.want)
			}
			if tt.want != http.StatusOK {
				if e := decodeError(t, rec); e.Code != CodeMisdirectedRequest {
					t.Errorf("code %q, want %q", e.Code, CodeMisdirectedRequest)
				}
			}
		})
	}
}

// TestCrossSiteWritesRefused: a page on another site must not register or
// refresh agents through the operator's browser; non-browser clients
// (no Sec-Fetch-Site, no Origin) and same-origin pages may.
func TestCrossSiteWritesRefused(t *testing.T) {
	tests := []struct {
		name     string
		method   string
		target   string
		header   map[string]string
		wantCode string // "" when the request passes the guard
	}{
		{"register, cross-site fetch", http.MethodPost, "/api/v1/agents",
			map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}, CodeCrossSite},
		{"register, foreign Origin without Sec-Fetch-Site", http.MethodPost, "/api/v1/agents",
			map[string]string{"Origin": "https://attacker.example", "Content-Type": "application/json"}, CodeCrossSite},
		{"refresh, form post from another site", http.MethodPost, "/api/v1/agents/a1/refresh",
			map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/x-www-form-urlencoded"}, CodeCrossSite},
		{"register, same origin", http.MethodPost, "/api/v1/agents",
			map[string]string{"Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}, ""},
		{"register, trusted public origin", http.MethodPost, "/api/v1/agents",
			map[string]string{"Origin": "https://registry.example.com", "Content-Type": "application/json"}, ""},
		{"register, curl", http.MethodPost, "/api/v1/agents",
			map[string]string{"Content-Type": "application/json"}, ""},
		{"read, cross-site", http.MethodGet, "/api/v1/agents",
			map[string]string{"Sec-Fetch-Site": "cross-site"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t, func(o *Options) { o.TrustedOrigins = []string{"https://registry.example.com"} })
			// A registration that gets through answers with the agent
			// as stored.
			env.reg.res = catalog.UpsertResult{Agent: env.cat.agents["a1"]}
			rec := env.do(t, tt.method, tt.target, `{"url":"https://agent.example"}`, tt.header)
			refused := rec.Code == http.StatusForbidden && strings.Contains(rec.Body.String(), CodeCrossSite)
			if refused != (tt.wantCode != "") {
				t.Errorf("status %d body %s; want refused=%v", rec.Code, rec.Body, tt.wantCode != "")
			}
		})
	}
}
