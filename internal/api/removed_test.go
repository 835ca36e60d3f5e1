package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/runs"
)

// signedInAs is callerWith that also puts the caller in the request
// context, as the Authenticator does, for handlers that ask who calls.
func signedInAs(role auth.Role) auth.Authorizer {
	check := callerWith(role)
	return authorizerFunc(func(need auth.Role) echo.MiddlewareFunc {
		mw := check.RequireRole(need)
		return func(next echo.HandlerFunc) echo.HandlerFunc {
			h := mw(next)
			return func(c echo.Context) error {
				p := auth.Principal{Subject: "sub-" + role.String(), Name: role.String(), Role: role, Source: auth.SourceBearer}
				c.SetRequest(c.Request().WithContext(auth.WithPrincipal(c.Request().Context(), p, "")))
				return h(c)
			}
		}
	})
}

// storeRegistrar registers a fixed card under the URL it is given, as the
// crawler's Registrar does after its fetch.
type storeRegistrar struct {
	store *catalog.Store
	card  *card.Card
}

func (r storeRegistrar) Register(ctx context.Context, actor catalog.Actor, _ catalog.Scope, input string) (catalog.UpsertResult, error) {
	return r.store.Upsert(ctx, actor, catalog.UpsertInput{CardURL: input, Card: r.card, Source: catalog.SourceURL})
}

// TestRemovedAgentVisibility: once an admin removes an agent, every
// /agents/{id} route answers 404 to viewers, testers and editors and
// search leaves it out, while the admin reads its history and may not act
// on it; an editor registering its URL again brings it back for all.
func TestRemovedAgentVisibility(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		ctx := context.Background()
		c, err := card.Parse([]byte(`{"name":"Echo","description":"d","url":"https://echo.example/a2a","version":"1.0.0",
			"protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
			"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}]}`), card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		const cardURL = "https://echo.example/.well-known/agent-card.json"
		res, err := store.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: cardURL, Card: c})
		if err != nil {
			t.Fatal(err)
		}
		id := res.Agent.ID
		agent := "/api/v1/agents/" + id
		// The runs are the catalog's, whose scoped reads hide a removed
		// agent's runs from everyone but admins.
		if err := store.CreateRun(ctx, testActor, catalog.Run{ID: "run-1", AgentID: id, Kind: catalog.RunKindRun,
			Subject: "sub-tester", State: "TASK_STATE_COMPLETED", Transcript: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		as := func(role auth.Role) testEnv {
			env := testEnv{e: echo.New()}
			New(Options{Catalog: store, Operator: store, Registrar: storeRegistrar{store, c}, Refresher: &fakeRefresher{cat: newFakeCatalog()},
				Runs: runs.New(runs.Options{Runner: newTestRunner(), Store: store}), Authorizer: signedInAs(role)}).Mount(env.e)
			return env
		}
		if rec := as(auth.Tester).do(t, http.MethodGet, "/api/v1/runs/run-1", "", nil); rec.Code != http.StatusOK {
			t.Fatalf("tester reads the run before the removal: %d %s", rec.Code, rec.Body)
		}
		searchTotal := func(env testEnv) int {
			t.Helper()
			rec := env.do(t, http.MethodGet, "/api/v1/agents?q=echo", "", nil)
			var sr SearchResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &sr); err != nil || rec.Code != http.StatusOK {
				t.Fatalf("search = %d: %s", rec.Code, rec.Body)
			}
			return sr.Total
		}
		if rec := as(auth.Admin).do(t, http.MethodDelete, agent, "", nil); rec.Code != http.StatusNoContent {
			t.Fatalf("remove = %d: %s", rec.Code, rec.Body)
		}

		jsonCT := map[string]string{"Content-Type": "application/json"}
		reads := []string{agent, agent + "/card", agent + "/versions", agent + "/versions/1", agent + "/runs"}
		for _, role := range []auth.Role{auth.Viewer, auth.Tester, auth.Editor} {
			env := as(role)
			for _, target := range reads {
				want := http.StatusNotFound
				if target == agent+"/runs" && !role.Includes(auth.Tester) {
					want = http.StatusForbidden
				}
				if rec := env.do(t, http.MethodGet, target, "", nil); rec.Code != want {
					t.Errorf("%v GET %s = %d, want %d", role, target, rec.Code, want)
				}
			}
			if role == auth.Editor {
				for _, target := range []string{agent + "/refresh", agent + "/pause", agent + "/resume", agent + "/checks"} {
					if rec := env.do(t, http.MethodPost, target, "", jsonCT); rec.Code != http.StatusNotFound {
						t.Errorf("editor POST %s = %d, want 404", target, rec.Code)
					}
				}
			}
			if n := searchTotal(env); n != 0 {
				t.Errorf("%v search finds %d agents, want none", role, n)
			}
		}

		admin := as(auth.Admin)
		for _, target := range reads {
			if rec := admin.do(t, http.MethodGet, target, "", nil); rec.Code != http.StatusOK {
				t.Errorf("admin GET %s = %d, want 200: %s", target, rec.Code, rec.Body)
			}
		}
		rec := admin.do(t, http.MethodGet, agent, "", nil)
		var d AgentDetail
		if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil || d.Removed == nil || d.Removed.By != "admin" {
			t.Errorf("admin reads removed %+v (%v), want removed by the admin's name", d.Removed, err)
		}
		for _, target := range []string{agent + "/refresh", agent + "/pause", agent + "/checks"} {
			if rec := admin.do(t, http.MethodPost, target, "", jsonCT); rec.Code != http.StatusConflict {
				t.Errorf("admin POST %s = %d, want 409", target, rec.Code)
			}
		}
		if rec := as(auth.Tester).do(t, http.MethodGet, "/api/v1/runs/run-1", "", nil); rec.Code != http.StatusNotFound {
			t.Errorf("tester reads a run of the removed agent: %d, want 404", rec.Code)
		}
		if rec := admin.do(t, http.MethodGet, "/api/v1/runs/run-1", "", nil); rec.Code != http.StatusOK {
			t.Errorf("admin reads a run of the removed agent: %d, want 200", rec.Code)
		}
		if n := searchTotal(admin); n != 0 {
			t.Errorf("admin search finds %d agents, want none (removed agents are listed apart)", n)
		}
		if rec := as(auth.Editor).do(t, http.MethodGet, "/api/v1/removed-agents", "", nil); rec.Code != http.StatusForbidden {
			t.Errorf("editor lists removed agents: %d, want 403", rec.Code)
		}

		// An editor registers the URL again: the same agent is back.
		editor := as(auth.Editor)
		rec = editor.do(t, http.MethodPost, "/api/v1/agents", `{"url":"`+cardURL+`"}`, jsonCT)
		var back AgentDetail
		if err := json.Unmarshal(rec.Body.Bytes(), &back); rec.Code != http.StatusOK || err != nil || back.ID != id || back.Removed != nil {
			t.Fatalf("re-register = %d: %s", rec.Code, rec.Body)
		}
		viewer := as(auth.Viewer)
		for _, target := range reads[:4] {
			if rec := viewer.do(t, http.MethodGet, target, "", nil); rec.Code != http.StatusOK {
				t.Errorf("viewer GET %s after the restore = %d, want 200", target, rec.Code)
			}
		}
		if n := searchTotal(viewer); n != 1 {
			t.Errorf("search after the restore finds %d agents, want 1", n)
		}
	})
}
