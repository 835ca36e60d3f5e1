package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2aregistry/registry/internal/ardentry"
	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

var actor = catalog.System("test")

// fixture is a catalog of four agents: two public, one in a collection
// only the finance group sees, one pending review.
type fixture struct {
	store                               *catalog.Store
	converter, translator, ledger, new_ string
	converterURL, converterRaw          string
}

func agentCard(name, desc, skill, in string) string {
	return fmt.Sprintf(`{"name": %q, "description": %q, "version": "1.0.0",
  "supportedInterfaces": [{"url": "https://agents.example/%s/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
  "capabilities": {"streaming": true}, "defaultInputModes": [%q], "defaultOutputModes": ["application/json"],
  "skills": [{"id": %q, "name": %q, "description": %q, "tags": ["finance", "demo"]}]}`,
		name, desc, strings.ToLower(strings.Fields(name)[0]), in, strings.ReplaceAll(strings.ToLower(skill), " ", "-"), skill, desc)
}

func seed(t testing.TB, s *catalog.Store) fixture {
	t.Helper()
	ctx := context.Background()
	add := func(name, desc, skill, in string) (string, string, string) {
		raw := agentCard(name, desc, skill, in)
		c, err := card.Parse([]byte(raw), card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		u := "https://agents.example/" + strings.ToLower(strings.Fields(name)[0]) + "/.well-known/agent-card.json"
		res, err := s.Upsert(ctx, actor, catalog.UpsertInput{CardURL: u, Card: c, Source: catalog.SourceURL})
		if err != nil {
			t.Fatal(err)
		}
		return res.Agent.ID, u, raw
	}
	var f fixture
	f.store = s
	f.converter, f.converterURL, f.converterRaw = add("Currency Converter", "Converts amounts between currencies at today's rates.", "Convert currencies", "application/json")
	f.translator, _, _ = add("Document Translator", "Translates PDF documents between languages.", "Translate documents", "application/pdf")
	f.ledger, _, _ = add("Ledger Keeper", "Books currency transactions into the finance ledger.", "Book transactions", "application/json")
	f.new_, _, _ = add("Newcomer Agent", "Converts currencies too, awaiting review.", "Convert money", "application/json")
	if _, _, err := s.SaveCollection(ctx, actor, catalog.Collection{Name: "finance-only", Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddToCollection(ctx, actor, "finance-only", f.ledger); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetListing(ctx, actor, catalog.ScopeAll, f.new_, catalog.ListingChange{State: catalog.ListingPending, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// serve runs the door behind a stand-in for the authenticator: the
// X-Test-Caller header names the caller ("", "viewer", "finance",
// "editor"); without it the caller is anonymous with no role.
func serve(t testing.TB, cat Catalog) *httptest.Server {
	t.Helper()
	return serveAs(t, cat, "")
}

// serveAs is serve whose requests without X-Test-Caller come from
// caller.
func serveAs(t testing.TB, cat Catalog, caller string) *httptest.Server {
	t.Helper()
	s := New(Options{Catalog: cat, Issuer: "https://issuer.example"})
	mux := http.NewServeMux()
	mux.Handle(Path, s)
	mux.HandleFunc(MetadataPath, s.ServeMetadata)
	mux.HandleFunc(MetadataPath+Path, s.ServeMetadata)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p auth.Principal
		c := r.Header.Get("X-Test-Caller")
		if c == "" {
			c = caller
		}
		switch c {
		case "viewer":
			p = auth.Principal{Subject: "v", Role: auth.Viewer, Source: auth.SourceBearer}
		case "finance":
			p = auth.Principal{Subject: "f", Role: auth.Viewer, Groups: []string{"Finance"}, Source: auth.SourceBearer}
		case "editor":
			p = auth.Principal{Subject: "e", Role: auth.Editor, Source: auth.SourceBearer}
		}
		mux.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p, "")))
	}))
	t.Cleanup(srv.Close)
	return srv
}

type callerTransport struct{ caller string }

func (c callerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Caller", c.caller)
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t testing.TB, srv *httptest.Server, caller string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: srv.URL + Path, HTTPClient: &http.Client{Transport: callerTransport{caller}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t testing.TB, cs *mcp.ClientSession, tool string, args any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if out != nil && !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

func ids(out SearchOutput) []string {
	var s []string
	for _, a := range out.Agents {
		s = append(s, a.ID)
	}
	return s
}

func TestToolsFindWithTheCallersScope(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, st *catalog.Store) {
		f := seed(t, st)
		srv := serve(t, st)
		for _, tc := range []struct {
			caller string
			want   []string
		}{
			{"viewer", []string{f.converter}},
			{"finance", []string{f.converter, f.ledger}},
			{"editor", []string{f.converter, f.new_}},
		} {
			t.Run(tc.caller, func(t *testing.T) {
				cs := connect(t, srv, tc.caller)
				var out SearchOutput
				res := call(t, cs, ToolSearch, map[string]any{"query": "currency", "input_mode": "application/json"}, &out)
				if res.IsError {
					t.Fatalf("search failed: %v", res.Content)
				}
				got := map[string]bool{}
				for _, id := range ids(out) {
					got[id] = true
				}
				for _, id := range tc.want {
					if !got[id] {
						t.Errorf("search for %s misses %s; got %v", tc.caller, id, ids(out))
					}
				}
				for _, hidden := range []string{f.ledger, f.new_} {
					if got[hidden] && !contains(tc.want, hidden) {
						t.Errorf("search for %s shows %s, which it may not see", tc.caller, hidden)
					}
				}
				if len(out.Agents) > 0 && out.Agents[0].ID != f.converter {
					t.Errorf("first hit %s, want the converter", out.Agents[0].ID)
				}
				if out.Total != len(out.Agents) || out.Facets == nil {
					t.Errorf("total %d facets %v", out.Total, out.Facets)
				}
				// A hidden agent is not found whichever way it is named.
				for _, id := range []string{f.ledger, f.new_} {
					if contains(tc.want, id) {
						continue
					}
					res := call(t, cs, ToolAgent, map[string]any{"id": id}, nil)
					if !res.IsError || !strings.Contains(text(res), "no agent") {
						t.Errorf("get_agent %s as %s = %v, want not found", id, tc.caller, text(res))
					}
				}
			})
		}
	})
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestGetAgentByIDURNAndCardURL(t *testing.T) {
	st := catalogtest.SQLite(t)
	f := seed(t, st)
	cs := connect(t, serve(t, st), "viewer")
	for _, ref := range []string{f.converter, ardentry.URN(f.converterURL), f.converterURL} {
		var out AgentOutput
		res := call(t, cs, ToolAgent, map[string]any{"id": ref}, &out)
		if res.IsError {
			t.Fatalf("get_agent %s: %s", ref, text(res))
		}
		if out.ID != f.converter || out.URN == "" || len(out.Skills) != 1 || out.Skills[0].InputModes[0] != "application/json" ||
			len(out.Interfaces) != 1 || out.Interfaces[0].Binding != card.BindingJSONRPC || len(out.Versions) != 1 {
			t.Errorf("get_agent %s = %+v", ref, out)
		}
	}
	var c CardOutput
	res := call(t, cs, ToolCard, map[string]any{"id": f.converter}, &c)
	if res.IsError || text(res) != f.converterRaw || c.Card["name"] != "Currency Converter" || c.Version != 1 {
		t.Errorf("get_agent_card = %s, %+v", text(res), c)
	}
	res = call(t, cs, ToolCard, map[string]any{"id": f.converter, "version": 7}, nil)
	if !res.IsError || !strings.Contains(text(res), "no version 7") {
		t.Errorf("missing version: %s", text(res))
	}
	var fo FacetsOutput
	res = call(t, cs, ToolFacets, map[string]any{"tag": "finance"}, &fo)
	if res.IsError || fo.Total != 2 || len(fo.Facets[catalog.FieldInputMode]) != 2 {
		t.Errorf("list_facets = %s %+v", text(res), fo)
	}
}

func TestResourcesAreTheVisibleCards(t *testing.T) {
	st := catalogtest.SQLite(t)
	f := seed(t, st)
	cs := connect(t, serve(t, st), "viewer")
	ctx := context.Background()
	lr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range lr.Resources {
		uris = append(uris, r.URI)
	}
	if len(uris) != 2 || !contains(uris, cardURI(f.converter)) || contains(uris, cardURI(f.ledger)) {
		t.Errorf("resources = %v", uris)
	}
	tr, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tr.ResourceTemplates) != 1 || tr.ResourceTemplates[0].URITemplate != cardTemplate {
		t.Fatalf("templates = %+v, %v", tr, err)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: cardURI(f.converter)})
	if err != nil || rr.Contents[0].Text != f.converterRaw {
		t.Fatalf("read = %+v, %v", rr, err)
	}
	for _, uri := range []string{cardURI(f.ledger), cardURI(f.new_), cardURI("nope"), "a2a-registry://agents/x/y/card"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("read %s succeeded; it is hidden or missing", uri)
		}
	}
	if _, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "garbage"}); err == nil {
		t.Error("a bad cursor listed resources")
	}
}

func TestBadInputIsAToolErrorAndTheServerStaysUp(t *testing.T) {
	st := catalogtest.SQLite(t)
	seed(t, st)
	cs := connect(t, serve(t, st), "viewer")
	big := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name string
		tool string
		args any
		want string // in the error text
	}{
		{"wrong type", ToolSearch, map[string]any{"limit": "ten"}, "limit"},
		{"limit out of range", ToolSearch, map[string]any{"limit": 1000}, "limit"},
		{"unknown argument", ToolSearch, map[string]any{"tags": "x"}, "tags"},
		{"q is not the text", ToolSearch, map[string]any{"q": "x"}, "q"},
		{"unknown enum", ToolSearch, map[string]any{"health": "great"}, "health"},
		{"list of numbers", ToolSearch, map[string]any{"tag": []any{1, 2}}, "tag"},
		{"1 MB query", ToolSearch, map[string]any{"query": big}, "query"},
		{"1 MB id", ToolAgent, map[string]any{"id": big}, "id"},
		{"bad cursor", ToolSearch, map[string]any{"cursor": "garbage"}, "cursor"},
		{"missing id", ToolAgent, map[string]any{}, "id"},
		{"foreign URN", ToolAgent, map[string]any{"id": "urn:isbn:123"}, "URN"},
		{"unknown card URL", ToolCard, map[string]any{"id": "https://elsewhere.example/card.json"}, "no agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, tc.tool, tc.args, nil)
			msg := text(res)
			if !res.IsError || !strings.Contains(msg, tc.want) {
				t.Errorf("%s = error %v %q, want a tool error naming %q", tc.name, res.IsError, excerpt(msg, 300), tc.want)
			}
			if len(msg) > 4096 {
				t.Errorf("the error echoes the input: %d bytes", len(msg))
			}
		})
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_agent"}); err == nil || !strings.Contains(err.Error(), "delete_agent") {
		t.Errorf("unknown tool: %v", err)
	}
	var out SearchOutput
	if res := call(t, cs, ToolSearch, map[string]any{"query": "currencies"}, &out); res.IsError || out.Total == 0 {
		t.Errorf("search after bad input: %s", text(res))
	}
	if err := cs.Ping(context.Background(), nil); err != nil {
		t.Error(err)
	}
}

func TestToolsDeclareSchemas(t *testing.T) {
	st := catalogtest.SQLite(t)
	cs := connect(t, serve(t, st), "viewer")
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range lt.Tools {
		names[tool.Name] = true
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s: input %v output %v annotations %+v", tool.Name, tool.InputSchema != nil, tool.OutputSchema != nil, tool.Annotations)
		}
	}
	for _, n := range []string{ToolSearch, ToolAgent, ToolCard, ToolFacets} {
		if !names[n] {
			t.Errorf("no tool %s", n)
		}
	}
}

func TestSignInRequired(t *testing.T) {
	st := catalogtest.SQLite(t)
	srv := serve(t, st)
	for _, tc := range []struct {
		name, auth, wantErr string
	}{
		{"anonymous", "", ""},
		{"bad token", "Bearer nope", `error="invalid_token"`},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ch := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, `resource_metadata="`+srv.URL+MetadataPath+Path+`"`) ||
			!strings.Contains(ch, tc.wantErr) {
			t.Errorf("%s: %d %q", tc.name, resp.StatusCode, ch)
		}
	}
	for path, resource := range map[string]string{MetadataPath + Path: srv.URL + Path, MetadataPath: srv.URL} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc resourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || doc.Resource != resource || len(doc.AuthorizationServers) != 1 || doc.AuthorizationServers[0] != "https://issuer.example" {
			t.Errorf("%s: %+v %v", path, doc, err)
		}
	}
}
