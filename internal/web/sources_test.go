package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/sources"
)

// TestSourcesPages adds a loopback manifest as a source in the console,
// checks it, reads its entries (markup in them escaped) and the agent's
// provenance, then deletes it: the agent's page says it was withdrawn.
func TestSourcesPages(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/m.json":
			fmt.Fprintf(w, `{"entries":[{"identifier":"urn:air:127.0.0.1:t:x","displayName":"<b>X</b>","type":"application/a2a-agent-card+json","url":"%s/card"},
				{"identifier":"urn:air:127.0.0.1:t:tools","displayName":"T","type":"application/mcp-server-card+json","url":"%s/mcp"}]}`, srv.URL, srv.URL)
		case "/card":
			fmt.Fprint(w, `{"name":"Xagent","description":"d","version":"1",
"supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := newFixture(t, fixtureOptions{})
	// Loopback allowed explicitly, as every test that fetches does.
	client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	defer client.CloseIdleConnections()
	reg := crawler.NewRegistrar(crawler.NewFetcher(client, 0), f.store, card.Limits{}, nil)
	svc := sources.New(f.store, reg, crawler.NewFetcher(client, 1<<20), client, sources.Config{}, nil)
	f.console = New(Options{Searcher: f.store, Agents: f.store, Sources: svc, Provenance: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	tok := f.console.processCSRF

	if body := f.get(t, "/sources", nil).Body.String(); !strings.Contains(body, "No sources") || !strings.Contains(body, `href="/sources"`) {
		t.Fatal("the empty list is not said so, or the header has no link")
	}
	if rec := f.post(t, "/sources", url.Values{"url": {"ftp://x"}, csrfField: {tok}}, nil); rec.Code != http.StatusBadRequest {
		t.Errorf("an ftp source: %d", rec.Code)
	}
	const secret = "tok3n-s3cret"
	rec := f.post(t, "/sources", url.Values{"url": {srv.URL + "/m.json?token=" + secret}, csrfField: {tok}}, nil)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("add: %d %s", rec.Code, rec.Body)
	}
	page := rec.Header().Get("Location")
	if rec := f.post(t, page+"/refresh", url.Values{csrfField: {tok}}, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("refresh: %d %s", rec.Code, rec.Body)
	}
	body := f.get(t, page, nil).Body.String()
	for _, want := range []string{"catalogued", "not_a2a", "&lt;b&gt;X&lt;/b&gt;", "via manifest"} {
		if !strings.Contains(body, want) {
			t.Errorf("source page lacks %q", want)
		}
	}
	if strings.Contains(body, "<b>X</b>") {
		t.Error("an entry's name is rendered as markup")
	}
	agents, err := f.store.AgentSourceEntries(t.Context(), "")
	if err != nil || len(agents) != 0 {
		t.Fatal(agents, err)
	}
	_, entries, _ := svc.Get(t.Context(), strings.TrimPrefix(page, "/sources/"))
	agentPage := agentURL(entries[0].AgentID)
	if body := f.get(t, agentPage, nil).Body.String(); !strings.Contains(body, "publishedFrom") || !strings.Contains(body, secret) {
		t.Error("the agent's page does not say where it came from to its admin")
	}
	for _, role := range []auth.Role{auth.Viewer, auth.Tester, auth.Editor} {
		as := func(echo.Context) (Principal, bool) { return Principal{Name: "p", Role: role}, true }
		g := &fixture{store: f.store, e: echo.New()}
		g.console = New(Options{Searcher: f.store, Agents: f.store, Sources: svc, Provenance: f.store, Principal: as, Logger: quietLog})
		g.console.Mount(g.e)
		body := g.get(t, agentPage, nil).Body.String()
		operator := role.Includes(auth.Editor)
		if !strings.Contains(body, "publishedFrom") || !strings.Contains(body, "urn:air:127.0.0.1:t:x") {
			t.Errorf("%s: the agent's page does not say where it came from", role)
		}
		if leaked := strings.Contains(body, secret) || strings.Contains(body, "/m.json"); leaked != operator {
			t.Errorf("%s reads the source's URL: %v, want %v", role, leaked, operator)
		}
		if !operator && !strings.Contains(body, "a manifest on") {
			t.Errorf("%s is not told the manifest's host", role)
		}
	}
	if rec := f.post(t, page+"/delete", url.Values{csrfField: {tok}}, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("delete: %d", rec.Code)
	}
	if body := f.get(t, agentPage, nil).Body.String(); !strings.Contains(body, "Withdrawn at") || !strings.Contains(body, "was deleted") {
		t.Error("the withdrawn agent's page does not say why")
	}

	// A peer registry with a token: the token is stored, never echoed, in
	// an error answer or on the source's page.
	const token = "console-peer-token"
	if rec := f.post(t, "/sources", url.Values{"url": {"https://registry.example"}, "token": {token}, csrfField: {tok}}, nil); rec.Code != http.StatusBadRequest || strings.Contains(rec.Body.String(), token) {
		t.Errorf("a token for a manifest: %d", rec.Code)
	}
	rec = f.post(t, "/sources", url.Values{"url": {"https://registry.example"}, "kind": {"registry"}, "token": {token}, csrfField: {tok}}, nil)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("add a peer: %d %s", rec.Code, rec.Body)
	}
	if body := f.get(t, rec.Header().Get("Location"), nil).Body.String(); strings.Contains(body, token) || !strings.Contains(body, "token set") || !strings.Contains(body, "Peer registry") {
		t.Error("the peer's page shows its token, or does not say one is set")
	}
}
