package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// testActor is who the tests write as.
var testActor = catalog.System("test")

// The real implementations satisfy the interfaces the handlers declare.
var (
	_ Catalog   = (*catalog.Store)(nil)
	_ Registrar = (*crawler.Registrar)(nil)
	_ Refresher = (*crawler.Crawler)(nil)
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
			res, err := store.Upsert(ctx, testActor, catalog.UpsertInput{
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
		for _, tag := range first.Facets[catalog.FieldTag] {
			if got := decodeJSON[CompletionsResponse](t, get("/api/v1/completions?q="+url.QueryEscape(tag.Value), nil)); len(got.Completions) == 0 {
				t.Errorf("no completion of the tag %q", tag.Value)
			}
		}

		for _, id := range ids {
			d := decodeJSON[AgentDetail](t, get("/api/v1/agents/"+id, nil))
			// Registered but never checked: due now, no history.
			if r := d.HealthReport; r.State != d.Health || r.LastCheckAt != nil || r.NextCheckAt == nil || r.Uptime24h != nil || r.Paused {
				t.Errorf("health_report of %s = %+v (health %s)", id, r, d.Health)
			}
			raw := get("/api/v1/agents/"+id+"/card", nil)
			get("/api/v1/agents/"+id+"/card", map[string]string{"If-None-Match": raw.Header().Get("ETag")})
			get("/api/v1/agents/"+id+"/versions", nil)
			get("/api/v1/agents/"+id+"/versions/1", nil)
			if rec := env.do(t, http.MethodGet, "/api/v1/agents/"+id+"/versions/2", "", nil); rec.Code != http.StatusNotFound {
				t.Errorf("unknown version = %d", rec.Code)
			}
		}
		// The feed, walked in small pages, lists each registration once, in order.
		var created []string
		since := int64(0)
		for range len(ids) + 2 {
			l := decodeJSON[ChangeList](t, get(fmt.Sprintf("/api/v1/changes?since=%d&limit=3", since), nil))
			for _, c := range l.Items {
				if c.Seq <= since || c.Kind != catalog.ChangeCreated || c.Version != 1 {
					t.Errorf("change after %d: %+v", since, c)
				}
				since = c.Seq
				created = append(created, c.AgentID)
			}
			if l.NextSince != since {
				t.Errorf("next_since = %d, want %d", l.NextSince, since)
			}
			if len(l.Items) < 3 {
				break
			}
		}
		if !slices.Equal(created, ids) {
			t.Errorf("feed created %v, registered %v", created, ids)
		}
		// Every number of the security report is what its search link lists.
		rep := decodeJSON[SecurityReport](t, get("/api/v1/reports/security", nil))
		if rep.Agents != len(ids) || len(rep.Signature) == 0 || len(rep.SecurityScheme) == 0 {
			t.Errorf("security report = %+v, stored %d", rep, len(ids))
		}
		counts := append(append(append([]ReportCount{rep.Anonymous, rep.KeyChanges, rep.PlainHTTP, rep.PublisherVerified}, rep.Signature...), rep.SecurityScheme...), rep.Findings...)
		if len(rep.Severity) != 3 || rep.Severity[0].Query != "severity=error" {
			t.Errorf("severity counts = %+v, want error, warning and info", rep.Severity)
		}
		counts = append(counts, rep.Severity...)
		counts = append(counts, rep.RecentKeyChanges)
		for _, c := range counts {
			if l := decodeJSON[SearchResponse](t, get(c.Search, nil)); l.Total != c.Count {
				t.Errorf("%s counts %d, its search lists %d", c.Search, c.Count, l.Total)
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

// TestRefreshAgainstStore drives registration, refreshes and the change
// feed through the real registrar, crawler and catalog, with an agent on
// loopback that changes its card, fails, and finally goes away.
func TestRefreshAgainstStore(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		cards := make([][]byte, 2)
		for i, f := range []string{"../card/testdata/v10_proto.json", "../card/testdata/v03_full.json"} {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cards[i] = raw
		}
		var mode atomic.Value // "card0", "card1" or a status to answer
		mode.Store("card0")
		agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch m := mode.Load().(string); m {
			case "card0", "card1":
				w.Header().Set("Content-Type", "application/json")
				w.Write(cards[m[4]-'0'])
			case "503":
				http.Error(w, "maintenance", http.StatusServiceUnavailable)
			case "410":
				http.Error(w, "gone", http.StatusGone)
			}
		}))
		t.Cleanup(agent.Close)

		client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			Timeout: 2 * time.Second})
		t.Cleanup(client.CloseIdleConnections)
		fetcher := crawler.NewFetcher(client, 0)
		env := testEnv{e: echo.New()}
		New(Options{
			Catalog:   store,
			Registrar: crawler.NewRegistrar(fetcher, store, card.DefaultLimits(), nil),
			// Registering is a check too; a minimum interval of 1 ns lets
			// the test check again at once (TestRefreshThrottledAgainstStore
			// covers the real one).
			Refresher: crawler.New(crawler.Config{Rand: func() float64 { return 0 }, MinInterval: time.Nanosecond}, store, fetcher, nil),
			Logger:    slog.New(slog.DiscardHandler),
		}).Mount(env.e)
		do := func(method, target string, body string, want int) *httptest.ResponseRecorder {
			t.Helper()
			var h map[string]string
			if body != "" {
				h = map[string]string{"Content-Type": "application/json"}
			}
			rec := env.do(t, method, target, body, h)
			if rec.Code != want {
				t.Fatalf("%s %s = %d, want %d: %s", method, target, rec.Code, want, rec.Body)
			}
			return rec
		}
		changes := func(since int64) ChangeList {
			t.Helper()
			return decodeJSON[ChangeList](t, do(http.MethodGet, fmt.Sprintf("/api/v1/changes?since=%d", since), "", http.StatusOK))
		}

		d := decodeJSON[AgentDetail](t, do(http.MethodPost, "/api/v1/agents", `{"url":"`+agent.URL+`"}`, http.StatusCreated))
		id, refresh := d.ID, "/api/v1/agents/"+d.ID+"/refresh"
		feed := changes(0)
		if len(feed.Items) != 1 || feed.Items[0].Kind != catalog.ChangeCreated || feed.Items[0].AgentID != id {
			t.Fatalf("feed after registration = %+v", feed)
		}

		mode.Store("card1")
		d = decodeJSON[AgentDetail](t, do(http.MethodPost, refresh, "", http.StatusOK))
		if r := d.HealthReport; d.CurrentVersion != 2 || r.State != catalog.HealthUp || r.LastCheckAt == nil ||
			r.LastSuccessAt == nil || r.LastError != nil || r.Uptime24h == nil || *r.Uptime24h != 1 {
			t.Errorf("after a changed card: version %d, health_report %+v", d.CurrentVersion, r)
		}
		next := changes(feed.NextSince)
		if len(next.Items) != 1 || next.Items[0].Kind != catalog.ChangeUpdated || next.Items[0].Version != 2 {
			t.Errorf("feed after a new version = %+v", next)
		}

		mode.Store("503")
		d = decodeJSON[AgentDetail](t, do(http.MethodPost, refresh, "", http.StatusOK))
		r := d.HealthReport
		if r.LastError == nil || r.LastError.Class != crawler.ClassHTTP5xx || r.LastError.Status != http.StatusServiceUnavailable ||
			r.ConsecutiveFailures != 1 || r.LastCheckAt == nil || !r.LastError.At.Equal(*r.LastCheckAt) ||
			r.Uptime24h == nil || *r.Uptime24h != 2.0/3 { // registering was the first check
			t.Errorf("after a failed check: health_report %+v (last_error %+v)", r, r.LastError)
		}
		if after := changes(next.NextSince); len(after.Items) != 0 || after.NextSince != next.NextSince {
			t.Errorf("a failed check changed the feed: %+v", after)
		}

		mode.Store("410")
		d = decodeJSON[AgentDetail](t, do(http.MethodPost, refresh, "", http.StatusOK))
		if d.Health != catalog.HealthRemoved || d.HealthReport.State != catalog.HealthRemoved {
			t.Errorf("after 410: health %s, report %+v", d.Health, d.HealthReport)
		}
		gone := changes(next.NextSince)
		if len(gone.Items) != 1 || gone.Items[0].Kind != catalog.ChangeRemoved || gone.Items[0].AgentID != id {
			t.Errorf("feed after 410 = %+v", gone)
		}
		if s := decodeJSON[SearchResponse](t, do(http.MethodGet, "/api/v1/agents", "", http.StatusOK)); s.Total != 0 {
			t.Errorf("removed agent still listed: %+v", s.Items)
		}

		do(http.MethodPost, "/api/v1/agents/no-such-agent/refresh", "", http.StatusNotFound)
	})
}

// TestRefreshThrottledAgainstStore: registering is a check, so a refresh
// right after it is inside --crawl-min-interval: 429 with Retry-After, and
// the agent is not fetched again.
func TestRefreshThrottledAgainstStore(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		raw, err := os.ReadFile("../card/testdata/v10_proto.json")
		if err != nil {
			t.Fatal(err)
		}
		var fetches atomic.Int32
		agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fetches.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.Write(raw)
		}))
		t.Cleanup(agent.Close)
		client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
		t.Cleanup(client.CloseIdleConnections)
		fetcher := crawler.NewFetcher(client, 0)
		env := testEnv{e: echo.New()}
		New(Options{
			Catalog:   store,
			Registrar: crawler.NewRegistrar(fetcher, store, card.DefaultLimits(), nil),
			Refresher: crawler.New(crawler.Config{MinInterval: 5 * time.Minute}, store, fetcher, nil),
			Logger:    slog.New(slog.DiscardHandler),
		}).Mount(env.e)
		rec := env.do(t, http.MethodPost, "/api/v1/agents", `{"url":"`+agent.URL+`"}`, map[string]string{"Content-Type": "application/json"})
		if rec.Code != http.StatusCreated {
			t.Fatalf("register = %d: %s", rec.Code, rec.Body)
		}
		id := decodeJSON[AgentDetail](t, rec).ID
		before := fetches.Load()
		for range 20 {
			rec = env.do(t, http.MethodPost, "/api/v1/agents/"+id+"/refresh", "", nil)
			if rec.Code != http.StatusTooManyRequests {
				t.Fatalf("refresh = %d, want 429: %s", rec.Code, rec.Body)
			}
		}
		if n, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || n < 1 || n > 300 {
			t.Errorf("Retry-After = %q, want 1..300 seconds", rec.Header().Get("Retry-After"))
		}
		if got := fetches.Load(); got != before {
			t.Errorf("%d fetches after the refused refreshes, want none", got-before)
		}
	})
}
