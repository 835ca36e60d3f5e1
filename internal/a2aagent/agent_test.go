package a2aagent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

var actor = catalog.System("test")

type fixture struct {
	converter, grpcConverter, translator, ledger string
}

func seed(t testing.TB, s *catalog.Store) fixture {
	t.Helper()
	ctx := context.Background()
	add := func(slug, name, desc, in, binding string) string {
		raw := fmt.Sprintf(`{"name": %q, "description": %q, "version": "1.0.0",
  "supportedInterfaces": [{"url": "https://agents.example/%s/a2a", "protocolBinding": %q, "protocolVersion": "1.0"}],
  "capabilities": {}, "defaultInputModes": [%q], "defaultOutputModes": ["application/json"],
  "skills": [{"id": "s", "name": %q, "description": %q, "tags": ["money"]}]}`, name, desc, slug, binding, in, name, desc)
		c, err := card.Parse([]byte(raw), card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Upsert(ctx, actor, catalog.UpsertInput{CardURL: "https://agents.example/" + slug + "/.well-known/agent-card.json", Card: c, Source: catalog.SourceURL})
		if err != nil {
			t.Fatal(err)
		}
		return res.Agent.ID
	}
	var f fixture
	f.converter = add("fx", "Currency Converter", "Converts amounts between currencies at today's rates.", "application/json", "JSONRPC")
	f.grpcConverter = add("fxg", "Currency Converter gRPC", "Converts currencies over gRPC for batch jobs.", "application/json", "GRPC")
	f.translator = add("tr", "Document Translator", "Translates PDF documents between languages.", "application/pdf", "JSONRPC")
	f.ledger = add("lg", "Currency Ledger", "Books currency conversions into the finance ledger.", "application/json", "JSONRPC")
	if _, _, err := s.SaveCollection(ctx, actor, catalog.Collection{Name: "finance-only", Groups: []string{"finance"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddToCollection(ctx, actor, "finance-only", f.ledger); err != nil {
		t.Fatal(err)
	}
	return f
}

// serve runs the agent behind a stand-in for the authenticator: the
// X-Test-Caller header names the caller ("viewer", "finance"); without
// it the caller is anonymous with no role.
func serve(t testing.TB, cat Catalog) (*httptest.Server, *Agent) {
	t.Helper()
	// The agent's card names the server's URL, so the server is built
	// first and started once its handler is set.
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	ag, err := New(Options{Catalog: cat, BaseURL: "http://" + srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(CardPath, ag.ServeCard)
	mux.Handle("/a2a/", ag)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p auth.Principal
		switch r.Header.Get("X-Test-Caller") {
		case "viewer":
			p = auth.Principal{Subject: "v", Role: auth.Viewer, Source: auth.SourceBearer}
		case "finance":
			p = auth.Principal{Subject: "f", Role: auth.Viewer, Groups: []string{"finance"}, Source: auth.SourceBearer}
		}
		mux.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p, "")))
	})
	srv.Start()
	return srv, ag
}

type callerTransport struct{ caller string }

func (c callerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Caller", c.caller)
	return http.DefaultTransport.RoundTrip(r)
}

// interfaces reads the card the registry serves with the registry's own
// parser: every interface it declares is driven.
func interfaces(t testing.TB, srv *httptest.Server) []card.Interface {
	t.Helper()
	resp, err := http.Get(srv.URL + CardPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	c, err := card.Parse(raw, card.DefaultLimits())
	if err != nil {
		t.Fatalf("the registry's card does not parse: %v\n%s", err, raw)
	}
	if len(c.Interfaces) != 3 {
		t.Fatalf("card declares %+v", c.Interfaces)
	}
	return c.Interfaces
}

func client(t testing.TB, iface card.Interface, caller string) *a2aclient.Client {
	t.Helper()
	hc := &http.Client{Transport: callerTransport{caller}}
	var opt a2aclient.FactoryOption
	version := a2a.Version
	switch {
	case iface.ProtocolVersion == "0.3":
		version = a2av0.Version
		opt = a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc})
	case iface.Binding == card.BindingJSONRPC:
		opt = a2aclient.WithJSONRPCTransport(hc)
	default:
		opt = a2aclient.WithRESTTransport(hc)
	}
	c, err := a2aclient.NewFactory(a2aclient.WithDefaultsDisabled(), opt).CreateFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{{URL: iface.URL, ProtocolBinding: a2a.TransportProtocol(iface.Binding), ProtocolVersion: version}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// result reads the data part of a completed task's artifact.
func result(t testing.TB, res a2a.SendMessageResult) (*a2a.Task, Result, string) {
	t.Helper()
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("answer is %T, want a task", res)
	}
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("task %s with %d artifacts", task.Status.State, len(task.Artifacts))
	}
	var r Result
	var text string
	data := false
	for _, p := range task.Artifacts[0].Parts {
		if d := p.Data(); d != nil {
			data = true
			b, _ := json.Marshal(d)
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
		}
		text += p.Text()
	}
	if text == "" || !data {
		b, _ := json.Marshal(task.Artifacts[0])
		t.Fatalf("artifact lacks a data or a text part: %s", b)
	}
	return task, r, text
}

func entryIDs(r Result) map[string]bool {
	m := map[string]bool{}
	for _, e := range r.Entries {
		m[e.ID] = true
	}
	return m
}

func send(t testing.TB, c *a2aclient.Client, contextID, text string) a2a.SendMessageResult {
	t.Helper()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.ContextID = contextID
	res, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	return res
}

func TestConversationOverEveryInterface(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, st *catalog.Store) {
		f := seed(t, st)
		srv, _ := serve(t, st)
		for _, iface := range interfaces(t, srv) {
			t.Run(iface.Binding+"-"+iface.ProtocolVersion, func(t *testing.T) {
				c := client(t, iface, "viewer")
				task, r, text := result(t, send(t, c, "", "find an agent that converts currencies and accepts JSON"))
				got := entryIDs(r)
				if !got[f.converter] || !got[f.grpcConverter] || got[f.translator] || got[f.ledger] {
					t.Errorf("first turn found %v", got)
				}
				if r.Entries[0].Identifier == "" || !strings.HasPrefix(r.Entries[0].Identifier, "urn:air:agents.example:") ||
					r.Entries[0].URL == "" || len(r.Entries[0].Skills) != 1 || r.Entries[0].Score != 100 || r.Entries[0].Type != "application/a2a-agent-card+json" {
					t.Errorf("entry = %+v", r.Entries[0])
				}
				if !strings.Contains(text, "Currency Converter") {
					t.Errorf("summary = %q", text)
				}
				// Follow-ups narrow the same search.
				_, r, _ = result(t, send(t, c, task.ContextID, "over gRPC"))
				if got := entryIDs(r); len(got) != 1 || !got[f.grpcConverter] || r.Query.Text != "converts currencies" {
					t.Errorf("over gRPC: %v, query %+v", got, r.Query)
				}
				_, r, text = result(t, send(t, c, task.ContextID, "only signed ones"))
				if r.Total != 0 || r.Query.Filters[catalog.FieldSignature][0] != catalog.SignatureVerified || !strings.HasPrefix(text, "No agent") {
					t.Errorf("only signed: %+v %q", r, text)
				}
				// Another context starts afresh.
				if _, r, _ = result(t, send(t, c, "", "over gRPC")); r.Query.Text != "" || len(r.Entries) != 1 {
					t.Errorf("fresh context: %+v", r)
				}
			})
		}
	})
}

func TestCallerScope(t *testing.T) {
	st := catalogtest.SQLite(t)
	f := seed(t, st)
	srv, _ := serve(t, st)
	iface := interfaces(t, srv)[0]
	_, r, _ := result(t, send(t, client(t, iface, "finance"), "", "currency"))
	if !entryIDs(r)[f.ledger] {
		t.Errorf("finance does not see the ledger: %v", entryIDs(r))
	}
	_, r, _ = result(t, send(t, client(t, iface, "viewer"), "", "currency"))
	if entryIDs(r)[f.ledger] {
		t.Errorf("a viewer outside finance sees the ledger")
	}
	_, r, text := result(t, send(t, client(t, iface, "viewer"), "", "describe "+f.ledger))
	if len(r.Entries) != 0 || !strings.HasPrefix(text, "No agent") {
		t.Errorf("describe hidden: %+v %q", r, text)
	}
	_, r, text = result(t, send(t, client(t, iface, "finance"), "", "describe "+f.ledger))
	if len(r.Entries) != 1 || !strings.Contains(text, "Currency Ledger") {
		t.Errorf("describe visible: %+v %q", r, text)
	}
	// Without the viewer role: 401.
	_, err := client(t, iface, "").SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("x"))})
	if err == nil {
		t.Error("an anonymous caller was answered")
	}
}

func TestStreaming(t *testing.T) {
	st := catalogtest.SQLite(t)
	f := seed(t, st)
	srv, _ := serve(t, st)
	for _, iface := range interfaces(t, srv) {
		c := client(t, iface, "viewer")
		var events []a2a.Event
		for ev, err := range c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("currency converter over gRPC"))}) {
			if err != nil {
				t.Fatalf("%s %s: %v", iface.Binding, iface.ProtocolVersion, err)
			}
			events = append(events, ev)
		}
		// The answer is ready at once: the stream is one event, the
		// completed task with its artifact.
		task, ok := events[len(events)-1].(*a2a.Task)
		if !ok {
			t.Fatalf("%s %s: last event %T", iface.Binding, iface.ProtocolVersion, events[len(events)-1])
		}
		if _, r, _ := result(t, task); !entryIDs(r)[f.grpcConverter] || len(r.Entries) != 1 {
			t.Errorf("%s %s: streamed %+v", iface.Binding, iface.ProtocolVersion, r)
		}
	}
}

func TestBadMessagesAreRefusedAndTheAgentStaysUp(t *testing.T) {
	st := catalogtest.SQLite(t)
	seed(t, st)
	srv, _ := serve(t, st)
	for _, iface := range interfaces(t, srv) {
		c := client(t, iface, "viewer")
		for _, tc := range []struct {
			name string
			msg  *a2a.Message
			want string
		}{
			{"no text", a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"q": "x"})), "no text"},
			{"blank text", a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("   ")), "no text"},
			{"file part", a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("find"), a2a.NewRawPart([]byte("%PDF"))), "file parts"},
			{"file URL", a2a.NewMessage(a2a.MessageRoleUser, a2a.NewFileURLPart("https://x.example/a.pdf", "application/pdf")), "file parts"},
			{"too long", a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(strings.Repeat("word ", 2000))), "too long"},
			{"1 MB", a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(strings.Repeat("x", 1<<20))), "too long"},
		} {
			_, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: tc.msg})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %s, %s: %v; want an error saying %q", iface.Binding, iface.ProtocolVersion, tc.name, err, tc.want)
			}
		}
		result(t, send(t, c, "", "currency"))
	}
	// A body past the bound is cut off, not read into memory.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+JSONRPCPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"x":"`+strings.Repeat("x", 3<<20)+`"}}`))
	req.Header.Set("X-Test-Caller", "viewer")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"error"`) || len(body) > 4096 {
		t.Errorf("oversized request: %d %.300s", resp.StatusCode, body)
	}
	result(t, send(t, client(t, interfaces(t, srv)[0], "viewer"), "", "currency"))
}

func TestCardServed(t *testing.T) {
	st := catalogtest.SQLite(t)
	srv, ag := serve(t, st)
	resp, err := http.Get(srv.URL + CardPath)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(raw) != string(ag.Card()) || resp.Header.Get("ETag") == "" {
		t.Fatalf("card differs or no ETag")
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	// The v0.3 fields ride along for older clients (a mixed card).
	if doc["url"] != srv.URL+JSONRPCv0 || doc["protocolVersion"] == nil || doc["supportedInterfaces"] == nil {
		t.Errorf("card = %s", raw)
	}
	skills, _ := doc["skills"].([]any)
	if len(skills) != 2 {
		t.Errorf("skills = %v", skills)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+CardPath, nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("conditional GET: %d", resp.StatusCode)
	}
}
