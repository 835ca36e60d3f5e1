package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/crawler"
)

// The real implementations satisfy the interfaces the handlers declare.
var (
	_ Catalog   = (*catalog.Store)(nil)
	_ Registrar = (*crawler.Registrar)(nil)
)

// TestAgainstStore runs the API over a real catalog filled with the card
// package's fixtures of every protocol version, so the document is checked
// against what the store really returns, not only against fakes.
func TestAgainstStore(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		ctx := context.Background()
		files, err := filepath.Glob("../card/testdata/*.json")
		if err != nil || len(files) == 0 {
			t.Fatalf("no card fixtures: %v", err)
		}
		var ids []string
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c, err := card.Parse(raw, card.DefaultLimits())
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			res, err := store.Upsert(ctx, catalog.UpsertInput{
				CardURL: "https://" + strings.TrimSuffix(filepath.Base(f), ".json") + ".example/.well-known/agent-card.json",
				Card:    c, Source: catalog.SourceURL, ReceivedAt: t0,
			})
			if err != nil {
				t.Fatalf("upserting %s: %v", f, err)
			}
			ids = append(ids, res.Agent.ID)
		}

		env := testEnv{e: echo.New()}
		New(Options{Catalog: store}).Mount(env.e)
		get := func(target string, header map[string]string) *httptest.ResponseRecorder {
			t.Helper()
			rec := env.do(t, http.MethodGet, target, "", header)
			if rec.Code != http.StatusOK && rec.Code != http.StatusNotModified {
				t.Errorf("GET %s = %d %s", target, rec.Code, rec.Body)
			}
			return rec
		}

		// Walk every page with a small limit and every facet value.
		seen := map[string]bool{}
		target := "/api/v1/agents?limit=2"
		var first SearchResponse
		for range len(ids) + 1 {
			var page SearchResponse
			if err := json.Unmarshal(get(target, nil).Body.Bytes(), &page); err != nil {
				t.Fatal(err)
			}
			if first.Facets == nil {
				first = page
			}
			for _, s := range page.Items {
				seen[s.ID] = true
			}
			if page.NextCursor == nil {
				break
			}
			target = "/api/v1/agents?limit=2&cursor=" + *page.NextCursor
		}
		if len(seen) != len(ids) || first.Total != len(ids) {
			t.Errorf("paging saw %d agents, total %d; stored %d", len(seen), first.Total, len(ids))
		}
		if len(first.Facets[catalog.FieldProtocolVersion]) == 0 || len(first.Facets[catalog.FieldBinding]) == 0 {
			t.Errorf("fixtures produced no facets: %+v", first.Facets)
		}
		for field, counts := range first.Facets {
			for _, fc := range counts {
				get("/api/v1/agents?q=agent&"+field+"="+url.QueryEscape(fc.Value), nil)
			}
		}

		for _, id := range ids {
			get("/api/v1/agents/"+id, nil)
			raw := get("/api/v1/agents/"+id+"/card", nil)
			get("/api/v1/agents/"+id+"/card", map[string]string{"If-None-Match": raw.Header().Get("ETag")})
			get("/api/v1/agents/"+id+"/versions", nil)
			get("/api/v1/agents/"+id+"/versions/1", nil)
			if rec := env.do(t, http.MethodGet, "/api/v1/agents/"+id+"/versions/2", "", nil); rec.Code != http.StatusNotFound {
				t.Errorf("unknown version = %d", rec.Code)
			}
		}
		if rec := env.do(t, http.MethodGet, "/api/v1/agents/999999", "", nil); rec.Code != http.StatusNotFound {
			t.Errorf("unknown agent = %d", rec.Code)
		}
		if rec := env.do(t, http.MethodGet, "/api/v1/agents?cursor=garbage", "", nil); rec.Code != http.StatusBadRequest {
			t.Errorf("garbage cursor = %d %s", rec.Code, rec.Body)
		}
	})
}
