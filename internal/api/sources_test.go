package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/sources"
)

// TestSourcesAPI adds a manifest on loopback as a source (its URL holding
// a token), checks it, reads what each entry became and the agent's
// provenance as each role may (a viewer never reads the source's URL),
// then deletes it.
func TestSourcesAPI(t *testing.T) {
	store := catalogtest.SQLite(t)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ard.json":
			fmt.Fprintf(w, `{"entries":[
				{"identifier":"urn:air:127.0.0.1:t:echo","displayName":"Echo","type":"application/a2a-agent-card+json","url":"%s/card",
				 "tags":["echo"],"representativeQueries":["repeat after me","echo this"],"trustManifest":{"identity":"https://elsewhere.example"}},
				{"identifier":"urn:air:127.0.0.1:t:mcp","displayName":"Tools","type":"application/mcp-server-card+json","url":"%s/mcp"}]}`, srv.URL, srv.URL)
		case "/card":
			fmt.Fprint(w, `{"name":"Echo","description":"echoes","version":"1",
"supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	// Loopback allowed explicitly, as the crawler's tests do.
	client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	defer client.CloseIdleConnections()
	reg := crawler.NewRegistrar(crawler.NewFetcher(client, 0), store, card.Limits{}, nil)
	svc := sources.New(store, reg, crawler.NewFetcher(client, 1<<20), client, sources.Config{}, nil)
	env := newTestEnv(t, func(o *Options) { o.Sources, o.Provenance, o.Catalog = svc, store, store })
	jsonCT := map[string]string{"Content-Type": "application/json"}

	if rec := env.do(t, http.MethodPost, BasePath+"/sources", `{"url": "ftp://x"}`, jsonCT); rec.Code != http.StatusBadRequest {
		t.Errorf("POST an ftp source: %d %s", rec.Code, rec.Body)
	}
	const secret = "tok3n-s3cret"
	rec := env.do(t, http.MethodPost, BasePath+"/sources", `{"url": "`+srv.URL+`/ard.json?token=`+secret+`"}`, jsonCT)
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /sources: %d %s", rec.Code, rec.Body)
	}
	var src Source
	if err := json.Unmarshal(rec.Body.Bytes(), &src); err != nil || src.Status != "pending" {
		t.Fatalf("created %+v, %v", src, err)
	}
	if rec := env.do(t, http.MethodPost, BasePath+"/sources", `{"url": "`+srv.URL+`/ard.json?token=`+secret+`"}`, jsonCT); rec.Code != http.StatusConflict {
		t.Errorf("POST the same source again: %d", rec.Code)
	}
	rec = env.do(t, http.MethodPost, BasePath+"/sources/"+src.ID+"/refresh", "", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("refresh: %d %s", rec.Code, rec.Body)
	}
	var d SourceDetail
	if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.Status != "ok" || len(d.Entries) != 2 || d.Entries[0].Outcome != "catalogued" || d.Entries[0].TrustFlag != "publisher_mismatch" ||
		d.Entries[1].Outcome != "skipped" || d.Entries[1].Reason != sources.ReasonNotA2A {
		t.Fatalf("after refresh: %s", rec.Body)
	}
	agentID := d.Entries[0].AgentID
	rec = env.do(t, http.MethodGet, BasePath+"/agents/"+agentID, "", nil)
	var a AgentDetail
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET agent: %d %s", rec.Code, rec.Body)
	}
	if len(a.Provenance) != 1 || a.Provenance[0].Relation != "publishedFrom" || a.Provenance[0].SourceID != src.ID ||
		len(a.SourceEntries) != 1 || len(a.SourceEntries[0].RepresentativeQueries) != 2 {
		t.Errorf("agent provenance %+v, entries %+v", a.Provenance, a.SourceEntries)
	}
	if p := a.Provenance[0]; p.ManifestHost != "127.0.0.1" || !strings.Contains(p.SourceURL, secret) || a.SourceEntries[0].ManifestURL == "" {
		t.Errorf("an admin reads provenance %+v, entry %+v", p, a.SourceEntries[0])
	}
	for _, role := range []auth.Role{auth.Viewer, auth.Tester, auth.Editor} {
		roleEnv := newTestEnv(t, func(o *Options) {
			o.Sources, o.Provenance, o.Catalog, o.Authorizer = svc, store, store, signedInAs(role)
		})
		rec := roleEnv.do(t, http.MethodGet, BasePath+"/agents/"+agentID, "", nil)
		var ra AgentDetail
		if err := json.Unmarshal(rec.Body.Bytes(), &ra); err != nil || rec.Code != http.StatusOK || len(ra.Provenance) != 1 || len(ra.SourceEntries) != 1 {
			t.Fatalf("GET agent as %s: %d %s", role, rec.Code, rec.Body)
		}
		p, e := ra.Provenance[0], ra.SourceEntries[0]
		operator := role.Includes(auth.Editor)
		if leaked := strings.Contains(rec.Body.String(), secret) || strings.Contains(rec.Body.String(), "/ard.json"); leaked != operator {
			t.Errorf("%s reads the source's URL: %v, want %v: %s", role, leaked, operator, rec.Body)
		}
		if p.Relation != "publishedFrom" || p.EntryID != "urn:air:127.0.0.1:t:echo" || p.ManifestHost != "127.0.0.1" || e.ManifestHost != "127.0.0.1" ||
			len(e.RepresentativeQueries) != 2 || (p.SourceID != "") != operator || (e.URL != "") != operator {
			t.Errorf("%s reads provenance %+v, entry %+v", role, p, e)
		}
	}
	rec = env.do(t, http.MethodGet, BasePath+"/agents?provenance=publishedFrom", "", nil)
	if rec.Code != http.StatusOK || !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("search by provenance: %d %s", rec.Code, rec.Body)
	}
	var page struct{ Total int }
	_ = json.Unmarshal(rec.Body.Bytes(), &page)
	if page.Total != 1 {
		t.Errorf("provenance=publishedFrom matched %d agents, want 1", page.Total)
	}
	if rec := env.do(t, http.MethodGet, BasePath+"/agents?provenance=nope", "", nil); rec.Code != http.StatusBadRequest {
		t.Errorf("an unknown provenance: %d", rec.Code)
	}
	rec = env.do(t, http.MethodGet, BasePath+"/sources", "", nil)
	var list SourceList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Items) != 1 || list.Items[0].ResolvedVia != "manifest" {
		t.Fatalf("GET /sources: %s", rec.Body)
	}
	rec = env.do(t, http.MethodDelete, BasePath+"/sources/"+src.ID, "", nil)
	var del SourceDeleted
	if err := json.Unmarshal(rec.Body.Bytes(), &del); err != nil || rec.Code != http.StatusOK || len(del.WithdrawnAgents) != 1 {
		t.Fatalf("DELETE: %d %s", rec.Code, rec.Body)
	}
	rec = env.do(t, http.MethodGet, BasePath+"/agents/"+agentID, "", nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || a.Removed == nil || a.Removed.Withdrawn == "" {
		t.Errorf("withdrawn agent as an admin reads it: %d %s", rec.Code, rec.Body)
	}
	if rec := env.do(t, http.MethodGet, BasePath+"/sources/"+src.ID, "", nil); rec.Code != http.StatusNotFound {
		t.Errorf("GET a deleted source: %d", rec.Code)
	}
}
