package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

var _ Curator = (*catalog.Store)(nil)

// TestCurationEndpoints drives the listing and collection routes over a
// real catalog: clear 400s for bad bodies, 404 for what does not exist,
// and answers that match the document.
func TestCurationEndpoints(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		ctx := context.Background()
		var ids []string
		for _, u := range []string{"https://a.example/card.json", "https://b.example/card.json"} {
			res, err := store.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: u, Card: mustCard(t, "v03_full.json"),
				Source: catalog.SourceURL, ReceivedAt: t0})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.Agent.ID)
		}
		env := testEnv{e: echo.New()}
		New(Options{Catalog: store, Curator: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Mount(env.e)
		hdr := map[string]string{"Content-Type": "application/json"}
		listing := "/api/v1/agents/" + ids[0] + "/listing"
		tests := []struct {
			name, method, target, body string
			want                       int
			wantCode, wantState        string
		}{
			{"unknown state", http.MethodPost, listing, `{"state": "listed"}`, 400, CodeInvalidBody, ""},
			{"reject without reason", http.MethodPost, listing, `{"state": "rejected"}`, 400, CodeInvalidBody, ""},
			{"unknown field", http.MethodPost, listing, `{"state": "approved", "by": "me"}`, 400, CodeInvalidBody, ""},
			{"replacement that does not exist", http.MethodPost, listing, `{"state": "deprecated", "reason": "old", "replacement": "nope"}`, 400, CodeInvalidBody, ""},
			{"unknown agent", http.MethodPost, "/api/v1/agents/nope/listing", `{"state": "approved"}`, 404, CodeNotFound, ""},
			{"deprecate", http.MethodPost, listing, `{"state": "deprecated", "reason": "use b", "replacement": "` + ids[1] + `"}`, 200, "", "deprecated"},
			{"create collection", http.MethodPost, "/api/v1/collections", `{"name": "Finance", "groups": ["finance"]}`, 201, "", ""},
			{"update collection", http.MethodPost, "/api/v1/collections", `{"name": "finance", "description": "Money", "groups": ["finance"]}`, 200, "", ""},
			{"nameless collection", http.MethodPost, "/api/v1/collections", `{"name": " "}`, 400, CodeInvalidBody, ""},
			{"add member", http.MethodPut, "/api/v1/collections/Finance/agents/" + ids[0], "", 204, "", ""},
			{"add member again", http.MethodPut, "/api/v1/collections/Finance/agents/" + ids[0], "", 204, "", ""},
			{"unknown collection", http.MethodPut, "/api/v1/collections/Nope/agents/" + ids[0], "", 404, CodeNotFound, ""},
			{"unknown member", http.MethodPut, "/api/v1/collections/Finance/agents/nope", "", 404, CodeNotFound, ""},
			{"remove member", http.MethodDelete, "/api/v1/collections/Finance/agents/" + ids[1], "", 204, "", ""},
		}
		for _, tc := range tests {
			rec := env.do(t, tc.method, tc.target, tc.body, hdr)
			if rec.Code != tc.want {
				t.Errorf("%s: %s %s = %d %s, want %d", tc.name, tc.method, tc.target, rec.Code, rec.Body, tc.want)
				continue
			}
			if tc.wantCode != "" {
				if e := decodeError(t, rec); e.Code != tc.wantCode || e.Message == "" {
					t.Errorf("%s: error %+v, want code %s", tc.name, e, tc.wantCode)
				}
			}
			if tc.wantState != "" {
				var d AgentDetail
				if err := unmarshal(rec.Body.Bytes(), &d); err != nil {
					t.Fatal(err)
				}
				if d.Listing.State != tc.wantState || d.Listing.Replacement != ids[1] || d.Listing.Reason != "use b" {
					t.Errorf("%s: listing %+v", tc.name, d.Listing)
				}
			}
		}
		var l CollectionList
		if err := unmarshal(env.do(t, http.MethodGet, "/api/v1/collections", "", nil).Body.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 1 || l.Items[0].Name != "Finance" || l.Items[0].Description != "Money" || l.Items[0].Agents != 1 {
			t.Errorf("collections = %+v", l.Items)
		}
	})
}

func unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func mustCard(t *testing.T, file string) *card.Card {
	t.Helper()
	raw, err := os.ReadFile("../card/testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Parse(raw, card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
