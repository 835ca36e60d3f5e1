package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

func TestWebhooksAPI(t *testing.T) {
	store := catalogtest.SQLite(t)
	env := newTestEnv(t, func(o *Options) { o.Webhooks = store })
	jsonCT := map[string]string{"Content-Type": "application/json"}

	for _, tc := range []struct {
		body, field string
	}{
		{`{"url": "ftp://hooks.example.com/", "event_types": ["agent.updated"]}`, "url"},
		{`{"url": "https://user:pw@hooks.example.com/", "event_types": ["agent.updated"]}`, "url"},
		{`{"url": "https://hooks.example.com/", "event_types": []}`, "event_types"},
		{`{"url": "https://hooks.example.com/", "event_types": ["agent.nope"]}`, "event_types"},
		{`{"url": "https://hooks.example.com/", "event_types": ["agent.updated"], "filter": "sort=nope"}`, "filter"},
	} {
		rec := env.do(t, http.MethodPost, BasePath+"/webhooks", tc.body, jsonCT)
		var e ErrorResponse
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != http.StatusBadRequest || e.Error.Parameter != tc.field {
			t.Errorf("POST %s: %d %s; want 400 naming %s", tc.body, rec.Code, rec.Body, tc.field)
		}
	}

	rec := env.do(t, http.MethodPost, BasePath+"/webhooks",
		`{"url": "https://hooks.example.com/in", "event_types": ["agent.registered", "agent.removed"], "filter": "q=translate"}`, jsonCT)
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /webhooks: %d %s", rec.Code, rec.Body)
	}
	var created WebhookCreated
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.Secret, "whsec_") || created.Webhook.ID == "" {
		t.Fatalf("created %+v; want an id and a whsec_ secret", created)
	}

	rec = env.do(t, http.MethodGet, BasePath+"/webhooks", "", nil)
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), created.Secret) {
		t.Fatalf("GET /webhooks: %d %s; want the list without the secret", rec.Code, rec.Body)
	}
	var list WebhookList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Items) != 1 || list.Items[0].Filter != "q=translate" {
		t.Fatalf("GET /webhooks = %+v, %v", list, err)
	}

	rec = env.do(t, http.MethodGet, BasePath+"/webhooks/"+created.Webhook.ID+"/deliveries", "", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET deliveries: %d %s", rec.Code, rec.Body)
	}
	if rec = env.do(t, http.MethodDelete, BasePath+"/webhooks/"+created.Webhook.ID, "", nil); rec.Code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", rec.Code, rec.Body)
	}
	for _, target := range []string{"/webhooks/" + created.Webhook.ID, "/webhooks/" + created.Webhook.ID + "/deliveries"} {
		method := http.MethodDelete
		if strings.HasSuffix(target, "deliveries") {
			method = http.MethodGet
		}
		if rec = env.do(t, method, BasePath+target, "", nil); rec.Code != http.StatusNotFound {
			t.Errorf("%s %s after delete: %d; want 404", method, target, rec.Code)
		}
	}
}
