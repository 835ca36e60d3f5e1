package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
)

// TestARDWiring: the assembled handler serves the ARD door and its
// manifest, advertises the manifest on console pages, and takes an
// agent's ARD identifier wherever the API and the console take its id.
func TestARDWiring(t *testing.T) {
	store := catalogtest.SQLite(t)
	raw := []byte(`{"name":"Weather","description":"Forecasts","url":"https://w.example/a2a","version":"1","protocolVersion":"0.3.0",
		"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
		"skills":[{"id":"forecast","name":"Forecast","description":"d","tags":["weather"]}]}`)
	c, err := card.Parse(raw, card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	const cardURL = "https://w.example:8443/agents/weather/card.json"
	res, err := store.Upsert(context.Background(), catalog.System("test"), catalog.UpsertInput{CardURL: cardURL, Card: c,
		Source: catalog.SourceURL, ReceivedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	urn, _ := card.URNOf(cardURL)
	srv := httptest.NewServer(newHandler(handlerDeps{log: slog.New(slog.DiscardHandler), store: store, agents: store,
		ardStore: store, ard: ardPublish(config.ARD{Publish: config.ARDPublishApproved})}))
	t.Cleanup(srv.Close)
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, path := range []string{"/api/v1/agents/" + url.PathEscape(urn), "/api/v1/agents/" + urn + "/versions", "/agents/" + url.PathEscape(urn)} {
		resp, body := get(path)
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d %.200s", path, resp.StatusCode, body)
		}
	}
	// The agent page shows the identifier.
	if _, body := get("/agents/" + res.Agent.ID); !strings.Contains(body, urn) {
		t.Errorf("the agent page does not show %s", urn)
	}
	var d struct{ ID string }
	if _, body := get("/api/v1/agents/" + url.PathEscape(urn)); json.Unmarshal([]byte(body), &d) != nil || d.ID != res.Agent.ID {
		t.Errorf("the identifier names agent %q, want %q", d.ID, res.Agent.ID)
	}
	// An identifier that names nothing is as unknown as any id.
	if resp, _ := get("/api/v1/agents/" + url.PathEscape("urn:air:w.example:a2a:nothing")); resp.StatusCode != 404 {
		t.Errorf("unknown identifier: %d", resp.StatusCode)
	}
	resp, _ := get("/")
	if link := resp.Header.Get("Link"); link != `</.well-known/ard.json>; rel="ard"` {
		t.Errorf("console Link %q", link)
	}
	resp, body := get("/.well-known/ard.json")
	if resp.StatusCode != 200 || !strings.Contains(body, `"identifier":"`+urn+`"`) {
		t.Errorf("manifest: %d %.300s", resp.StatusCode, body)
	}
	r, err := srv.Client().Post(srv.URL+"/ard/v1/search", "application/json", strings.NewReader(`{"query":{"text":"weather"}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(b), urn) {
		t.Errorf("search: %d %s", r.StatusCode, b)
	}
}

// TestARDPageTokensHoldAcrossReplicas: two registries on one database (as
// two replicas, or one before and after a restart) sign ARD page tokens
// with the same key, kept in the database, so a client paging through a
// search may be answered by either.
func TestARDPageTokensHoldAcrossReplicas(t *testing.T) {
	cfg := config.Default()
	cfg.Storage.DB = "sqlite:" + filepath.Join(t.TempDir(), "reg.db")
	cfg.Crawl.Enabled, cfg.Verify.Fetch = false, false
	cfg.ARD.Publish = config.ARDPublishApproved
	log := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	var servers []*httptest.Server
	for range 2 {
		a, err := newApp(ctx, cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.close)
		srv := httptest.NewServer(a.handler())
		t.Cleanup(srv.Close)
		servers = append(servers, srv)
	}
	// Two agents, so that a page of one has a next page.
	for i := range 2 {
		c, err := card.Parse([]byte(fmt.Sprintf(`{"name":"Weather %d","description":"Forecasts","url":"https://w%d.example/a2a",`+
			`"version":"1","protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":["text/plain"],`+
			`"defaultOutputModes":["text/plain"],"skills":[{"id":"forecast","name":"Forecast","description":"d","tags":["weather"]}]}`, i, i)),
			card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		store, err := openStore(ctx, cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		_, err = store.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: fmt.Sprintf("https://w%d.example/.well-known/agent-card.json", i),
			Card: c, Source: catalog.SourceURL, ReceivedAt: time.Now()})
		closeStore(store, log)
		if err != nil {
			t.Fatal(err)
		}
	}
	list := func(srv *httptest.Server, token string) (int, string) {
		t.Helper()
		q := url.Values{"pageSize": {"1"}}
		if token != "" {
			q.Set("pageToken", token)
		}
		var page struct{ PageToken string }
		for deadline := time.Now().Add(20 * time.Second); ; {
			resp, err := srv.Client().Get(srv.URL + "/ard/v1/agents?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			err = json.NewDecoder(resp.Body).Decode(&page)
			resp.Body.Close()
			// Each replica syncs its index from the database every few
			// seconds; the second may not have the agents yet.
			if resp.StatusCode != http.StatusOK || page.PageToken != "" || token != "" || time.Now().After(deadline) {
				if err != nil {
					t.Fatal(err)
				}
				return resp.StatusCode, page.PageToken
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	code, token := list(servers[0], "")
	if code != http.StatusOK || token == "" {
		t.Fatalf("first page on the first registry: %d, page token %q", code, token)
	}
	if code, _ := list(servers[1], token); code != http.StatusOK {
		t.Errorf("the first registry's page token on the second: %d, want 200", code)
	}
}

// TestAgentRefsInRoutes: the API's agent and collection member routes take
// an agent's card URL (in any spelling that canonicalizes alike) or its
// ARD identifier wherever they take its id.
func TestAgentRefsInRoutes(t *testing.T) {
	store := catalogtest.SQLite(t)
	ctx := context.Background()
	ids := map[string]string{}
	for _, name := range []string{"weather", "tides"} {
		raw := []byte(fmt.Sprintf(`{"name":%q,"description":"Forecasts","url":"https://%s.example/a2a","version":"1","protocolVersion":"0.3.0",
			"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
			"skills":[{"id":"forecast","name":"Forecast","description":"d","tags":["weather"]}]}`, name, name))
		c, err := card.Parse(raw, card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		res, err := store.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: "https://" + name + ".example/agent-card.json",
			Card: c, Source: catalog.SourceURL, ReceivedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = res.Agent.ID
	}
	if _, _, err := store.SaveCollection(ctx, catalog.System("test"), catalog.Collection{Name: "Sea"}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newHandler(handlerDeps{log: slog.New(slog.DiscardHandler), store: store, agents: store,
		ardStore: store, curator: store, ard: ardPublish(config.ARD{Publish: config.ARDPublishApproved})}))
	t.Cleanup(srv.Close)
	do := func(method, path string) int {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	urn, _ := card.URNOf("https://tides.example/agent-card.json")
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/api/v1/agents/" + url.PathEscape("HTTPS://Weather.example:443/agent-card.json"), 200},
		{"PUT", "/api/v1/collections/Sea/agents/" + url.PathEscape("https://weather.example/agent-card.json"), 204},
		{"PUT", "/api/v1/collections/Sea/agents/" + url.PathEscape(urn), 204},
		{"PUT", "/api/v1/collections/Sea/agents/" + url.PathEscape("https://nowhere.example/agent-card.json"), 404},
	} {
		if got := do(tc.method, tc.path); got != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, got, tc.want)
		}
	}
	for name, id := range ids {
		ag, err := store.Agent(ctx, catalog.ScopeAll, id)
		if err != nil || len(ag.Collections) != 1 || ag.Collections[0] != "Sea" {
			t.Errorf("%s in %v (%v), want in Sea", name, ag.Collections, err)
		}
	}
	if got := do("DELETE", "/api/v1/collections/Sea/agents/"+url.PathEscape(urn)); got != 204 {
		t.Errorf("DELETE by identifier: %d", got)
	}
	if ag, _ := store.Agent(ctx, catalog.ScopeAll, ids["tides"]); len(ag.Collections) != 0 {
		t.Errorf("tides still in %v", ag.Collections)
	}
}
