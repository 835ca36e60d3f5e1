package sources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/sources"
)

const cardTmpl = `{"name":"%s","description":"an agent","version":"1",
"supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`

// fleet is a loopback publisher: cards under /cards/NAME, manifests set
// per path, request counts per path.
type fleet struct {
	srv       *httptest.Server
	mu        sync.Mutex
	manifests map[string]string
	headers   map[string]http.Header
	hits      map[string]int
	manifest  atomic.Int32
}

func newFleet(t *testing.T) *fleet {
	f := &fleet{manifests: map[string]string{}, headers: map[string]http.Header{}, hits: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.hits[r.URL.Path]++
		body, ok := f.manifests[r.URL.Path]
		h := f.headers[r.URL.Path]
		f.mu.Unlock()
		for k, v := range h {
			w.Header()[k] = v
		}
		if name, isCard := strings.CutPrefix(r.URL.Path, "/cards/"); isCard {
			fmt.Fprintf(w, cardTmpl, name)
			return
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		etag := fmt.Sprintf(`"%x"`, len(body))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fleet) set(path, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.manifests[path] = body
}

func (f *fleet) hitsOf(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[path]
}

type entry struct {
	Identifier    string         `json:"identifier"`
	DisplayName   string         `json:"displayName"`
	Type          string         `json:"type"`
	URL           string         `json:"url,omitempty"`
	Tags          []string       `json:"tags,omitempty"`
	Queries       []string       `json:"representativeQueries,omitempty"`
	TrustManifest map[string]any `json:"trustManifest,omitempty"`
}

func manifest(entries ...entry) string {
	b, _ := json.Marshal(map[string]any{"specVersion": "1.0", "entries": entries})
	return string(b)
}

func a2a(f *fleet, name string) entry {
	return entry{Identifier: "urn:air:127.0.0.1:test:" + name, DisplayName: name, Type: sources.TypeA2ACard,
		URL: f.srv.URL + "/cards/" + name, Tags: []string{"t-" + name}, Queries: []string{"ask " + name, "find " + name}}
}

var person = catalog.User("alice")

func newService(t *testing.T, s *catalog.Store, cfg sources.Config) *sources.Service {
	// Tests allow loopback explicitly, as the crawler's tests do; every
	// other private range stays refused.
	client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		MaxBodyBytes: 1 << 20, Timeout: 5 * time.Second})
	t.Cleanup(client.CloseIdleConnections)
	reg := crawler.NewRegistrar(crawler.NewFetcher(client, 0), s, card.Limits{}, nil)
	return sources.New(s, reg, crawler.NewFetcher(client, 1<<20), client, cfg, nil)
}

func byID(entries []catalog.SourceEntry) map[string]catalog.SourceEntry {
	out := map[string]catalog.SourceEntry{}
	for _, e := range entries {
		out[e.Identifier+"|"+e.Outcome] = e
	}
	return out
}

func searchProvenance(t *testing.T, s *catalog.Store, value string) int {
	t.Helper()
	page, err := s.Search(t.Context(), catalog.Query{Filters: map[string][]string{catalog.FieldProvenance: {value}}, Scope: catalog.ScopeAll})
	if err != nil {
		t.Fatal(err)
	}
	return page.Total
}

func TestSourceManifest(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := t.Context()
		f := newFleet(t)
		mismatch := a2a(f, "liar")
		mismatch.TrustManifest = map[string]any{"identity": "https://evil.example"}
		private := entry{Identifier: "urn:air:10.1.2.3:test:private", DisplayName: "p", Type: sources.TypeA2ACard,
			URL: "http://10.1.2.3/cards/private"}
		f.set("/nested.json", manifest(a2a(f, "deep"),
			entry{Identifier: "urn:air:127.0.0.1:test:back", Type: sources.TypeCatalog, URL: f.srv.URL + "/ard.json"}))
		f.set("/ard.json", manifest(
			a2a(f, "one"), a2a(f, "two"), mismatch, private,
			entry{Identifier: "urn:air:127.0.0.1:test:mcp", Type: "application/mcp-server-card+json", URL: f.srv.URL + "/mcp.json"},
			entry{Identifier: "not-a-urn", Type: sources.TypeA2ACard, URL: f.srv.URL + "/cards/bad"},
			entry{Identifier: "urn:air:127.0.0.1:test:nested", Type: sources.TypeCatalog, URL: f.srv.URL + "/nested.json"},
		))
		svc := newService(t, s, sources.Config{Trust: sources.TrustFlag})
		src, err := svc.Add(ctx, person, sources.Request{URL: f.srv.URL + "/ard.json"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := svc.Refresh(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != catalog.SourceOK || got.ResolvedVia != sources.ViaManifest || got.EntryCount != 9 {
			t.Fatalf("source after check: %+v", got)
		}
		_, entries, err := svc.Get(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		m := byID(entries)
		for _, want := range []struct{ key, reason string }{
			{"urn:air:127.0.0.1:test:one|catalogued", ""},
			{"urn:air:127.0.0.1:test:two|catalogued", ""},
			{"urn:air:127.0.0.1:test:liar|catalogued", ""},
			{"urn:air:127.0.0.1:test:deep|catalogued", ""},
			{"urn:air:127.0.0.1:test:nested|followed", ""},
			{"urn:air:10.1.2.3:test:private|skipped", crawler.ClassBlockedAddress},
			{"urn:air:127.0.0.1:test:mcp|skipped", sources.ReasonNotA2A},
			{"not-a-urn|skipped", sources.ReasonInvalidURN},
			{"urn:air:127.0.0.1:test:back|skipped", sources.ReasonLoop},
		} {
			e, ok := m[want.key]
			if !ok || e.Reason != want.reason {
				t.Errorf("entry %s: %+v (present %v), want reason %q", want.key, e, ok, want.reason)
			}
		}
		if e := m["urn:air:127.0.0.1:test:liar|catalogued"]; e.TrustFlag != sources.ReasonPublisherMismatch {
			t.Errorf("liar's trust flag %q", e.TrustFlag)
		}
		one := m["urn:air:127.0.0.1:test:one|catalogued"]
		if len(one.RepresentativeQueries) != 2 || one.Tags[0] != "t-one" || one.AgentID == "" {
			t.Errorf("entry one kept %+v", one)
		}
		prov, err := s.AgentProvenance(ctx, one.AgentID)
		if err != nil {
			t.Fatal(err)
		}
		if len(prov) != 1 || prov[0].Kind != catalog.ProvenanceSource || prov[0].Relation != catalog.RelationPublishedFrom ||
			prov[0].SourceID != src.ID || prov[0].EntryID != "urn:air:127.0.0.1:test:one" {
			t.Errorf("provenance of one: %+v", prov)
		}
		if n := searchProvenance(t, s, catalog.RelationPublishedFrom); n != 4 {
			t.Errorf("%d agents with provenance publishedFrom, want 4", n)
		}

		// Unchanged: one conditional request, no card fetched.
		cards := f.hitsOf("/cards/one")
		if _, err := svc.Refresh(ctx, src.ID); err != nil {
			t.Fatal(err)
		}
		if f.hitsOf("/ard.json") != 2 || f.hitsOf("/cards/one") != cards {
			t.Errorf("re-check: manifest fetched %d times, card one %d → %d", f.hitsOf("/ard.json"), cards, f.hitsOf("/cards/one"))
		}

		// Entry two leaves: withdrawn, history kept; back when named again.
		two := m["urn:air:127.0.0.1:test:two|catalogued"].AgentID
		f.set("/ard.json", manifest(a2a(f, "one"), mismatch, private,
			entry{Identifier: "urn:air:127.0.0.1:test:nested", Type: sources.TypeCatalog, URL: f.srv.URL + "/nested.json"}))
		if _, err := svc.Refresh(ctx, src.ID); err != nil {
			t.Fatal(err)
		}
		rm, err := s.AgentRemoval(ctx, two)
		if err != nil || rm == nil || !strings.Contains(rm.Withdrawn, "left the manifest") {
			t.Fatalf("agent two after its entry left: %+v, %v", rm, err)
		}
		if n := searchProvenance(t, s, catalog.RelationPublishedFrom); n != 3 {
			t.Errorf("%d agents publishedFrom after a withdrawal, want 3", n)
		}
		if !hasEvent(t, s, catalog.EventWithdrawn, two, "left the manifest") || !hasEvent(t, s, catalog.ChangeRemoved, two, "") {
			t.Error("the withdrawal is not in the events (agent.withdrawn) and the feed (removed)")
		}
		if _, err := s.Agent(ctx, catalog.ScopeAll, two); err != nil {
			t.Errorf("admins read a withdrawn agent: %v", err)
		}
		f.set("/ard.json", manifest(a2a(f, "one"), a2a(f, "two"), mismatch,
			entry{Identifier: "urn:air:127.0.0.1:test:nested", Type: sources.TypeCatalog, URL: f.srv.URL + "/nested.json"}))
		if _, err := svc.Refresh(ctx, src.ID); err != nil {
			t.Fatal(err)
		}
		if rm, err := s.AgentRemoval(ctx, two); err != nil || rm != nil {
			t.Errorf("agent two named again: removal %+v, %v", rm, err)
		}

		// A person's registration vouches on its own: deleting the source
		// withdraws the others only.
		reg := crawler.NewRegistrar(crawler.NewFetcher(safehttp.New(safehttp.Config{
			AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}), 0), s, card.Limits{}, nil)
		if _, err := reg.Register(ctx, person, catalog.ScopeAll, f.srv.URL+"/cards/one"); err != nil {
			t.Fatal(err)
		}
		withdrawn, err := svc.Delete(ctx, person, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(withdrawn) != 3 {
			t.Errorf("deleting the source withdrew %d agents, want 3 (two, liar, deep)", len(withdrawn))
		}
		if rm, err := s.AgentRemoval(ctx, one.AgentID); err != nil || rm != nil {
			t.Errorf("registered agent one after its source's deletion: %+v, %v", rm, err)
		}
		prov, _ = s.AgentProvenance(ctx, one.AgentID)
		if len(prov) != 2 || prov[0].Active() || !prov[1].Active() || prov[1].Kind != catalog.ProvenanceRegistered || prov[1].By != "alice" {
			t.Errorf("provenance of one after deletion: %+v", prov)
		}
		if n := searchProvenance(t, s, catalog.ProvenanceRegistered); n != 1 {
			t.Errorf("%d registered agents, want 1", n)
		}
	})
}

func TestSourceTrustReject(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		f := newFleet(t)
		e := a2a(f, "liar")
		e.TrustManifest = map[string]any{"identity": "did:web:evil.example"}
		ok := a2a(f, "honest")
		ok.TrustManifest = map[string]any{"identity": "spiffe://127.0.0.1/agent"}
		f.set("/m.json", manifest(e, ok))
		svc := newService(t, s, sources.Config{Trust: sources.TrustReject})
		src, err := svc.Add(t.Context(), person, sources.Request{URL: f.srv.URL + "/m.json"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Refresh(t.Context(), src.ID); err != nil {
			t.Fatal(err)
		}
		_, entries, _ := svc.Get(t.Context(), src.ID)
		if len(entries) != 2 || entries[0].Reason != sources.ReasonPublisherMismatch || entries[1].Outcome != catalog.EntryCatalogued {
			t.Errorf("entries under reject: %+v", entries)
		}
	})
}

// TestBadSources: each gets a clear status and changes nothing else.
func TestBadSources(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		f := newFleet(t)
		f.set("/html", "<html>hello</html>")
		f.set("/huge.json", `{"entries":[`+strings.Repeat(" ", 2<<20)+`]}`)
		var many []entry
		for i := range 12 {
			many = append(many, a2a(f, fmt.Sprintf("m%d", i)))
		}
		f.set("/many.json", manifest(many...))
		f.set("/notobject.json", `["entries"]`)
		svc := newService(t, s, sources.Config{MaxEntries: 10})
		for _, c := range []struct{ path, problem string }{
			{"/html", crawler.ClassNotJSON},
			{"/huge.json", crawler.ClassTooLarge},
			{"/many.json", sources.ProblemTooManyEntries},
			{"/notobject.json", crawler.ClassNotJSON},
			{"/missing.json", crawler.ClassHTTP404},
		} {
			src, err := svc.Add(t.Context(), person, sources.Request{URL: f.srv.URL + c.path})
			if err != nil {
				t.Fatal(err)
			}
			got, err := svc.Refresh(t.Context(), src.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != catalog.SourceFailed || got.Problem != c.problem || got.Message == "" || got.ConsecutiveFailures != 1 {
				t.Errorf("%s: %+v, want problem %s", c.path, got, c.problem)
			}
		}
		page, err := s.Search(t.Context(), catalog.Query{Scope: catalog.ScopeAll})
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != 0 {
			t.Errorf("bad sources catalogued %d agents", page.Total)
		}
		if !hasEvent(t, s, catalog.EventSourceFailed, "", "too_many_entries") {
			t.Error("a failing source sent no source_failed event")
		}
		if _, err := svc.Add(t.Context(), person, sources.Request{URL: "ftp://x"}); err == nil {
			t.Error("an ftp source was accepted")
		}
	})
}

// TestOriginResolution: the order ARD gives consumers.
func TestOriginResolution(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(f *fleet)
		via   string
	}{
		{"ard.json", func(f *fleet) {
			f.set("/.well-known/ard.json", manifest(a2a(f, "a")))
			f.set("/.well-known/ai-catalog.json", manifest(a2a(f, "b")))
		}, sources.ViaARD},
		{"ai-catalog.json", func(f *fleet) { f.set("/.well-known/ai-catalog.json", manifest(a2a(f, "b"))) }, sources.ViaAICatalog},
		{"link header", func(f *fleet) {
			f.set("/", "<html></html>")
			f.headers["/"] = http.Header{"Link": {`</m.json>; rel="ard"`}}
			f.set("/m.json", manifest(a2a(f, "c")))
		}, sources.ViaLink},
		{"html link", func(f *fleet) {
			f.set("/", `<html><head><link rel="ai-catalog" href="/m.json"></head></html>`)
			f.set("/m.json", manifest(a2a(f, "c")))
		}, sources.ViaLink},
		{"agentmap", func(f *fleet) {
			f.set("/robots.txt", "User-agent: *\nAgentmap: /m.json\n")
			f.set("/m.json", manifest(a2a(f, "d")))
		}, sources.ViaAgentmap},
		{"agent card", func(f *fleet) {
			f.set("/.well-known/agent-card.json", fmt.Sprintf(cardTmpl, "self"))
		}, sources.ViaAgentCard},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := catalogtest.SQLite(t)
			f := newFleet(t)
			c.setup(f)
			svc := newService(t, s, sources.Config{})
			src, err := svc.Add(t.Context(), person, sources.Request{URL: f.srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			got, err := svc.Refresh(t.Context(), src.ID)
			if err != nil {
				t.Fatal(err)
			}
			_, entries, _ := svc.Get(t.Context(), src.ID)
			if got.Status != catalog.SourceOK || got.ResolvedVia != c.via || len(entries) != 1 || entries[0].Outcome != catalog.EntryCatalogued {
				t.Errorf("resolved %+v with entries %+v, want via %s", got, entries, c.via)
			}
		})
	}
}

func TestRefreshBusy(t *testing.T) {
	s := catalogtest.SQLite(t)
	svc := newService(t, s, sources.Config{})
	src, err := svc.Add(t.Context(), person, sources.Request{URL: "http://127.0.0.1:1/m.json"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.ClaimSource(context.Background(), src.ID, "other", time.Now(), time.Minute); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, err := svc.Refresh(t.Context(), src.ID); err != sources.ErrBusy {
		t.Errorf("refresh of a leased source: %v", err)
	}
}

// TestRefreshBusyInProcess: a second refresh of a source while this
// process checks it is ErrBusy, though the lease is this process's own.
func TestRefreshBusyInProcess(t *testing.T) {
	s := catalogtest.SQLite(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := false
		once.Do(func() { first = true })
		if first {
			close(arrived)
			<-release
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	svc := newService(t, s, sources.Config{})
	src, err := svc.Add(t.Context(), person, sources.Request{URL: srv.URL + "/m.json"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := svc.Refresh(t.Context(), src.ID)
		done <- err
	}()
	<-arrived
	_, err = svc.Refresh(t.Context(), src.ID)
	close(release)
	if err != sources.ErrBusy {
		t.Errorf("second refresh during a check: %v, want ErrBusy", err)
	}
	if err := <-done; err != nil {
		t.Errorf("first refresh: %v", err)
	}
	if _, err := svc.Refresh(t.Context(), src.ID); err != nil {
		t.Errorf("refresh after the check ended: %v", err)
	}
}

// hasEvent tells whether the changes table holds an event of kind about
// agentID whose detail contains detail.
func hasEvent(t *testing.T, s *catalog.Store, kind, agentID, detail string) bool {
	t.Helper()
	events, err := s.Events(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Kind == kind && e.AgentID == agentID && strings.Contains(string(e.Detail), detail) {
			return true
		}
	}
	return false
}

// payrollHits searches s for text as sc sees it: the ids found, in rank
// order, and the fields the first hit's words matched in.
func payrollHits(t *testing.T, s *catalog.Store, sc catalog.Scope, text string) ([]string, []string) {
	t.Helper()
	page, err := s.Search(t.Context(), catalog.Query{Text: text, Scope: sc, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids, fields []string
	for i, it := range page.Items {
		ids = append(ids, it.ID)
		if i == 0 && it.Explanation != nil {
			for _, w := range it.Explanation.Words {
				fields = append(fields, w.Fields...)
			}
		}
	}
	return ids, fields
}

func TestRepresentativeQueriesSearched(t *testing.T) {
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", catalogtest.SQLiteDSN}, {"postgres", catalogtest.PostgresDSN}} {
		t.Run(db.name, func(t *testing.T) {
			ctx := t.Context()
			dsn := db.dsn(t)
			s := catalogtest.Open(t, dsn)
			f := newFleet(t)
			ledger := a2a(f, "ledger")
			ledger.Queries = []string{"run payroll for my team", " Run payroll for my TEAM "}
			team := a2a(f, "team")
			team.Queries = nil
			f.set("/ard.json", manifest(ledger, team))
			svc := newService(t, s, sources.Config{})
			src, err := svc.Add(ctx, person, sources.Request{URL: f.srv.URL + "/ard.json"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Refresh(ctx, src.ID); err != nil {
				t.Fatal(err)
			}
			_, entries, err := svc.Get(ctx, src.ID)
			if err != nil {
				t.Fatal(err)
			}
			var id string
			for _, e := range entries {
				if e.Identifier == ledger.Identifier {
					id = e.AgentID
				}
			}
			if id == "" {
				t.Fatalf("no agent for the ledger entry: %+v", entries)
			}
			viewer := catalog.Scope{}
			found := func(s *catalog.Store, sc catalog.Scope, when string) {
				t.Helper()
				ids, fields := payrollHits(t, s, sc, "payroll")
				if len(ids) != 1 || ids[0] != id || !slices.Contains(fields, "queries") {
					t.Errorf("%s: payroll finds %v (fields %v), want %s by its queries", when, ids, fields, id)
				}
				ids, _ = payrollHits(t, s, sc, "payroll for my team")
				if len(ids) != 2 || ids[0] != id {
					t.Errorf("%s: payroll for my team finds %v, want %s first, then the agent named team", when, ids, id)
				}
			}
			notFound := func(s *catalog.Store, sc catalog.Scope, when string) {
				t.Helper()
				if ids, _ := payrollHits(t, s, sc, "payroll"); len(ids) != 0 {
					t.Errorf("%s: payroll finds %v, want none", when, ids)
				}
			}
			found(s, viewer, "live index")
			found(catalogtest.Open(t, dsn), viewer, "rebuilt index")

			// Hidden from a viewer: its queries do not show it.
			if _, err := s.SetListing(ctx, person, catalog.ScopeAll, id, catalog.ListingChange{State: catalog.ListingRejected, Reason: "no"}); err != nil {
				t.Fatal(err)
			}
			notFound(s, viewer, "rejected, live index")
			notFound(catalogtest.Open(t, dsn), viewer, "rejected, rebuilt index")
			found(s, catalog.ScopeAll, "rejected, as an admin")

			// The queries leave the manifest: the words leave the index.
			ledger.Queries = []string{"count the gizmo stock"}
			f.set("/ard.json", manifest(ledger, team))
			if _, err := svc.Refresh(ctx, src.ID); err != nil {
				t.Fatal(err)
			}
			notFound(s, catalog.ScopeAll, "queries changed, live index")
			notFound(catalogtest.Open(t, dsn), catalog.ScopeAll, "queries changed, rebuilt index")
			for _, st := range []*catalog.Store{s, catalogtest.Open(t, dsn)} {
				if ids, _ := payrollHits(t, st, catalog.ScopeAll, "gizmo"); len(ids) != 1 || ids[0] != id {
					t.Errorf("the new queries find %v, want %s", ids, id)
				}
			}

			// Registered by hand too, the agent outlives its source's
			// deletion, and its queries go with the source.
			reg := crawler.NewRegistrar(crawler.NewFetcher(safehttp.New(safehttp.Config{
				AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}), 0), s, card.Limits{}, nil)
			if _, err := reg.Register(ctx, person, catalog.ScopeAll, ledger.URL); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Delete(ctx, person, src.ID); err != nil {
				t.Fatal(err)
			}
			for _, st := range []*catalog.Store{s, catalogtest.Open(t, dsn)} {
				if ids, _ := payrollHits(t, st, catalog.ScopeAll, "gizmo"); len(ids) != 0 {
					t.Errorf("after the source's deletion the queries find %v, want none", ids)
				}
				if ids, _ := payrollHits(t, st, catalog.ScopeAll, "ledger"); len(ids) != 1 || ids[0] != id {
					t.Errorf("after the source's deletion the agent's name finds %v, want %s", ids, id)
				}
			}
		})
	}
}

// TestThirdPartyQueriesNotSearched: a manifest on another registrable
// domain may bring an agent in, but its representative queries do not
// rank someone else's agent; the card's own domain's manifest does.
func TestThirdPartyQueriesNotSearched(t *testing.T) {
	ctx := t.Context()
	dsn := catalogtest.SQLiteDSN(t)
	s := catalogtest.Open(t, dsn)
	f := newFleet(t) // 127.0.0.1: the card's publisher
	own := a2a(f, "ledger")
	own.Queries = []string{"run payroll for my team"}
	f.set("/ard.json", manifest(own))

	// 127.0.0.2 is another publisher listing the same card.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	foreign := own
	foreign.Queries = []string{"wire money abroad cheaply"}
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, manifest(foreign))
	}))
	other.Listener.Close()
	other.Listener = ln
	other.Start()
	t.Cleanup(other.Close)

	svc := newService(t, s, sources.Config{})
	for _, u := range []string{other.URL + "/ard.json", f.srv.URL + "/ard.json"} {
		src, err := svc.Add(ctx, person, sources.Request{URL: u})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Refresh(ctx, src.ID); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range []*catalog.Store{s, catalogtest.Open(t, dsn)} { // live, rebuilt
		if ids, _ := payrollHits(t, st, catalog.ScopeAll, "payroll"); len(ids) != 1 {
			t.Errorf("the card's own manifest's queries find %v, want the agent", ids)
		}
		if ids, _ := payrollHits(t, st, catalog.ScopeAll, "wire money abroad"); len(ids) != 0 {
			t.Errorf("another domain's manifest's queries find %v, want none", ids)
		}
	}
}
