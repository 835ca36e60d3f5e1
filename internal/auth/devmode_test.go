package auth

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/labstack/echo/v4"
)

// devServer is a development-mode server with a console write and an
// API write, both needing admin.
func devServer(t *testing.T) (*Authenticator, *httptest.Server) {
	t.Helper()
	a, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	a.Mount(e)
	ok := func(c echo.Context) error { return c.String(http.StatusOK, "ok") }
	e.GET("/page", func(c echo.Context) error {
		ctx := c.Request().Context()
		if !DevMode(ctx) || FromContext(ctx).Role != Admin {
			return c.String(http.StatusTeapot, "not the local admin")
		}
		return c.String(http.StatusOK, CSRFToken(ctx))
	}, a.RequireRole(Admin))
	e.POST("/page", ok, a.RequireRole(Admin))
	e.POST("/api/v1/things", ok, a.RequireRole(Admin))
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return a, srv
}

// TestDevMode: the local user is admin without signing in, and still
// cannot be made to write by another site (a page the operator visits
// could post to http://127.0.0.1:8080 otherwise).
func TestDevMode(t *testing.T) {
	a, srv := devServer(t)
	if !a.DevMode() {
		t.Fatal("no issuer, yet not development mode")
	}
	b := (&harness{srv: srv}).browser(t)
	resp := get(t, b, srv.URL+"/page", "Accept", "text/html")
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusOK || len(body) < 32 {
		t.Fatalf("GET /page: %d %q, want 200 and a CSRF token", resp.StatusCode, body)
	}
	csrf := body
	for _, tt := range []struct {
		name   string
		path   string
		form   url.Values
		header []string
		want   int
	}{
		{"page", "/page", url.Values{"csrf_token": {csrf}}, []string{"Sec-Fetch-Site", "same-origin"}, 200},
		{"API from a program", "/api/v1/things", nil, nil, 200},
		{"logout is harmless", LogoutPath, url.Values{"csrf_token": {csrf}}, nil, 303},
	} {
		if resp := post(t, b, srv.URL+tt.path, tt.form, tt.header...); resp.StatusCode != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.want)
		}
	}
	if loc := location(t, get(t, b, srv.URL+LoginPath+"?next=/agents")); loc != "/agents" {
		t.Errorf("login in development mode redirects to %q, want next", loc)
	}
}

// TestCSRFCookieOnlyForPages: API callers and health checks collect no
// cookie.
func TestCSRFCookieOnlyForPages(t *testing.T) {
	_, srv := devServer(t)
	for _, tt := range []struct {
		path, accept string
		want         bool
	}{
		{"/page", "text/html,application/xhtml+xml", true},
		{"/page", "*/*", false},
		{"/api/v1/things", "text/html", false},
	} {
		resp := get(t, http.DefaultClient, srv.URL+tt.path, "Accept", tt.accept)
		if got := resp.Header.Get("Set-Cookie") != ""; got != tt.want {
			t.Errorf("%s Accept %q: cookie set %v, want %v", tt.path, tt.accept, got, tt.want)
		}
	}
}

func TestSafeNext(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/", "/"},
		{"/agents/a1?tab=diff#v2", "/agents/a1?tab=diff#v2"},
		{"", "/"},
		{"agents", "/"},
		{"//evil.example", "/"},
		{"/\\evil.example", "/"},
		{"/\t/evil.example", "/"},
		{"/%0a/x", "/%0a/x"},
		{"https://evil.example/", "/"},
		{"javascript:alert(1)", "/"},
		{"/auth/callback?code=x", "/"},
	} {
		if got := safeNext(tt.in); got != tt.want {
			t.Errorf("safeNext(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// DevMode reports whether the request was served in development mode (no
// OIDC provider, the local user is admin), for the console's banner.
func DevMode(ctx context.Context) bool {
	return FromContext(ctx).Source == SourceDev
}
