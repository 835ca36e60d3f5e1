package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
)

// failingReport is what a check answered 503 leaves behind.
func failingReport() catalog.HealthReport {
	checked := testNow.Add(-time.Minute)
	lastOK := t0.Add(3 * time.Hour)
	next := testNow.Add(10 * time.Minute)
	up24, up7 := 0.5, 0.9
	return catalog.HealthReport{
		State: catalog.HealthDown, LastCheckAt: &checked, LastSuccessAt: &lastOK, NextCheckAt: &next,
		ConsecutiveFailures: 3, Uptime24h: &up24, Uptime7d: &up7,
		LastError: &catalog.FetchError{Class: crawler.ClassHTTP5xx, Message: "server answered 503 Service Unavailable",
			Status: http.StatusServiceUnavailable, At: checked},
	}
}

func TestGetAgentHealthReport(t *testing.T) {
	runCases(t, []apiCase{
		{name: "failing agent", target: "/api/v1/agents/a1", wantStatus: http.StatusOK,
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				c.health = map[string]catalog.HealthReport{"a1": failingReport()}
			},
			check: func(t *testing.T, rec *httptest.ResponseRecorder, cat *fakeCatalog, _ *fakeRegistrar) {
				d := decodeJSON[AgentDetail](t, rec)
				r := d.HealthReport
				if r.State != catalog.HealthDown || r.ConsecutiveFailures != 3 || r.LastError == nil ||
					r.LastError.Status != http.StatusServiceUnavailable || r.Uptime24h == nil || *r.Uptime24h != 0.5 {
					t.Errorf("health_report = %+v", r)
				}
				if !cat.healthAt.Equal(testNow) {
					t.Errorf("uptime computed as of %v, want the API clock %v", cat.healthAt, testNow)
				}
			}},
		{name: "never checked, paused, status the server made up", target: "/api/v1/agents/sparse", wantStatus: http.StatusOK,
			setup: func(c *fakeCatalog, _ *fakeRegistrar) {
				// A hostile server may answer any three digits.
				c.health = map[string]catalog.HealthReport{"sparse": {State: catalog.HealthUnknown, Paused: true,
					LastError: &catalog.FetchError{Class: crawler.ClassHTTP5xx, Message: "999", Status: 999, At: t0}}}
			},
			check: func(t *testing.T, rec *httptest.ResponseRecorder, _ *fakeCatalog, _ *fakeRegistrar) {
				for _, want := range []string{`"last_check_at":null`, `"next_check_at":null`, `"uptime_7d":null`, `"paused":true`, `"status":999`} {
					if !strings.Contains(rec.Body.String(), want) {
						t.Errorf("body lacks %s: %s", want, rec.Body)
					}
				}
			}},
		{name: "health failure", target: "/api/v1/agents/a1",
			setup:      func(c *fakeCatalog, _ *fakeRegistrar) { c.healthErr = errors.New("db down") },
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal},
		{name: "deleted before the health read", target: "/api/v1/agents/a1",
			setup:      func(c *fakeCatalog, _ *fakeRegistrar) { c.healthErr = fmt.Errorf("health: %w", catalog.ErrNotFound) },
			wantStatus: http.StatusNotFound, wantCode: CodeNotFound},
	}, nil)
}

func TestRefresh(t *testing.T) {
	const target = "/api/v1/agents/a1/refresh"
	for _, tc := range []struct {
		name       string
		target     string
		check      func(*fakeCatalog)
		err        error
		wantStatus int
		wantCode   string
		// wantBody is a substring of the answer.
		wantBody string
		header   map[string]string
		body     string
		// wantRetryAfter is the Retry-After header of a 429.
		wantRetryAfter string
	}{
		{name: "called again inside the minimum interval", target: target,
			err:        fmt.Errorf("refreshing agent a1: %w", &crawler.ThrottledError{RetryAfter: 4*time.Minute + 500*time.Millisecond}),
			wantStatus: http.StatusTooManyRequests, wantCode: CodeTooManyRequests, wantRetryAfter: "241"},
		{name: "host at the per-host cap", target: target,
			err:        fmt.Errorf("refreshing agent a1: %w", &crawler.ThrottledError{RetryAfter: 5 * time.Second, HostBusy: true}),
			wantStatus: http.StatusTooManyRequests, wantCode: CodeTooManyRequests, wantRetryAfter: "5"},
		{name: "plain form post", target: target, body: "x=1",
			header:     map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			wantStatus: http.StatusUnsupportedMediaType, wantCode: CodeUnsupportedMediaType},
		{name: "text/plain form post", target: target, body: "x",
			header:     map[string]string{"Content-Type": "text/plain"},
			wantStatus: http.StatusUnsupportedMediaType, wantCode: CodeUnsupportedMediaType},
		{name: "JSON body", target: target, body: "{}",
			header:     map[string]string{"Content-Type": "application/json"},
			wantStatus: http.StatusOK, wantBody: `"health_report":{"state":"up"`},
		{name: "JSON body with a field: refresh takes no parameters", target: target, body: `{"force":true}`,
			header:     map[string]string{"Content-Type": "application/json"},
			wantStatus: http.StatusBadRequest, wantCode: CodeInvalidBody},
		{name: "healthy agent", target: target, wantStatus: http.StatusOK, wantBody: `"health_report":{"state":"up"`},
		{name: "failing agent is not an API error: the detail is read after the check", target: target,
			check: func(c *fakeCatalog) {
				a := c.agents["a1"]
				a.Health = catalog.HealthDown
				c.agents["a1"] = a
				c.health = map[string]catalog.HealthReport{"a1": failingReport()}
			},
			wantStatus: http.StatusOK, wantBody: `"last_error":{"class":"http_5xx","message":"server answered 503 Service Unavailable","status":503`},
		{name: "unknown agent", target: "/api/v1/agents/nope/refresh", wantStatus: http.StatusNotFound, wantCode: CodeNotFound,
			wantBody: "agent nope not found"},
		{name: "overlong id", target: "/api/v1/agents/" + strings.Repeat("x", maxIDLen+1) + "/refresh",
			wantStatus: http.StatusNotFound, wantCode: CodeNotFound},
		{name: "request deadline passed during the check", target: target,
			err:        fmt.Errorf("refreshing agent a1: %w: %w", crawler.ErrRefreshCanceled, context.DeadlineExceeded),
			wantStatus: http.StatusGatewayTimeout, wantCode: CodeTimeout, wantBody: "nothing was recorded"},
		{name: "deadline while recording", target: target,
			err:        fmt.Errorf("refreshing agent a1: recording outcome: %w", context.DeadlineExceeded),
			wantStatus: http.StatusGatewayTimeout, wantCode: CodeTimeout},
		{name: "deadline while reading back", target: target,
			check:      func(c *fakeCatalog) { c.healthErr = fmt.Errorf("uptime: %w", context.DeadlineExceeded) },
			wantStatus: http.StatusGatewayTimeout, wantCode: CodeTimeout, wantBody: "was recorded"},
		{name: "deleted while checking", target: target,
			check:      func(c *fakeCatalog) { delete(c.agents, "a1") },
			wantStatus: http.StatusNotFound, wantCode: CodeNotFound},
		{name: "refresher fault", target: target, err: errors.New("recording outcome: database is locked"),
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal},
		{name: "read-back fault", target: target, check: func(c *fakeCatalog) { c.versionsErr = errors.New("db down") },
			wantStatus: http.StatusInternalServerError, wantCode: CodeInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t, nil)
			env.ref.check, env.ref.err = tc.check, tc.err
			rec := env.do(t, http.MethodPost, tc.target, tc.body, tc.header)
			if rec.Code != tc.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.wantStatus, rec.Body)
			}
			if got := rec.Header().Get("Retry-After"); got != tc.wantRetryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tc.wantRetryAfter)
			}
			if tc.wantCode != "" {
				if e := decodeError(t, rec); e.Code != tc.wantCode {
					t.Errorf("code = %q, want %q", e.Code, tc.wantCode)
				}
			} else if d := decodeJSON[AgentDetail](t, rec); d.ID != "a1" || d.Versions.Count != 2 {
				t.Errorf("detail = %+v", d)
			}
			if !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Errorf("body lacks %q: %s", tc.wantBody, rec.Body)
			}
			if strings.Contains(rec.Body.String(), "database") || strings.Contains(rec.Body.String(), "db down") {
				t.Errorf("internal detail leaked: %s", rec.Body)
			}
		})
	}
}

func TestRefreshRouting(t *testing.T) {
	guarded := newTestEnv(t, func(o *Options) { o.Authorizer = callerWith(auth.Viewer) })
	if rec := guarded.do(t, http.MethodPost, "/api/v1/agents/a1/refresh", "", nil); rec.Code != http.StatusForbidden {
		t.Errorf("guarded refresh = %d, want 403", rec.Code)
	}
	if guarded.ref.id != "" {
		t.Error("refresher ran for a viewer")
	}

	env := newTestEnv(t, nil)
	rec := env.do(t, http.MethodGet, "/api/v1/agents/a1/refresh", "", nil)
	if allow := rec.Header().Get("Allow"); rec.Code != http.StatusMethodNotAllowed || !strings.Contains(allow, http.MethodPost) || strings.Contains(allow, http.MethodGet) {
		t.Errorf("GET refresh = %d, Allow %q; want 405 with Allow: POST", rec.Code, rec.Header().Get("Allow"))
	}
	if rec := env.do(t, http.MethodPost, "/api/v1/agents/%61%31/refresh", "", nil); rec.Code != http.StatusOK || env.ref.id != "a1" {
		t.Errorf("escaped id: status %d, refresher got %q; want 200 for a1", rec.Code, env.ref.id)
	}
	if rec := env.do(t, http.MethodPost, "/api/v1/agents/a%311/refresh", "", nil); rec.Code != http.StatusNotFound {
		t.Errorf("unknown escaped id: status %d, want 404", rec.Code)
	}

	noCrawler := newTestEnv(t, func(o *Options) { o.Refresher = nil })
	if rec := noCrawler.do(t, http.MethodPost, "/api/v1/agents/a1/refresh", "", nil); rec.Code != http.StatusNotFound {
		t.Errorf("refresh without a crawler = %d, want 404", rec.Code)
	} else if e := decodeError(t, rec); e.Code != CodeNotFound {
		t.Errorf("code = %q", e.Code)
	}
}
