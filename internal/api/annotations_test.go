package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// Editors replace annotations, viewers read them without the notes and
// cannot write them; refused input is a 400 naming the field; labels are
// search filters and facets.
func TestAnnotationsEndpoint(t *testing.T) {
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
		as := func(role auth.Role) testEnv {
			env := testEnv{e: echo.New()}
			env.e.Pre(middleware.RequestID())
			New(Options{Catalog: store, Annotator: store, Authorizer: signedInAs(role)}).Mount(env.e)
			return env
		}
		editor, viewer := as(auth.Editor), as(auth.Viewer)
		jsonCT := map[string]string{"Content-Type": "application/json"}
		target := "/api/v1/agents/" + id + "/annotations"
		body := `{"owner_team":"Payments","contact":"pay@example.com","classification":"confidential",
			"labels":{"env":"prod","tier":"1"},"notes":"Call Ed before changing."}`

		if rec := viewer.do(t, http.MethodPut, target, body, jsonCT); rec.Code != http.StatusForbidden {
			t.Fatalf("viewer PUT: %d %s", rec.Code, rec.Body)
		}
		rec := editor.do(t, http.MethodPut, target, body, jsonCT)
		if rec.Code != http.StatusOK {
			t.Fatalf("editor PUT: %d %s", rec.Code, rec.Body)
		}
		var got Annotations
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if got.Notes == nil || *got.Notes != "Call Ed before changing." || got.Labels["tier"] != "1" || got.ChangedBy == nil || *got.ChangedBy != "sub-editor" {
			t.Errorf("PUT answered %s", rec.Body)
		}

		detail := func(env testEnv) AgentDetail {
			t.Helper()
			rec := env.do(t, http.MethodGet, "/api/v1/agents/"+id, "", nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET agent: %d %s", rec.Code, rec.Body)
			}
			if isEditor := env.e == editor.e; strings.Contains(rec.Body.String(), "Call Ed") != isEditor {
				t.Errorf("agent view for editor=%v: notes shown = %v", isEditor, !isEditor)
			}
			var d AgentDetail
			if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
				t.Fatal(err)
			}
			return d
		}
		if d := detail(viewer); d.Annotations.Notes != nil || d.Annotations.OwnerTeam != "Payments" || d.Annotations.Labels["env"] != "prod" {
			t.Errorf("viewer sees %+v", d.Annotations)
		}
		if d := detail(editor); d.Annotations.Notes == nil || d.Annotations.Classification != "confidential" {
			t.Errorf("editor sees %+v", d.Annotations)
		}

		for _, q := range []string{"label=env:prod", "label=env", "owner_team=payments", "classification=confidential"} {
			rec := viewer.do(t, http.MethodGet, "/api/v1/agents?"+q, "", nil)
			var sr SearchResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &sr); err != nil || rec.Code != http.StatusOK || sr.Total != 1 {
				t.Errorf("search %s: %d %s", q, rec.Code, rec.Body)
			}
			if len(sr.Facets["label"]) != 2 {
				t.Errorf("search %s: label facet %v", q, sr.Facets["label"])
			}
		}
		if rec := viewer.do(t, http.MethodGet, "/api/v1/agents?label=Bad%20Key", "", nil); rec.Code != http.StatusBadRequest ||
			decodeError(t, rec).Parameter != "label" {
			t.Errorf("bad label filter: %d %s", rec.Code, rec.Body)
		}

		refused := []struct {
			name, target, body string
			header             map[string]string
			status             int
			code, parameter    string
		}{
			{"bad label key", target, `{"labels":{"Bad Key":"x"}}`, jsonCT, http.StatusBadRequest, CodeInvalidBody, "labels"},
			{"bad label value", target, `{"labels":{"env":"<script>"}}`, jsonCT, http.StatusBadRequest, CodeInvalidBody, "labels"},
			{"multi-line owner", target, `{"owner_team":"a\nb"}`, jsonCT, http.StatusBadRequest, CodeInvalidBody, "owner_team"},
			{"long notes", target, `{"notes":"` + strings.Repeat("n", catalog.MaxNotesLen+1) + `"}`, jsonCT, http.StatusBadRequest, CodeInvalidBody, "notes"},
			{"unknown field", target, `{"owner":"x"}`, jsonCT, http.StatusBadRequest, CodeInvalidBody, ""},
			{"labels not strings", target, `{"labels":{"env":1}}`, jsonCT, http.StatusBadRequest, CodeInvalidBody, ""},
			{"not JSON", target, `owner_team=x`, map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
				http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, ""},
			{"unknown agent", "/api/v1/agents/nope/annotations", body, jsonCT, http.StatusNotFound, CodeNotFound, ""},
		}
		for _, tc := range refused {
			rec := editor.do(t, http.MethodPut, tc.target, tc.body, tc.header)
			if rec.Code != tc.status {
				t.Errorf("%s: status %d, want %d: %s", tc.name, rec.Code, tc.status, rec.Body)
				continue
			}
			if e := decodeError(t, rec); e.Code != tc.code || e.Parameter != tc.parameter {
				t.Errorf("%s: error %+v, want code %s parameter %q", tc.name, e, tc.code, tc.parameter)
			}
		}
		if d := detail(editor); d.Annotations.OwnerTeam != "Payments" || len(d.Annotations.Labels) != 2 {
			t.Errorf("refused writes changed the annotations: %+v", d.Annotations)
		}

		// One audit row, for the one accepted write, naming the request.
		p, err := store.AuditLog(ctx, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Entries) != 1 || p.Entries[0].Action != catalog.ActionAnnotate || p.Entries[0].Subject != "sub-editor" ||
			p.Entries[0].RequestID == "" {
			t.Errorf("audit log = %+v", p.Entries)
		}
		// A replacement with nothing clears them.
		if rec := editor.do(t, http.MethodPut, target, `{}`, jsonCT); rec.Code != http.StatusOK {
			t.Fatalf("clearing: %d %s", rec.Code, rec.Body)
		}
		if d := detail(viewer); d.Annotations.OwnerTeam != "" || len(d.Annotations.Labels) != 0 || d.Annotations.ChangedAt != nil {
			t.Errorf("after clearing: %+v", d.Annotations)
		}
	})
}
