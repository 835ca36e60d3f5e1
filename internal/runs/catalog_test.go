package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// catalogEnv is a Service over the real catalog, on each database, with
// one honest agent catalogued.
func catalogEnv(t *testing.T, s *catalog.Store, mutate ...func(*Options)) (*Service, string) {
	t.Helper()
	peer := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
	raw := fmt.Sprintf(`{"name": "Peer", "description": "d", "version": "1",
		"supportedInterfaces": [{"url": %q, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
		"capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [],
		"securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}}`,
		peer.Interface.URL)
	c, err := card.Parse([]byte(raw), card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Upsert(context.Background(), catalog.System("test"),
		catalog.UpsertInput{CardURL: "https://peer.example/.well-known/agent-card.json", Card: c, Source: catalog.SourceURL})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Runner: proxy.New(proxy.Options{Client: proxytest.Loopback()}), Store: s, Keeper: proxy.NewKeeper(0, 0)}
	for _, m := range mutate {
		m(&o)
	}
	return New(o), res.Agent.ID
}

// TestFollowUpsAudited: a follow-up message, a resubscription and a
// cancel are each audited with the caller who made them, in the
// transaction that stores the turn, like the run's start.
func TestFollowUpsAudited(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		svc, agentID := catalogEnv(t, s)
		req := catalog.Request{ID: "req-1", ClientAddr: "127.0.0.1"}
		ann := Caller{Actor: catalog.User("ann").For(req), Subject: "ann", Scope: catalog.ScopeAll}
		root := Caller{Actor: catalog.User("root").For(req), Subject: "root", Scope: catalog.ScopeAll, AnyRun: true}

		first, err := svc.Start(ctx, ann, agentID, Turn{Message: proxytest.Text(proxytest.SayAsk)}, Watcher{})
		if err != nil || first.Err != nil || first.Run.State != string(a2a.TaskStateInputRequired) {
			t.Fatalf("Start = %+v, %v", first.Run, err)
		}
		ref := Ref{RunID: first.Run.ID}
		if out, err := svc.Continue(ctx, ann, ref, Turn{Message: proxytest.Text("Paris")}, Watcher{}); err != nil || out.Err != nil {
			t.Fatalf("Continue: %v %v", err, out.Err)
		}
		second, err := svc.Start(ctx, ann, agentID, Turn{Message: proxytest.Text(proxytest.SayAsk)}, Watcher{})
		if err != nil || second.Err != nil {
			t.Fatalf("second Start: %v", err)
		}
		if _, err := svc.Resubscribe(ctx, root, Ref{RunID: second.Run.ID}, Turn{}, Watcher{}); err != nil {
			t.Fatalf("Resubscribe: %v", err)
		}
		if _, err := svc.Cancel(ctx, root, Ref{RunID: second.Run.ID}, Turn{}); err != nil {
			t.Fatalf("Cancel: %v", err)
		}

		page, err := s.AuditLog(ctx, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		type row struct{ subject, run, op string }
		var got []row
		for _, e := range page.Entries {
			if e.Action != catalog.ActionRun {
				continue
			}
			var d struct {
				RunID string `json:"run_id"`
				Op    string `json:"op"`
			}
			if err := json.Unmarshal(e.Detail, &d); err != nil {
				t.Fatal(err)
			}
			got = append(got, row{e.Subject, d.RunID, d.Op})
		}
		// Newest first.
		want := []row{
			{"root", second.Run.ID, proxy.OpCancel},
			{"root", second.Run.ID, proxy.OpResubscribe},
			{"ann", second.Run.ID, ""},
			{"ann", first.Run.ID, proxy.OpSend},
			{"ann", first.Run.ID, ""},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("audited runs = %v\nwant %v", got, want)
		}
	})
}

// TestNewRunJoinsOnlyOwnConversation: a new run may name the task or
// context of one of the caller's own runs of that agent, never another
// tester's (or an anonymous caller's, or another agent's).
func TestNewRunJoinsOnlyOwnConversation(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		svc, agentID := catalogEnv(t, s)
		ann := Caller{Actor: catalog.User("ann"), Subject: "ann", Scope: catalog.ScopeAll}
		bob := Caller{Actor: catalog.User("bob"), Subject: "bob", Scope: catalog.ScopeAll}
		anon := Caller{Actor: catalog.System("anonymous"), Scope: catalog.ScopeAll}
		first, err := svc.Start(ctx, ann, agentID, Turn{Message: proxytest.Text(proxytest.SayAsk)}, Watcher{})
		if err != nil || first.Run.TaskID == "" || first.Run.ContextID == "" {
			t.Fatalf("Start = %+v, %v", first.Run, err)
		}
		for _, tt := range []struct {
			name            string
			caller          Caller
			taskID, context string
			want            Kind // "" = accepted
		}{
			{"another tester's task", bob, first.Run.TaskID, "", KindNotYours},
			{"another tester's context", bob, "", first.Run.ContextID, KindNotYours},
			{"anonymous", anon, "", first.Run.ContextID, KindNotYours},
			{"a made-up context", ann, "", "no-such-context", KindNotYours},
			{"the starter's own context", ann, "", first.Run.ContextID, ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				msg := proxytest.Text("hello")
				msg.TaskID, msg.ContextID = a2a.TaskID(tt.taskID), tt.context
				_, err := svc.Start(ctx, tt.caller, agentID, Turn{Message: msg}, Watcher{})
				if KindOf(err) != tt.want {
					t.Errorf("Start = %v (kind %q), want kind %q", err, KindOf(err), tt.want)
				}
			})
		}
	})
}

// TestRunTranscriptIsItsTesters: a run made with credentials shows others
// that it happened — agent, tester, state — but not what the agent
// answered, nor the task and context to join; its tester and admins read
// it all. With PrivateAll, every run is so.
func TestRunTranscriptIsItsTesters(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		for _, all := range []bool{false, true} {
			svc, agentID := catalogEnv(t, s, func(o *Options) { o.PrivateAll = all })
			ann := Caller{Actor: catalog.User("ann"), Subject: "ann", Scope: catalog.ScopeAll}
			bob := Caller{Actor: catalog.User("bob"), Subject: "bob", Scope: catalog.ScopeAll}
			anon := Caller{Actor: catalog.System("anonymous"), Scope: catalog.ScopeAll}
			root := Caller{Actor: catalog.User("root"), Subject: "root", Scope: catalog.ScopeAll, AnyRun: true}
			with, err := svc.Start(ctx, ann, agentID, Turn{Message: proxytest.Text("private words"), Credentials: proxy.Credentials{Bearer: "tok-1234"}}, Watcher{})
			if err != nil || with.Err != nil {
				t.Fatalf("Start with credentials: %v %v", err, with.Err)
			}
			without, err := svc.Start(ctx, ann, agentID, Turn{Message: proxytest.Text("open words")}, Watcher{})
			if err != nil || without.Err != nil {
				t.Fatalf("Start: %v %v", err, without.Err)
			}
			for _, tt := range []struct {
				name   string
				caller Caller
				run    string
				hidden bool
			}{
				{"the tester, with credentials", ann, with.Run.ID, false},
				{"an admin, with credentials", root, with.Run.ID, false},
				{"another tester, with credentials", bob, with.Run.ID, true},
				{"anonymous, with credentials", anon, with.Run.ID, true},
				{"another tester, without credentials", bob, without.Run.ID, all},
			} {
				rd, err := svc.Get(ctx, tt.caller, tt.run)
				if err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				raw, _ := json.Marshal(rd.Transcript)
				leaked := strings.Contains(string(raw)+string(rd.Run.Transcript), "words") || rd.Run.TaskID != "" || rd.Run.ContextID != ""
				if rd.Withheld != tt.hidden || (tt.hidden && leaked) || (!tt.hidden && !leaked) {
					t.Errorf("all=%v %s: withheld %v (transcript shown: %v), want withheld %v", all, tt.name, rd.Withheld, leaked, tt.hidden)
				}
				if rd.Run.Subject != "ann" || rd.Run.State == "" {
					t.Errorf("all=%v %s: the run's existence is not shown: %+v", all, tt.name, rd.Run)
				}
			}
		}
	})
}

// TestTranscriptBounded: a run whose agent streams more than the bound
// is stored within MaxTranscriptBytes, marked truncated, its latest
// result kept; the run still reads and continues.
func TestTranscriptBounded(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		svc, agentID := catalogEnv(t, s)
		ann := Caller{Actor: catalog.User("ann"), Subject: "ann", Scope: catalog.ScopeAll}
		// The honest agent answers one artifact event per word.
		words := strings.Repeat(strings.Repeat("w", 1000)+" ", 400)
		out, err := svc.Start(ctx, ann, agentID, Turn{Message: proxytest.Text(words)}, Watcher{})
		if err != nil || out.Err != nil {
			t.Fatalf("Start: %v %v", err, out.Err)
		}
		stored, err := s.Run(ctx, catalog.ScopeAll, out.Run.ID)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := TranscriptOf(stored)
		if err != nil {
			t.Fatal(err)
		}
		if len(stored.Transcript) > MaxTranscriptBytes || !tr.Truncated || tr.Task == nil {
			t.Errorf("stored %d bytes (bound %d), truncated %v, result kept %v", len(stored.Transcript), MaxTranscriptBytes, tr.Truncated, tr.Task != nil)
		}
		if stored.State != "TASK_STATE_COMPLETED" {
			t.Errorf("state %q", stored.State)
		}
	})
}

// TestResultStoredOnce: a run's result is stored once, in the events it
// folds from (the blocking answer, the stream's events), never beside them
// as well, and every reader gets it back; a run whose result does not
// fold from its events (here a stream cut short by the bound) keeps it on
// its own.
func TestResultStoredOnce(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		svc, agentID := catalogEnv(t, s)
		ann := Caller{Actor: catalog.User("ann"), Subject: "ann", Scope: catalog.ScopeAll}
		for _, noStream := range []bool{true, false} {
			words := strings.Repeat("result-word ", 30)
			out, err := svc.Start(ctx, ann, agentID, Turn{Message: proxytest.Text(words), NoStream: noStream}, Watcher{})
			if err != nil || out.Err != nil {
				t.Fatalf("Start: %v %v", err, out.Err)
			}
			stored, err := s.Run(ctx, catalog.ScopeAll, out.Run.ID)
			if err != nil {
				t.Fatal(err)
			}
			var top map[string]json.RawMessage
			if err := json.Unmarshal(stored.Transcript, &top); err != nil {
				t.Fatal(err)
			}
			_, task := top["task"]
			_, msg := top["message"]
			if task || msg || string(top["result_turn"]) != "0" {
				t.Errorf("noStream %v: stored keys task %v, message %v, result_turn %s; want the result in turn 0's events only",
					noStream, task, msg, top["result_turn"])
			}
			tr, err := TranscriptOf(stored)
			if err != nil {
				t.Fatal(err)
			}
			var got a2a.Task
			if err := json.Unmarshal(tr.Task, &got); err != nil || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) == 0 {
				t.Errorf("noStream %v: result read back %s (%v)", noStream, tr.Task, err)
			}
			if tr.ResultTurn != nil || string(tr.Task) != string(out.Transcript.Task) {
				t.Errorf("noStream %v: the reader's result differs from the run's outcome", noStream)
			}
		}
	})
}

// TestRunRowBounded: everything a run stores stays within
// MaxTranscriptBytes, the agent's ids included: an agent that names a
// task id of megabytes fails the run, and the id is stored nowhere.
func TestRunRowBounded(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		huge := strings.Repeat("i", 2<<20)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.NewDecoder(r.Body).Decode(&req)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"task\":{\"id\":%q,\"contextId\":%q,\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}}\n\n",
				req.ID, huge, huge)
		}))
		t.Cleanup(srv.Close)
		raw := fmt.Sprintf(`{"name": "Rogue", "description": "d", "version": "1",
			"supportedInterfaces": [{"url": %q, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
			"capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []}`, srv.URL)
		c, err := card.Parse([]byte(raw), card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: "https://rogue.example/.well-known/agent-card.json", Card: c, Source: catalog.SourceURL})
		if err != nil {
			t.Fatal(err)
		}
		svc := New(Options{Runner: proxy.New(proxy.Options{Client: proxytest.Loopback()}), Store: s, Keeper: proxy.NewKeeper(0, 0)})
		ann := Caller{Actor: catalog.User("ann"), Subject: "ann", Scope: catalog.ScopeAll}
		out, err := svc.Start(ctx, ann, res.Agent.ID, Turn{Message: proxytest.Text("hi")}, Watcher{})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.Run(ctx, catalog.ScopeAll, out.Run.ID)
		if err != nil {
			t.Fatal(err)
		}
		total := len(stored.Transcript) + len(stored.TaskID) + len(stored.ContextID) + len(stored.InterfaceURL) + len(stored.ErrorCode) + len(stored.State)
		if total > MaxTranscriptBytes || stored.TaskID != "" || stored.State != StateFailed || stored.ErrorCode != proxy.CodeAgentError {
			t.Errorf("stored %d bytes, task id of %d, state %q, error %q; want at most %d, no id, failed agent_error",
				total, len(stored.TaskID), stored.State, stored.ErrorCode, MaxTranscriptBytes)
		}
	})
}
