package auth

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/oauth2-proxy/mockoidc"
)

// TestProviderOutage: while the provider cannot be discovered, sign-in
// and bearer tokens answer 503 (not 401: the caller did nothing wrong),
// a failed discovery is not retried on every request, and the registry
// recovers when the provider is back.
func TestProviderOutage(t *testing.T) {
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	var discoveries atomic.Int32
	down.Store(true)
	if err := m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/openid-configuration") {
				discoveries.Add(1)
				if down.Load() {
					http.Error(w, "down", http.StatusServiceUnavailable)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })

	clk := &clock{t: time.Now()}
	e := echo.New()
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	a, err := New(Config{Issuer: m.Issuer(), ClientID: m.ClientID, ClientSecret: m.ClientSecret, PublicURL: srv.URL,
		DefaultRole: Viewer, SessionIdle: testIdle, SessionMax: testMax, Sessions: newStore(t), Now: clk.Now,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	a.Mount(e)
	e.GET("/api/v1/things", func(c echo.Context) error { return c.NoContent(http.StatusOK) }, a.RequireRole(Viewer))
	h := &harness{oidc: m, srv: srv}
	b := h.browser(t)
	bearer := func() int {
		return apiRequest(t, h, http.MethodGet, "Bearer "+h.token(t, nil, nil)).StatusCode
	}

	if code := get(t, b, srv.URL+LoginPath).StatusCode; code != http.StatusServiceUnavailable {
		t.Errorf("login while the provider is down: %d, want 503", code)
	}
	if code := bearer(); code != http.StatusServiceUnavailable {
		t.Errorf("bearer token while the provider is down: %d, want 503", code)
	}
	if n := discoveries.Load(); n != 1 {
		t.Errorf("%d discovery attempts within the retry interval, want 1", n)
	}
	down.Store(false)
	clk.Add(discoveryRetry)
	if code := bearer(); code != http.StatusOK {
		t.Errorf("bearer token after the provider came back: %d, want 200", code)
	}
	if code := get(t, b, srv.URL+LoginPath).StatusCode; code != http.StatusFound {
		t.Errorf("login after the provider came back: %d, want 302", code)
	}
}

func TestClaimValues(t *testing.T) {
	claims := map[string]any{
		"groups":                      []any{"eng", 7, "ops"},
		"role":                        "admin",
		"realm_access":                map[string]any{"roles": []any{"editor"}},
		"https://example.com/roles":   []any{"qa"},
		"https://example.com/nothing": map[string]any{},
	}
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"groups", []string{"eng", "ops"}},
		{"role", []string{"admin"}},
		{"realm_access.roles", []string{"editor"}},
		{"https://example.com/roles", []string{"qa"}},
		{"https://example.com/nothing", nil},
		{"realm_access.missing", nil},
		{"role.sub", nil},
		{"absent", nil},
	} {
		if got := claimValues(claims, tt.name); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("claimValues(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
