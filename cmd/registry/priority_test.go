package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/a2aagent"
	"github.com/a2aregistry/registry/internal/ard"
	"github.com/a2aregistry/registry/internal/background"
	"github.com/a2aregistry/registry/internal/mcpserver"
)

// The reads people wait for, and the machine doors' questions, count as in
// flight while served; probes, metrics, other writes and event streams do
// not, and nothing stays counted
// after a request ends, whatever its handler returned.
func TestForegroundMarksReads(t *testing.T) {
	p := background.NewPriority(2)
	e := echo.New()
	e.Use(foreground(p))
	var during int
	h := func(c echo.Context) error {
		during = p.Stats().Foreground
		if c.QueryParam("fail") != "" {
			return echo.NewHTTPError(http.StatusTeapot)
		}
		return c.NoContent(http.StatusOK)
	}
	for _, path := range []string{"/api/v1/agents", "/agents/x", "/healthz", "/readyz", "/metrics"} {
		e.GET(path, h)
		e.HEAD(path, h)
	}
	e.POST("/api/v1/agents", h)
	for _, path := range []string{mcpserver.Path, a2aagent.JSONRPCPath, a2aagent.RESTPath + "/message:send",
		a2aagent.RESTPath + "/acme/message:send", a2aagent.RESTPath + "/message:stream", ard.BasePath + "/search",
		ard.BasePath + "/explore", "/api/v1/sources"} {
		e.POST(path, h)
	}

	for _, tc := range []struct {
		method, path, accept string
		want                 int
	}{
		{http.MethodGet, "/api/v1/agents?q=x", "", 1},
		{http.MethodHead, "/api/v1/agents", "", 1},
		{http.MethodGet, "/agents/x", "text/html", 1},
		{http.MethodGet, "/api/v1/agents?fail=1", "", 1},
		{http.MethodGet, "/healthz", "", 0},
		{http.MethodGet, "/readyz", "", 0},
		{http.MethodGet, "/metrics", "", 0},
		{http.MethodPost, "/api/v1/agents", "", 0},
		{http.MethodGet, "/agents/x", "text/event-stream", 0},
		// The machine doors' questions are POSTs.
		{http.MethodPost, mcpserver.Path, "application/json, text/event-stream", 1},
		{http.MethodPost, a2aagent.JSONRPCPath, "application/json", 1},
		{http.MethodPost, a2aagent.JSONRPCPath, "text/event-stream", 0},
		{http.MethodPost, a2aagent.RESTPath + "/message:send", "", 1},
		{http.MethodPost, a2aagent.RESTPath + "/acme/message:send", "", 1},
		{http.MethodPost, a2aagent.RESTPath + "/message:stream", "", 0},
		{http.MethodPost, ard.BasePath + "/search", "application/json", 1},
		{http.MethodPost, ard.BasePath + "/explore", "", 1},
		{http.MethodPost, "/api/v1/sources", "", 0},
	} {
		during = -1
		req := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.accept != "" {
			req.Header.Set(echo.HeaderAccept, tc.accept)
		}
		e.ServeHTTP(httptest.NewRecorder(), req)
		if during != tc.want {
			t.Errorf("%s %s (Accept %q): %d requests in flight during the handler, want %d", tc.method, tc.path, tc.accept, during, tc.want)
		}
		if fg := p.Stats().Foreground; fg != 0 {
			t.Fatalf("%s %s: %d requests still counted after it ended", tc.method, tc.path, fg)
		}
	}
}
