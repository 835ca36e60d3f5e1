package web

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestErrorPages: a page request refused on its way (a role it lacks, a
// failure of ours) reads the console's error page with its security
// headers, and a failure of ours never shows its cause; the API's
// requests and clients that do not ask for HTML keep echo's JSON.
func TestErrorPages(t *testing.T) {
	const html = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"
	tests := []struct {
		name     string
		target   string
		header   map[string]string
		want     int
		wantType string
		wantBody []string
		notWant  []string
	}{
		{"a role the caller lacks", "/forbidden", map[string]string{"Accept": html}, 403, "text/html",
			[]string{"<h1>Forbidden</h1>", "This needs the editor role.", "Back to search"}, nil},
		{"the same from htmx", "/forbidden", map[string]string{hxRequest: "true"}, 403, "text/html",
			[]string{"This needs the editor role."}, []string{"<html"}},
		{"a failure of ours", "/boom", map[string]string{"Accept": html}, 500, "text/html",
			[]string{"Internal Server Error", "Something went wrong on our side."}, []string{"password"}},
		{"a client without HTML", "/forbidden", map[string]string{"Accept": "*/*"}, 403, "application/json",
			[]string{`"message":"this needs the editor role"`}, nil},
		{"the API", "/api/v1/forbidden", map[string]string{"Accept": html}, 403, "application/json", nil, []string{"<h1>"}},
	}
	c := New(Options{Logger: quietLog, APIPath: testAPIPath})
	e := echo.New()
	c.Mount(e)
	forbidden := func(echo.Context) error {
		return echo.NewHTTPError(http.StatusForbidden, "this needs the editor role")
	}
	e.GET("/forbidden", forbidden)
	e.GET("/api/v1/forbidden", forbidden)
	e.GET("/boom", func(echo.Context) error { return errors.New("database password=hunter2 refused") })
	f := &fixture{console: c, e: e}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.get(t, tt.target, tt.header)
			if rec.Code != tt.want || !strings.HasPrefix(rec.Header().Get(echo.HeaderContentType), tt.wantType) {
				t.Fatalf("GET %s = %d %q, want %d %s", tt.target, rec.Code, rec.Header().Get(echo.HeaderContentType), tt.want, tt.wantType)
			}
			body := rec.Body.String()
			for _, w := range tt.wantBody {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %q:\n%s", w, body)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(body, w) {
					t.Errorf("body holds %q", w)
				}
			}
			if tt.wantType == "text/html" && rec.Header().Get("Content-Security-Policy") != contentSecurityPolicy {
				t.Errorf("error page without the CSP: %v", rec.Header())
			}
		})
	}
}
