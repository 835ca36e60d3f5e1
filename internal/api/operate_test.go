package api

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

var (
	_ AuditLog    = (*catalog.Store)(nil)
	_ Operator    = (*catalog.Store)(nil)
	_ Keys        = (*catalog.Store)(nil)
	_ CrawlStatus = (*catalog.Store)(nil)
)

func testKeyJWK(t *testing.T, kid string) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, err := jose.JSONWebKey{Key: pub, KeyID: kid, Algorithm: "EdDSA", Use: "sig"}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOperatorEndpoints drives every operator endpoint over a real
// catalog, in order, and checks each answer and that each write left
// exactly one audit row naming the request it came from.
func TestOperatorEndpoints(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		ctx := context.Background()
		c, err := card.Parse([]byte(`{"name":"Echo","description":"d","url":"https://echo.example/a2a","version":"1.0.0",
			"protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
			"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}]}`), card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		res, err := store.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: "https://echo.example/.well-known/agent-card.json", Card: c})
		if err != nil {
			t.Fatal(err)
		}
		id := res.Agent.ID
		env := testEnv{e: echo.New()}
		env.e.Pre(middleware.RequestID())
		New(Options{Catalog: store, Audit: store, Operator: store, Keys: store, Crawl: store, Annotator: store}).Mount(env.e)

		var keyID string
		jwk := testKeyJWK(t, "k1")
		jsonCT := map[string]string{"Content-Type": "application/json"}
		steps := []struct {
			name       string
			method     string
			target     func() string
			body       string
			header     map[string]string
			wantStatus int
			// wantAudit is the action of the row the step adds; "" adds none.
			wantAudit string
			check     func(t *testing.T, body []byte)
		}{
			{name: "pause", method: http.MethodPost, target: func() string { return "/api/v1/agents/" + id + "/pause" },
				wantStatus: http.StatusOK, wantAudit: catalog.ActionPause, check: func(t *testing.T, b []byte) {
					if !strings.Contains(string(b), `"paused":true`) {
						t.Errorf("paused agent answered %s", b)
					}
				}},
			{name: "resume", method: http.MethodPost, target: func() string { return "/api/v1/agents/" + id + "/resume" },
				wantStatus: http.StatusOK, wantAudit: catalog.ActionResume},
			{name: "annotate", method: http.MethodPut, target: func() string { return "/api/v1/agents/" + id + "/annotations" },
				body: `{"owner_team":"Echo team","labels":{"env":"prod"}}`, header: jsonCT, wantStatus: http.StatusOK, wantAudit: catalog.ActionAnnotate},
			{name: "pause an unknown agent", method: http.MethodPost, target: func() string { return "/api/v1/agents/nope/pause" },
				wantStatus: http.StatusNotFound},
			{name: "pause with a form body", method: http.MethodPost, target: func() string { return "/api/v1/agents/" + id + "/pause" },
				body: "a=b", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, wantStatus: http.StatusUnsupportedMediaType},
			{name: "pause with an unknown field", method: http.MethodPost, target: func() string { return "/api/v1/agents/" + id + "/pause" },
				body: `{"until":"2030-01-01T00:00:00Z"}`, header: jsonCT, wantStatus: http.StatusBadRequest},
			{name: "resume with an unknown field", method: http.MethodPost, target: func() string { return "/api/v1/agents/" + id + "/resume" },
				body: `{"force":true}`, header: jsonCT, wantStatus: http.StatusBadRequest},
			{name: "resume with an empty object", method: http.MethodPost, target: func() string { return "/api/v1/agents/" + id + "/resume" },
				body: `{}`, header: jsonCT, wantStatus: http.StatusOK, wantAudit: catalog.ActionResume},
			{name: "pause with a JSON array", method: http.MethodPost, target: func() string { return "/api/v1/agents/" + id + "/pause" },
				body: `[]`, header: jsonCT, wantStatus: http.StatusBadRequest},
			{name: "add key", method: http.MethodPost, target: func() string { return "/api/v1/keys" },
				body: `{"jwk":` + jwk + `,"origins":["https://echo.example"],"not_after":"2099-01-01T00:00:00Z"}`, header: jsonCT,
				wantStatus: http.StatusCreated, wantAudit: catalog.ActionKeyAdd, check: func(t *testing.T, b []byte) {
					var k TrustedKey
					if err := json.Unmarshal(b, &k); err != nil || k.KID != "k1" || k.State != "active" || k.NotAfter == nil {
						t.Errorf("added key %s (%v)", b, err)
					}
					keyID = k.ID
				}},
			{name: "add the same key", method: http.MethodPost, target: func() string { return "/api/v1/keys" },
				body: `{"jwk":` + jwk + `,"origins":["*"]}`, header: jsonCT, wantStatus: http.StatusConflict},
			{name: "add a secret key", method: http.MethodPost, target: func() string { return "/api/v1/keys" },
				body: `{"jwk":{"kty":"oct","k":"c2VjcmV0"},"origins":["*"]}`, header: jsonCT, wantStatus: http.StatusUnprocessableEntity},
			{name: "add without origins", method: http.MethodPost, target: func() string { return "/api/v1/keys" },
				body: `{"jwk":` + jwk + `}`, header: jsonCT, wantStatus: http.StatusBadRequest},
			{name: "list keys", method: http.MethodGet, target: func() string { return "/api/v1/keys" },
				wantStatus: http.StatusOK, check: func(t *testing.T, b []byte) {
					var l TrustedKeyList
					if err := json.Unmarshal(b, &l); err != nil || len(l.Items) != 1 || l.Items[0].ID != keyID {
						t.Errorf("keys %s (%v)", b, err)
					}
				}},
			{name: "revoke key", method: http.MethodPost, target: func() string { return "/api/v1/keys/" + keyID + "/revoke" },
				wantStatus: http.StatusOK, wantAudit: catalog.ActionKeyRevoke, check: func(t *testing.T, b []byte) {
					var k TrustedKey
					if err := json.Unmarshal(b, &k); err != nil || k.State != "revoked" || k.RevokedAt == nil {
						t.Errorf("revoked key %s (%v)", b, err)
					}
				}},
			{name: "revoke an unknown key", method: http.MethodPost, target: func() string { return "/api/v1/keys/nope/revoke" },
				wantStatus: http.StatusNotFound},
			{name: "crawler status", method: http.MethodGet, target: func() string { return "/api/v1/crawler" },
				wantStatus: http.StatusOK, check: func(t *testing.T, b []byte) {
					var s CrawlerStatus
					// The new agent is due at once.
					if err := json.Unmarshal(b, &s); err != nil || s.Due != 1 || s.OldestDue == nil || s.FailingHosts == nil {
						t.Errorf("crawler status %s (%v)", b, err)
					}
				}},
			{name: "remove", method: http.MethodDelete, target: func() string { return "/api/v1/agents/" + id },
				wantStatus: http.StatusNoContent, wantAudit: catalog.ActionRemove},
			{name: "remove again", method: http.MethodDelete, target: func() string { return "/api/v1/agents/" + id },
				wantStatus: http.StatusNotFound},
			{name: "the removed agent, to an admin", method: http.MethodGet, target: func() string { return "/api/v1/agents/" + id },
				wantStatus: http.StatusOK, check: func(t *testing.T, b []byte) {
					var d AgentDetail
					if err := json.Unmarshal(b, &d); err != nil || d.Removed == nil || d.Removed.By != "anonymous" || d.Removed.At.IsZero() {
						t.Errorf("removed agent %s (%v), want removed by anonymous", b, err)
					}
				}},
			{name: "pause the removed agent", method: http.MethodPost, target: func() string { return "/api/v1/agents/" + id + "/pause" },
				wantStatus: http.StatusConflict},
			{name: "list removed agents", method: http.MethodGet, target: func() string { return "/api/v1/removed-agents" },
				wantStatus: http.StatusOK, check: func(t *testing.T, b []byte) {
					var l RemovedAgentList
					if err := json.Unmarshal(b, &l); err != nil || len(l.Items) != 1 || l.Items[0].ID != id || l.Items[0].Name != "Echo" ||
						l.Items[0].Removed.By != "anonymous" || l.NextCursor != "" {
						t.Errorf("removed agents %s (%v)", b, err)
					}
				}},
			{name: "list removed agents with a bad cursor", method: http.MethodGet, target: func() string { return "/api/v1/removed-agents?cursor=x" },
				wantStatus: http.StatusBadRequest},
			{name: "list removed agents with an unknown parameter", method: http.MethodGet,
				target: func() string { return "/api/v1/removed-agents?removed=true" }, wantStatus: http.StatusBadRequest},
		}
		rows := 0
		for _, st := range steps {
			header := map[string]string{echo.HeaderXRequestID: "req-" + st.name}
			for k, v := range st.header {
				header[k] = v
			}
			rec := env.do(t, st.method, st.target(), st.body, header)
			if rec.Code != st.wantStatus {
				t.Fatalf("%s: status %d, want %d: %s", st.name, rec.Code, st.wantStatus, rec.Body)
			}
			if st.check != nil {
				st.check(t, rec.Body.Bytes())
			}
			p, err := store.AuditLog(ctx, "", 100)
			if err != nil {
				t.Fatal(err)
			}
			if st.wantAudit != "" {
				rows++
			}
			if len(p.Entries) != rows {
				t.Fatalf("%s: %d audit rows, want %d", st.name, len(p.Entries), rows)
			}
			if e := p.Entries[0]; st.wantAudit != "" && (e.Action != st.wantAudit || e.RequestID != "req-"+st.name || e.ClientAddr != "192.0.2.1") {
				t.Errorf("%s: audit row %+v, want %s for request req-%s", st.name, e, st.wantAudit, st.name)
			}
		}
		rec := env.do(t, http.MethodGet, "/api/v1/audit", "", nil)
		var l AuditList
		if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || len(l.Items) != rows || l.Items[0].Action != catalog.ActionRemove {
			t.Errorf("GET /audit = %d %s (%v)", rec.Code, rec.Body, err)
		}
	})
}

// TestOperatorRoles: an editor pauses but cannot remove, read the audit
// log or manage keys; a viewer does not see the crawler.
func TestOperatorRoles(t *testing.T) {
	store := catalogtest.SQLite(t)
	ctx := context.Background()
	c, err := card.Parse([]byte(`{"name":"Echo","description":"d","url":"https://echo.example/a2a","version":"1.0.0",
		"protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`), card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	res, err := store.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: "https://echo.example/.well-known/agent-card.json", Card: c})
	if err != nil {
		t.Fatal(err)
	}
	agent := "/api/v1/agents/" + res.Agent.ID
	tests := []struct {
		caller     auth.Role
		method     string
		target     string
		wantStatus int
	}{
		{auth.Viewer, http.MethodGet, "/api/v1/crawler", http.StatusForbidden},
		{auth.Tester, http.MethodPost, agent + "/pause", http.StatusForbidden},
		{auth.Editor, http.MethodPost, agent + "/pause", http.StatusOK},
		{auth.Editor, http.MethodGet, "/api/v1/crawler", http.StatusOK},
		{auth.Editor, http.MethodDelete, agent, http.StatusForbidden},
		{auth.Editor, http.MethodGet, "/api/v1/audit", http.StatusForbidden},
		{auth.Editor, http.MethodGet, "/api/v1/keys", http.StatusForbidden},
		{auth.Editor, http.MethodPost, "/api/v1/keys/x/revoke", http.StatusForbidden},
		{auth.Admin, http.MethodGet, "/api/v1/audit", http.StatusOK},
		{auth.Admin, http.MethodDelete, agent, http.StatusNoContent},
	}
	for _, tt := range tests {
		env := testEnv{e: echo.New()}
		New(Options{Catalog: store, Audit: store, Operator: store, Keys: store, Crawl: store, Authorizer: callerWith(tt.caller)}).Mount(env.e)
		if rec := env.do(t, tt.method, tt.target, "", nil); rec.Code != tt.wantStatus {
			t.Errorf("%v %s %s = %d, want %d", tt.caller, tt.method, tt.target, rec.Code, tt.wantStatus)
		}
	}
}
