package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
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

// TestCrossSiteRefusalCode: the wiring's CSRF check refuses a write
// from another site with the error Options.CrossSite names; the API
// answers it 403 cross_site, and other refusals as they are.
func TestCrossSiteRefusalCode(t *testing.T) {
	errCrossSite := errors.New("cross-site")
	for _, tc := range []struct {
		name     string
		refusal  error
		wantCode string
	}{
		{"cross-site", echo.NewHTTPError(http.StatusForbidden, "no").SetInternal(errCrossSite), CodeCrossSite},
		{"another refusal", echo.NewHTTPError(http.StatusForbidden, "no token").SetInternal(errors.New("token")), CodeForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := echo.New()
			guard := func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c echo.Context) error {
					if c.Request().Method == http.MethodPost {
						return tc.refusal
					}
					return next(c)
				}
			}
			New(Options{Catalog: newFakeCatalog(), Registrar: &fakeRegistrar{}, CrossSite: errCrossSite}).Mount(e, guard)
			req := httptest.NewRequest(http.MethodPost, "/api/v1/agents", strings.NewReader(`{"url":"https://agent.example"}`))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if e := decodeError(t, rec); rec.Code != http.StatusForbidden || e.Code != tc.wantCode {
				t.Errorf("status %d code %q, want 403 %q", rec.Code, e.Code, tc.wantCode)
			}
		})
	}
}
