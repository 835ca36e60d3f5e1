package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/a2aregistry/registry/internal/a2aagent"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/mcpserver"
	"github.com/a2aregistry/registry/internal/synth"
)

// doorsServer serves the registry's whole handler, the MCP and A2A doors
// on, over a store of n synthetic agents; with sign-in when signIn.
func doorsServer(t testing.TB, n int, signIn bool) (*httptest.Server, *signInServer) {
	t.Helper()
	store := catalogtest.SQLite(t)
	g := synth.New(1)
	var batch []catalog.UpsertInput
	for i := range n {
		c, err := card.Parse(g.Card(i), card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, catalog.UpsertInput{CardURL: g.CardURL(i), Card: c, Source: catalog.SourceURL})
		if len(batch) == 500 || i == n-1 {
			if _, err := store.UpsertBatch(context.Background(), catalog.System("test"), batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	// The doors name the server's URL, so the server is built first and
	// started once its handler is set.
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	base := "http://" + srv.Listener.Addr().String()
	d := handlerDeps{log: slog.New(slog.DiscardHandler), store: store, publicURL: base,
		doors: doorDeps{mcp: store, agent: store}}
	var s *signInServer
	if signIn {
		s = &signInServer{store: store, srv: srv}
		m, err := mockoidc.Run()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Shutdown() })
		s.oidc = m
		cfg := config.Default()
		cfg.Server.PublicURL = base
		cfg.Auth.Issuer, cfg.Auth.ClientID, cfg.Auth.ClientSecret = s.oidc.Issuer(), s.oidc.ClientID, config.Secret(s.oidc.ClientSecret)
		cfg.Auth.APIAudience = apiAudience
		cfg.Auth.Roles = []config.RoleClaim{{Role: "viewer", Value: "eng"}}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		authn, err := newAuthenticator(cfg, store, d.log)
		if err != nil {
			t.Fatal(err)
		}
		d.auth = authn
	}
	srv.Config.Handler = newHandler(d)
	srv.Start()
	return srv, s
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestDoorsWithSignIn drives the MCP and A2A doors through the real
// authenticator: bearer tokens from the OIDC provider, 401 without.
func TestDoorsWithSignIn(t *testing.T) {
	srv, s := doorsServer(t, 30, true)
	ctx := context.Background()

	// MCP: 401 with the resource metadata, which names the issuer.
	resp, err := http.Post(srv.URL+mcpserver.Path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	metaURL := srv.URL + mcpserver.MetadataPath + mcpserver.Path
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+metaURL+`"`) {
		t.Fatalf("anonymous /mcp: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	resp, err = http.Get(metaURL)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if err != nil || meta.Resource != srv.URL+mcpserver.Path || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != s.oidc.Issuer() {
		t.Fatalf("metadata %+v %v", meta, err)
	}

	// MCP with a token.
	tok := s.token(t, "eng")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL + mcpserver.Path, HTTPClient: &http.Client{Transport: bearer{tok}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSearch, Arguments: map[string]any{"limit": 5}})
	if err != nil || res.IsError {
		t.Fatalf("search_agents: %v %+v", err, res)
	}
	var out mcpserver.SearchOutput
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || out.Total != 30 || len(out.Agents) != 5 {
		t.Errorf("search_agents = %d of %d, %v", len(out.Agents), out.Total, err)
	}

	// A2A: the card is public, the interfaces need a token.
	resp, err = http.Get(srv.URL + a2aagent.CardPath)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte("openIdConnectUrl")) {
		t.Fatalf("card: %d %s", resp.StatusCode, raw)
	}
	for _, tc := range []struct {
		token string
		ok    bool
	}{{"", false}, {"not-a-token", false}, {tok, true}} {
		c, err := a2aclient.NewFactory(a2aclient.WithDefaultsDisabled(), a2aclient.WithJSONRPCTransport(&http.Client{Transport: bearer{tc.token}})).
			CreateFromEndpoints(ctx, []*a2a.AgentInterface{{URL: srv.URL + a2aagent.JSONRPCPath, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("translate documents"))})
		if tc.ok {
			if task, isTask := r.(*a2a.Task); err != nil || !isTask || task.Status.State != a2a.TaskStateCompleted {
				t.Errorf("with a token: %v %v", r, err)
			}
		} else if err == nil {
			t.Errorf("token %q was answered", tc.token)
		}
	}
}

// TestManyMCPSessions opens 200 MCP sessions at once, calls a tool on
// each, closes them, and checks that none failed and that the heap went
// back to about where it started.
func TestManyMCPSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("200 sessions")
	}
	srv, _ := doorsServer(t, 50, false)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	round := func() {
		var wg sync.WaitGroup
		errs := make(chan error, 200)
		for i := range 200 {
			wg.Go(func() {
				ctx := context.Background()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
					&mcp.StreamableClientTransport{Endpoint: srv.URL + mcpserver.Path}, nil)
				if err != nil {
					errs <- err
					return
				}
				defer cs.Close()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSearch, Arguments: map[string]any{"query": fmt.Sprint("agent ", i%7), "limit": 3}})
				if err != nil || res.IsError {
					errs <- fmt.Errorf("session %d: %v %v", i, err, res)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
	round() // warm up: pools, caches, the index's first queries
	before, routines := heap(), runtime.NumGoroutine()
	round()
	// Closed sessions are removed by the server on DELETE; give their
	// goroutines a moment to end. A session left behind holds at least
	// one goroutine, so 200 of them show.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > routines+20 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	after := heap()
	t.Logf("heap before %d KiB, after 200 sessions closed %d KiB; goroutines %d then %d",
		before>>10, after>>10, routines, runtime.NumGoroutine())
	if n := runtime.NumGoroutine(); n > routines+20 {
		t.Errorf("%d goroutines after 200 sessions closed, %d before", n, routines)
	}
	if after > before+4<<20 {
		t.Errorf("heap grew by %d KiB over 200 closed sessions", (after-before)>>10)
	}
}

// BenchmarkDoorSearch measures one search through each door over loopback
// HTTP, each as a plain HTTP request so that only the server's work is
// timed (the SDKs' clients add their own): the JSON API's GET, MCP's
// tools/call of search_agents in an initialized session, and A2A's
// SendMessage over JSON-RPC v1.0. The differences are what each door
// adds. REGISTRY_BENCH_AGENTS sets the catalog's size (2,000 by default).
func BenchmarkDoorSearch(b *testing.B) {
	n := 2000
	if v := os.Getenv("REGISTRY_BENCH_AGENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	srv, _ := doorsServer(b, n, false)
	const words = "translate documents"
	post := func(b *testing.B, path, body string, header map[string]string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode >= 300 {
			raw, _ := io.ReadAll(resp.Body)
			b.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
		}
		return resp
	}
	drain := func(resp *http.Response) int {
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return int(n)
	}
	b.Run("api", func(b *testing.B) {
		u := srv.URL + "/api/v1/agents?limit=10&q=" + url.QueryEscape(words)
		for b.Loop() {
			resp, err := http.Get(u)
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatal(err, resp.StatusCode)
			}
			drain(resp)
		}
	})
	b.Run("mcp", func(b *testing.B) {
		resp := post(b, mcpserver.Path, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`, nil)
		drain(resp)
		h := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
		drain(post(b, mcpserver.Path, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h))
		call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_agents","arguments":{"query":"` + words + `","limit":10}}}`
		for b.Loop() {
			drain(post(b, mcpserver.Path, call, h))
		}
	})
	b.Run("a2a", func(b *testing.B) {
		msg := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"` + words + `"}]}}}`
		h := map[string]string{"A2A-Version": "1.0"}
		for b.Loop() {
			drain(post(b, a2aagent.JSONRPCPath, strings.Replace(msg, `"m"`, `"`+a2a.NewMessageID()+`"`, 1), h))
		}
	})
}
