package sources_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/api"
	"github.com/a2aregistry/registry/internal/ard"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/sources"
)

// peerRegistry is a registry of this kind on loopback: its own catalog,
// its JSON API (the change feed) and ARD door, behind a bearer token.
type peerRegistry struct {
	store *catalog.Store
	srv   *httptest.Server
	reg   *crawler.Registrar
	id    string
}

const peerToken = "peer-s3cret-token"

func newPeerRegistry(t *testing.T, token string) *peerRegistry {
	t.Helper()
	store := catalogtest.SQLite(t)
	id, err := store.RegistryID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	api.New(api.Options{Catalog: store, RegistryID: id}).Mount(e)
	ard.New(ard.Options{Catalog: store, RegistryID: id, ChangeFeedPath: api.BasePath + "/changes"}).Mount(e)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"code":"unauthorized","message":"sign in"}}`))
			return
		}
		e.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Timeout: 5 * time.Second})
	t.Cleanup(client.CloseIdleConnections)
	return &peerRegistry{store: store, srv: srv, id: id, reg: crawler.NewRegistrar(crawler.NewFetcher(client, 0), store, card.Limits{}, nil)}
}

// register catalogues the cards at the peer (via nil: registered by a
// person) and returns their ids.
func (p *peerRegistry) register(t *testing.T, via *catalog.Via, urls ...string) []string {
	t.Helper()
	regs := make([]crawler.Registration, len(urls))
	for i, u := range urls {
		regs[i] = crawler.Registration{Input: u, Via: via}
	}
	out := p.reg.RegisterMany(t.Context(), person, catalog.ScopeAll, regs, 4)
	ids := make([]string, len(out))
	for i, o := range out {
		if o.Err != nil {
			t.Fatalf("registering %s at the peer: %v", urls[i], o.Err)
		}
		ids[i] = o.Result.Agent.ID
	}
	return ids
}

func agentAt(t *testing.T, s *catalog.Store, cardURL string) catalog.Agent {
	t.Helper()
	a, err := s.AgentByURL(t.Context(), cardURL)
	if err != nil {
		t.Fatalf("agent %s: %v", cardURL, err)
	}
	return a
}

func refresh(t *testing.T, svc *sources.Service, id string) catalog.Source {
	t.Helper()
	src, err := svc.Refresh(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestFederationChangeFeed: a peer registry of this kind, behind a bearer
// token, is followed through its change feed: its agents come in with
// provenance federatedFrom (cards fetched here), the ones it knows only
// by federation are skipped, a removal at the peer withdraws the agent
// here (history kept) unless something else vouches for it, and the
// token is never shown.
func TestFederationChangeFeed(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := t.Context()
		f := newFleet(t)
		card := func(name string) string { return f.srv.URL + "/cards/" + name }
		peer := newPeerRegistry(t, peerToken)
		ids := peer.register(t, nil, card("a"), card("b"), card("c"))
		// d came to the peer from yet another registry: not taken onward.
		peer.register(t, &catalog.Via{Kind: catalog.ProvenanceSource, SourceID: "elsewhere", SourceURL: "https://other.example",
			EntryID: "urn:air:127.0.0.1:x:d", Relation: catalog.RelationFederatedFrom}, card("d"))

		svc := newService(t, s, sources.Config{})
		src, err := svc.Add(ctx, person, sources.Request{URL: peer.srv.URL, Kind: catalog.SourceRegistry, Token: peerToken})
		if err != nil {
			t.Fatal(err)
		}
		got := refresh(t, svc, src.ID)
		if got.Status != catalog.SourceOK || got.ResolvedVia != sources.ViaChangeFeed || got.PeerID != peer.id ||
			got.PeerURL != peer.srv.URL+"/ard/v1/" || got.Cursor == "" || got.EntryCount != 4 {
			t.Fatalf("peer source after its first sync: %+v", got)
		}
		_, entries, err := svc.Get(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		if e := byID(entries)[urnOf(t, card("d"))+"|skipped"]; e.Reason != sources.ReasonFederatedByPeer {
			t.Errorf("d's entry %+v, want skipped %s", e, sources.ReasonFederatedByPeer)
		}
		if n := searchProvenance(t, s, catalog.RelationFederatedFrom); n != 3 {
			t.Errorf("%d agents federatedFrom, want 3", n)
		}
		if _, err := s.AgentByURL(ctx, card("d")); err == nil {
			t.Error("d, which the peer only federates, was taken onward")
		}
		a := agentAt(t, s, card("a"))
		prov, err := s.AgentProvenance(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(prov) != 1 || prov[0].Relation != catalog.RelationFederatedFrom || prov[0].SourceID != src.ID {
			t.Errorf("provenance of a: %+v", prov)
		}
		if f.hitsOf("/cards/a") < 2 {
			t.Error("a's card was not fetched by this registry itself")
		}
		// This registry's own feed marks them federated.
		ch, err := s.Changes(ctx, catalog.ScopeAll, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range ch {
			if !c.Federated {
				t.Errorf("change %+v of an agent known only from the peer is not marked federated", c)
			}
		}

		// c is also in a manifest of ours: a removal at the peer leaves it.
		f.set("/m.json", manifest(a2a(f, "c")))
		man, err := svc.Add(ctx, person, sources.Request{URL: f.srv.URL + "/m.json"})
		if err != nil {
			t.Fatal(err)
		}
		refresh(t, svc, man.ID)
		for _, id := range ids[1:] {
			if err := peer.store.RemoveAgent(ctx, person, id); err != nil {
				t.Fatal(err)
			}
		}
		peer.register(t, nil, card("e"))
		got = refresh(t, svc, src.ID)
		if got.Status != catalog.SourceOK || got.EntryCount != 3 {
			t.Fatalf("peer source after the removals: %+v", got)
		}
		if b := agentAt(t, s, card("b")); b.Removed == nil || b.Removed.Withdrawn == "" {
			t.Errorf("b, removed at the peer, is %+v here; want withdrawn", b)
		}
		if c := agentAt(t, s, card("c")); c.Removed != nil {
			t.Errorf("c, which a manifest vouches for, was withdrawn: %+v", c.Removed)
		}
		if e := agentAt(t, s, card("e")); e.Removed != nil {
			t.Errorf("e, new at the peer: %+v", e)
		}
		prov, err = s.AgentProvenance(ctx, agentAt(t, s, card("b")).ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(prov) != 1 || prov[0].EndedAt == nil || prov[0].Relation != catalog.RelationFederatedFrom {
			t.Errorf("b's history: %+v, want its federatedFrom row ended", prov)
		}
		if n := searchProvenance(t, s, catalog.RelationFederatedFrom); n != 2 {
			t.Errorf("%d agents federatedFrom after the removals, want 2 (a, e)", n)
		}

		// The token: sealed at rest (catalog test), needed by the peer,
		// never in the API's answers.
		e := echo.New()
		api.New(api.Options{Catalog: s, Sources: svc}).Mount(e)
		for _, path := range []string{"/api/v1/sources", "/api/v1/sources/" + src.ID} {
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), peerToken) || !strings.Contains(rec.Body.String(), `"token_set":true`) {
				t.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
			}
		}
		bare, err := svc.Add(ctx, person, sources.Request{URL: peer.srv.URL + "/ard/v1/", Kind: catalog.SourceRegistry})
		if err != nil {
			t.Fatal(err)
		}
		if got := refresh(t, svc, bare.ID); got.Status != catalog.SourceFailed || got.Problem != crawler.ClassHTTP401 {
			t.Errorf("without the token: %+v, want failed %s", got, crawler.ClassHTTP401)
		}
	})
}

func urnOf(t *testing.T, cardURL string) string {
	t.Helper()
	u, err := card.URNOf(cardURL)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// fakePeer is a peer registry that misbehaves on purpose: an ARD manifest
// naming it (with a change feed when feed is set) and handlers of its
// own for the feed and GET /agents.
type fakePeer struct {
	srv    *httptest.Server
	id     string
	feed   func(w http.ResponseWriter, since int64)
	agents func(w http.ResponseWriter, token string)
}

func newFakePeer(t *testing.T, p *fakePeer) *fakePeer {
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/ard.json":
			meta := map[string]string{"registry_id": p.id}
			if p.feed != nil {
				meta["change_feed"] = p.srv.URL + "/feed"
			}
			json.NewEncoder(w).Encode(map[string]any{"entries": []any{map[string]any{"identifier": "urn:air:127.0.0.1:registry:ard",
				"displayName": "fake", "type": sources.TypeRegistry, "url": p.srv.URL + "/ard/v1/", "metadata": meta}}})
		case "/feed":
			since, _ := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
			p.feed(w, since)
		case "/ard/v1/agents":
			p.agents(w, r.URL.Query().Get("pageToken"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(p.srv.Close)
	return p
}

type feedItem struct {
	Seq     int64  `json:"seq"`
	Kind    string `json:"kind"`
	AgentID string `json:"agent_id"`
	CardURL string `json:"card_url"`
}

func writeFeed(w http.ResponseWriter, next int64, items ...feedItem) {
	if items == nil {
		items = []feedItem{}
	}
	json.NewEncoder(w).Encode(map[string]any{"items": items, "next_since": next})
}

func ardItem(cardURL string) map[string]any {
	return map[string]any{"identifier": "urn:air:127.0.0.1:cards:" + cardURL[strings.LastIndexByte(cardURL, '/')+1:],
		"displayName": "x", "type": sources.TypeA2ACard, "url": cardURL}
}

// TestFederationMisbehavingPeers: each bad peer gets a clear status, and
// changes nothing else.
func TestFederationMisbehavingPeers(t *testing.T) {
	f := newFleet(t)
	cardAt := func(n int) string { return f.srv.URL + "/cards/m" + strconv.Itoa(n) }
	items := func(from, n int) []feedItem {
		var out []feedItem
		for i := from; i < from+n; i++ {
			out = append(out, feedItem{Seq: int64(i), Kind: catalog.ChangeCreated, AgentID: "x", CardURL: cardAt(i)})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		peer fakePeer
		cfg  sources.Config
		// first, when set, is a sync that succeeds before the bad one.
		first   bool
		status  string
		problem string
		// agents is how many agents the catalog holds after the bad sync.
		agents int
		// registered are card URLs a person registers here first.
		registered []string
		check      func(t *testing.T, src catalog.Source, entries []catalog.SourceEntry)
	}{
		{name: "feed not JSON", peer: fakePeer{feed: func(w http.ResponseWriter, _ int64) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>hello</html>"))
		}}, status: catalog.SourceFailed, problem: crawler.ClassNotJSON},
		{name: "feed page not a change list", peer: fakePeer{feed: func(w http.ResponseWriter, _ int64) {
			w.Write([]byte(`{"entries":[]}`))
		}}, status: catalog.SourceFailed, problem: sources.ProblemBadPage},
		{name: "huge feed page", peer: fakePeer{feed: func(w http.ResponseWriter, _ int64) {
			w.Write([]byte(`{"items":[],"pad":"` + strings.Repeat("x", 2<<20) + `"}`))
		}}, status: catalog.SourceFailed, problem: crawler.ClassTooLarge},
		{name: "cursor goes backwards", first: true, peer: fakePeer{feed: func(w http.ResponseWriter, since int64) {
			switch {
			case since == 0:
				writeFeed(w, 2, items(1, 2)...)
			case since == 2 && calls(w):
				writeFeed(w, 2)
			default:
				writeFeed(w, 1)
			}
		}}, status: catalog.SourceFailed, problem: sources.ProblemCursorBackwards, agents: 2},
		{name: "seq outside the page", peer: fakePeer{feed: func(w http.ResponseWriter, since int64) {
			writeFeed(w, 5, feedItem{Seq: 9, Kind: catalog.ChangeCreated, CardURL: cardAt(1)})
		}}, status: catalog.SourceFailed, problem: sources.ProblemCursorBackwards},
		{name: "private card URL", peer: fakePeer{feed: func(w http.ResponseWriter, since int64) {
			if since > 0 {
				writeFeed(w, since)
				return
			}
			writeFeed(w, 2, feedItem{Seq: 1, Kind: catalog.ChangeCreated, CardURL: "http://10.1.2.3/card.json"},
				feedItem{Seq: 2, Kind: catalog.ChangeCreated, CardURL: cardAt(1)})
		}}, status: catalog.SourceOK, agents: 1, check: func(t *testing.T, _ catalog.Source, entries []catalog.SourceEntry) {
			if e := byID(entries)[urnOf(t, "http://10.1.2.3/card.json")+"|skipped"]; e.Reason != crawler.ClassBlockedAddress {
				t.Errorf("private entry %+v", e)
			}
		}},
		{name: "removal of an agent it never listed", peer: fakePeer{feed: func(w http.ResponseWriter, since int64) {
			if since > 0 {
				writeFeed(w, since)
				return
			}
			writeFeed(w, 1, feedItem{Seq: 1, Kind: catalog.ChangeRemoved, CardURL: cardAt(50)})
		}}, registered: []string{cardAt(50)}, status: catalog.SourceOK, agents: 1},
		{name: "self", peer: fakePeer{id: "self", feed: func(w http.ResponseWriter, _ int64) { writeFeed(w, 0) }},
			status: catalog.SourceFailed, problem: sources.ProblemSelf},
		{name: "feed that never ends", cfg: sources.Config{MaxPeerEntries: 20}, peer: fakePeer{feed: func(w http.ResponseWriter, since int64) {
			writeFeed(w, since+10, items(int(since)+1, 10)...)
		}}, status: catalog.SourceOK, agents: 20, check: func(t *testing.T, src catalog.Source, _ []catalog.SourceEntry) {
			if src.Cursor != "20" || time.Until(src.NextCheckAt) > time.Second || !strings.Contains(src.Message, "reads on") {
				t.Errorf("a capped sync: %+v", src)
			}
		}},
		{name: "slow feed", cfg: sources.Config{SyncTimeout: 200 * time.Millisecond}, peer: fakePeer{feed: func(w http.ResponseWriter, _ int64) {
			time.Sleep(time.Second)
			writeFeed(w, 0)
		}}, status: catalog.SourceFailed, problem: sources.ProblemSyncTimeout},
		{name: "ARD pages forever", cfg: sources.Config{MaxPeerEntries: 20}, peer: fakePeer{agents: func(w http.ResponseWriter, token string) {
			n, _ := strconv.Atoi(token)
			json.NewEncoder(w).Encode(map[string]any{"items": []any{ardItem(cardAt(n))}, "pageToken": strconv.Itoa(n + 1)})
		}}, status: catalog.SourceFailed, problem: sources.ProblemTooManyEntries},
		{name: "ARD page token loop", peer: fakePeer{agents: func(w http.ResponseWriter, token string) {
			json.NewEncoder(w).Encode(map[string]any{"items": []any{ardItem(cardAt(1))}, "pageToken": "again"})
		}}, status: catalog.SourceFailed, problem: sources.ProblemPagingLoop},
		{name: "ARD page fails after a good one", first: true, peer: fakePeer{agents: func(w http.ResponseWriter, token string) {
			switch {
			case token == "" && calls(w):
				json.NewEncoder(w).Encode(map[string]any{"items": []any{ardItem(cardAt(1)), ardItem(cardAt(2))}})
			case token == "":
				json.NewEncoder(w).Encode(map[string]any{"items": []any{ardItem(cardAt(1))}, "pageToken": "2"})
			default:
				w.WriteHeader(http.StatusInternalServerError)
			}
		}}, status: catalog.SourceFailed, problem: crawler.ClassHTTP5xx, agents: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := catalogtest.SQLite(t)
			if tc.peer.id == "self" {
				id, err := s.RegistryID(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				tc.peer.id = id
			}
			callsMu.Lock()
			firstDone = false
			callsMu.Unlock()
			p := newFakePeer(t, &tc.peer)
			svc := newService(t, s, tc.cfg)
			for _, u := range tc.registered {
				client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
				if _, err := crawler.NewRegistrar(crawler.NewFetcher(client, 0), s, card.Limits{}, nil).Register(t.Context(), person, catalog.ScopeAll, u); err != nil {
					t.Fatal(err)
				}
			}
			src, err := svc.Add(t.Context(), person, sources.Request{URL: p.srv.URL + "/ard/v1/", Kind: catalog.SourceRegistry})
			if err != nil {
				t.Fatal(err)
			}
			if tc.first {
				if got := refresh(t, svc, src.ID); got.Status != catalog.SourceOK {
					t.Fatalf("the good sync: %+v", got)
				}
				callsMu.Lock()
				firstDone = true
				callsMu.Unlock()
			}
			got := refresh(t, svc, src.ID)
			if got.Status != tc.status || got.Problem != tc.problem || got.Message == "" {
				t.Errorf("source %+v, want %s %q", got, tc.status, tc.problem)
			}
			page, err := s.Search(t.Context(), catalog.Query{Scope: catalog.ScopeAll})
			if err != nil {
				t.Fatal(err)
			}
			if page.Total != tc.agents {
				t.Errorf("%d agents listed after the sync, want %d", page.Total, tc.agents)
			}
			if tc.check != nil {
				_, entries, err := svc.Get(t.Context(), src.ID)
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, got, entries)
			}
		})
	}
}

// calls tells, in a peer's handler, whether the test's good first sync is
// still under way (true) or the bad one has begun.
var (
	callsMu   sync.Mutex
	firstDone bool
)

func calls(http.ResponseWriter) bool {
	callsMu.Lock()
	defer callsMu.Unlock()
	return !firstDone
}

// TestFederationARDRegistry: any ARD registry is paged through GET
// /agents; an agent missing from a complete sync is withdrawn, a failed
// sync changes nothing.
func TestFederationARDRegistry(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := t.Context()
		f := newFleet(t)
		card := func(n int) string { return f.srv.URL + "/cards/r" + strconv.Itoa(n) }
		var mu sync.Mutex
		listed := []map[string]any{ardItem(card(1)), ardItem(card(2)), ardItem(card(3)), ardItem(card(4)), ardItem(card(5))}
		fed := ardItem(card(6))
		fed["metadata"] = map[string]string{"provenance": catalog.RelationFederatedFrom}
		listed = append(listed, fed, map[string]any{"identifier": "urn:air:127.0.0.1:mcp:x", "displayName": "m",
			"type": "application/mcp-server-card+json", "url": card(7)})
		broken := false
		// Pages of two, with an opaque token: the offset.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			if r.URL.Path != "/ard/v1/agents" {
				http.NotFound(w, r)
				return
			}
			if n, _ := strconv.Atoi(r.URL.Query().Get("pageSize")); n < 1 || n > 100 {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			off, _ := strconv.Atoi(r.URL.Query().Get("pageToken"))
			if broken && off > 0 {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			end := min(off+2, len(listed))
			body := map[string]any{"items": listed[off:end], "total": len(listed)}
			if end < len(listed) {
				body["pageToken"] = strconv.Itoa(end)
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(body)
		}))
		defer srv.Close()
		svc := newService(t, s, sources.Config{})
		src, err := svc.Add(ctx, person, sources.Request{URL: srv.URL + "/ard/v1", Kind: catalog.SourceRegistry})
		if err != nil {
			t.Fatal(err)
		}
		got := refresh(t, svc, src.ID)
		if got.Status != catalog.SourceOK || got.ResolvedVia != sources.ViaARDAgents || got.EntryCount != 7 {
			t.Fatalf("first sync: %+v", got)
		}
		if n := searchProvenance(t, s, catalog.RelationFederatedFrom); n != 5 {
			t.Errorf("%d agents federatedFrom, want 5", n)
		}
		_, entries, _ := svc.Get(ctx, src.ID)
		m := byID(entries)
		if e := m["urn:air:127.0.0.1:cards:r6|skipped"]; e.Reason != sources.ReasonFederatedByPeer {
			t.Errorf("the peer's federated entry: %+v", e)
		}
		if e := m["urn:air:127.0.0.1:mcp:x|skipped"]; e.Reason != sources.ReasonNotA2A {
			t.Errorf("the MCP entry: %+v", e)
		}

		// A failed page: nothing changes, though r2 is gone from the list.
		mu.Lock()
		listed = append(listed[:1], listed[2:]...)
		broken = true
		mu.Unlock()
		if got := refresh(t, svc, src.ID); got.Status != catalog.SourceFailed || got.Problem != crawler.ClassHTTP5xx {
			t.Errorf("a sync with a failed page: %+v", got)
		}
		if a := agentAt(t, s, card(2)); a.Removed != nil {
			t.Error("a failed sync withdrew r2")
		}
		// A complete sync: r2 is withdrawn, history kept.
		mu.Lock()
		broken = false
		mu.Unlock()
		if got := refresh(t, svc, src.ID); got.Status != catalog.SourceOK {
			t.Fatalf("complete sync: %+v", got)
		}
		if a := agentAt(t, s, card(2)); a.Removed == nil || a.Removed.Withdrawn == "" {
			t.Errorf("r2, gone from a complete sync: %+v", a)
		}
		if n := searchProvenance(t, s, catalog.RelationFederatedFrom); n != 4 {
			t.Errorf("%d agents federatedFrom, want 4", n)
		}
	})
}

// TestFederationFromManifest: a manifest's registry entry makes a peer
// source of its own, which federates; when the entry leaves the manifest
// the peer source goes, and the agents only it vouched for are withdrawn.
func TestFederationFromManifest(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := t.Context()
		f := newFleet(t)
		peer := newPeerRegistry(t, "")
		peer.register(t, nil, f.srv.URL+"/cards/p1", f.srv.URL+"/cards/p2")
		reg := entry{Identifier: "urn:air:127.0.0.1:registry:ard", DisplayName: "peer", Type: sources.TypeRegistry, URL: peer.srv.URL + "/ard/v1/"}
		f.set("/m.json", manifest(a2a(f, "own"), reg))
		svc := newService(t, s, sources.Config{})
		src, err := svc.Add(ctx, person, sources.Request{URL: f.srv.URL + "/m.json"})
		if err != nil {
			t.Fatal(err)
		}
		refresh(t, svc, src.ID)
		_, entries, _ := svc.Get(ctx, src.ID)
		if e := byID(entries)["urn:air:127.0.0.1:registry:ard|followed"]; !strings.Contains(e.Message, "source") {
			t.Fatalf("the registry entry: %+v", e)
		}
		all, err := svc.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var child catalog.Source
		for _, c := range all {
			if c.ParentID == src.ID {
				child = c
			}
		}
		if child.Kind != catalog.SourceRegistry || child.URL != peer.srv.URL+"/ard/v1/" {
			t.Fatalf("sources: %+v", all)
		}
		if got := refresh(t, svc, child.ID); got.Status != catalog.SourceOK || got.ResolvedVia != sources.ViaChangeFeed {
			t.Fatalf("the peer source: %+v", got)
		}
		if n := searchProvenance(t, s, catalog.RelationFederatedFrom); n != 2 {
			t.Errorf("%d agents federatedFrom, want 2", n)
		}
		f.set("/m.json", manifest(a2a(f, "own")))
		refresh(t, svc, src.ID)
		if _, err := svc.Refresh(ctx, child.ID); err == nil {
			t.Error("the peer source outlived its manifest entry")
		}
		if a := agentAt(t, s, f.srv.URL+"/cards/p1"); a.Removed == nil {
			t.Error("p1 outlived the peer source that alone vouched for it")
		}
	})
}
