package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/sources"
)

// authorizerFunc adapts a function to auth.Authorizer.
type authorizerFunc func(auth.Role) echo.MiddlewareFunc

func (f authorizerFunc) RequireRole(r auth.Role) echo.MiddlewareFunc { return f(r) }

// callerWith authorizes a caller holding have: a route needing more
// answers 403.
func callerWith(have auth.Role) auth.Authorizer {
	return authorizerFunc(func(need auth.Role) echo.MiddlewareFunc {
		return func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				if !have.Includes(need) {
					return echo.NewHTTPError(http.StatusForbidden, need.String()+" role required")
				}
				return next(c)
			}
		}
	})
}

// TestRouteRoles holds the route table to its rule: test runs (which
// send live requests to agents, and whose transcripts hold what testers
// sent) need tester; other reads need viewer, anything else that changes
// state needs at least editor. The operator's routes each have their own
// role: what they reveal or change is the admin's (the audit log, trusted
// keys, removal) or the editor's (crawling).
func TestRouteRoles(t *testing.T) {
	store := catalogtest.SQLite(t)
	cat := newFakeCatalog()
	a := New(Options{Catalog: cat, Registrar: &fakeRegistrar{}, Refresher: &fakeRefresher{},
		Runs: newRunService(cat, newFakeRunStore(), nil), Audit: &fakeAuditLog{}, Operator: store, Keys: store, Crawl: store,
		Annotator: store, Curator: store, Webhooks: store, Sources: sources.New(store, nil, nil, nil, sources.Config{}, nil)})
	operator := map[string]auth.Role{
		"GET /sources":                               auth.Editor,
		"POST /sources":                              auth.Editor,
		"GET /sources/:id":                           auth.Editor,
		"DELETE /sources/:id":                        auth.Editor,
		"POST /sources/:id/refresh":                  auth.Editor,
		"GET /webhooks":                              auth.Admin,
		"POST /webhooks":                             auth.Admin,
		"DELETE /webhooks/:id":                       auth.Admin,
		"GET /webhooks/:id/deliveries":               auth.Admin,
		"POST /agents/:id/listing":                   auth.Editor,
		"GET /collections":                           auth.Viewer,
		"POST /collections":                          auth.Admin,
		"PUT /collections/:name/agents/:agent_id":    auth.Admin,
		"DELETE /collections/:name/agents/:agent_id": auth.Admin,
		"GET /audit":                                 auth.Admin,
		"DELETE /agents/:id":                         auth.Admin,
		"POST /agents/:id/pause":                     auth.Editor,
		"POST /agents/:id/resume":                    auth.Editor,
		"GET /keys":                                  auth.Admin,
		"POST /keys":                                 auth.Admin,
		"POST /keys/:id/revoke":                      auth.Admin,
		"GET /crawler":                               auth.Editor,
		"PUT /agents/:id/annotations":                auth.Editor,
		"GET /removed-agents":                        auth.Admin,
	}
	writes, runs := 0, 0
	for _, r := range a.routes() {
		if want, ok := operator[r.method+" "+r.path]; ok {
			if r.role != want {
				t.Errorf("%s %s needs %v, want %v", r.method, r.path, r.role, want)
			}
			delete(operator, r.method+" "+r.path)
			continue
		}
		switch {
		case strings.Contains(r.path, "runs") || strings.HasSuffix(r.path, "/checks"):
			runs++
			if r.role != auth.Tester {
				t.Errorf("%s %s needs %v, want tester", r.method, r.path, r.role)
			}
			continue
		}
		switch r.method {
		case http.MethodGet, http.MethodHead:
			if r.role != auth.Viewer {
				t.Errorf("%s %s needs %v, want viewer: reads are for every signed-in caller", r.method, r.path, r.role)
			}
		default:
			writes++
			if !r.role.Includes(auth.Editor) {
				t.Errorf("%s %s needs %v, want at least editor", r.method, r.path, r.role)
			}
		}
	}
	if writes == 0 {
		t.Error("no write route in the table: registrar and refresher were given")
	}
	if runs != 7 {
		t.Errorf("%d run and check routes in the table, want 7: runner and run store were given", runs)
	}
	for route := range operator {
		t.Errorf("%s not in the table: what serves it was given", route)
	}
}

// TestMountChecksEachRoutesRole: every route, reached over HTTP, asks the
// Authorizer for its own role before its handler runs.
func TestMountChecksEachRoutesRole(t *testing.T) {
	var asked []auth.Role
	deny := authorizerFunc(func(need auth.Role) echo.MiddlewareFunc {
		return func(echo.HandlerFunc) echo.HandlerFunc {
			return func(echo.Context) error {
				asked = append(asked, need)
				return echo.ErrForbidden
			}
		}
	})
	store := catalogtest.SQLite(t)
	env := newTestEnv(t, func(o *Options) {
		o.Authorizer = deny
		o.Audit, o.Operator, o.Keys, o.Crawl, o.Annotator, o.Webhooks = store, store, store, store, store, store
	})
	a := New(Options{Catalog: env.cat, Registrar: env.reg, Refresher: env.ref, Audit: store, Operator: store, Keys: store, Crawl: store,
		Annotator: store, Webhooks: store})
	for _, r := range a.routes() {
		asked = nil
		target := BasePath + strings.NewReplacer(":id", "a1", ":n", "1").Replace(r.path)
		// Not env.do: the document lists 403 only where sign-in is
		// expected to matter today.
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, httptest.NewRequest(r.method, target, nil))
		if rec.Code != http.StatusForbidden || len(asked) != 1 || asked[0] != r.role {
			t.Errorf("%s %s: status %d, roles asked %v; want 403 after asking for %v", r.method, r.path, rec.Code, asked, r.role)
		}
	}
	if env.reg.input != "" || env.ref.id != "" {
		t.Error("a write handler ran although the Authorizer refused")
	}
}

func TestViewerCannotWrite(t *testing.T) {
	tests := []struct {
		caller     auth.Role
		method     string
		target     string
		body       string
		wantStatus int
	}{
		{auth.Viewer, http.MethodGet, "/api/v1/agents/a1", "", http.StatusOK},
		{auth.Viewer, http.MethodPost, "/api/v1/agents", `{"url":"https://agent.example"}`, http.StatusForbidden},
		{auth.Tester, http.MethodPost, "/api/v1/agents/a1/refresh", "", http.StatusForbidden},
		{auth.Editor, http.MethodPost, "/api/v1/agents/a1/refresh", "", http.StatusOK},
		{auth.Admin, http.MethodGet, "/api/v1/changes", "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.caller.String()+" "+tt.method+" "+tt.target, func(t *testing.T) {
			env := newTestEnv(t, func(o *Options) { o.Authorizer = callerWith(tt.caller) })
			rec := env.do(t, tt.method, tt.target, tt.body, map[string]string{"Content-Type": "application/json"})
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tt.wantStatus, rec.Body)
			}
			if tt.wantStatus == http.StatusForbidden {
				if e := decodeError(t, rec); e.Code != CodeForbidden {
					t.Errorf("error code %q, want %q", e.Code, CodeForbidden)
				}
				if env.reg.input != "" || env.ref.id != "" {
					t.Error("a write handler ran for a caller without the role")
				}
			}
		})
	}
}
