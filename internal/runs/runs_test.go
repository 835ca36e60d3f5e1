package runs

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// memStore keeps agents and runs in memory and records every run update,
// so a test can see what was stored while a turn still ran.
type memStore struct {
	mu      sync.Mutex
	agents  map[string]catalog.Agent
	runs    map[string]catalog.Run
	updates []catalog.Run
}

func newMemStore() *memStore {
	return &memStore{agents: map[string]catalog.Agent{}, runs: map[string]catalog.Run{}}
}

func (m *memStore) Agent(_ context.Context, _ catalog.Scope, id string) (catalog.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.agents[id]
	if !ok {
		return a, catalog.ErrNotFound
	}
	return a, nil
}

func (m *memStore) CreateRun(_ context.Context, _ catalog.Actor, r catalog.Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.runs[r.ID]; ok {
		return catalog.ErrConflict
	}
	m.runs[r.ID] = r
	return nil
}

func (m *memStore) UpdateRun(_ context.Context, _ catalog.Actor, r catalog.Run, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.runs[r.ID]
	if !ok {
		return catalog.ErrNotFound
	}
	if old.Revision != r.Revision {
		return catalog.ErrConflict
	}
	r.Revision++
	m.runs[r.ID] = r
	m.updates = append(m.updates, r)
	return nil
}

func (m *memStore) Run(_ context.Context, _ catalog.Scope, id string) (catalog.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[id]
	if !ok {
		return r, catalog.ErrNotFound
	}
	return r, nil
}

func (m *memStore) AgentRuns(_ context.Context, _ catalog.Scope, agentID, kind string, limit int) ([]catalog.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []catalog.Run
	for _, r := range m.runs {
		if r.AgentID == agentID && r.Kind == kind && len(out) < limit {
			out = append(out, r)
		}
	}
	return out, nil
}

func (m *memStore) HasConversation(_ context.Context, agentID, subject, taskID, contextID string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.runs {
		if r.AgentID == agentID && r.Kind == catalog.RunKindRun && r.Subject == subject &&
			(taskID == "" || r.TaskID == taskID) && (contextID == "" || r.ContextID == contextID) {
			return true, nil
		}
	}
	return false, nil
}

func (m *memStore) stored(t *testing.T, id string) catalog.Run {
	t.Helper()
	r, err := m.Run(context.Background(), catalog.ScopeAll, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// env is a Service over an honest in-process agent, catalogued as "peer".
type env struct {
	svc    *Service
	store  *memStore
	keeper *proxy.Keeper
	peer   proxytest.Peer
}

func newEnv(t *testing.T, mutate func(*Options)) env {
	t.Helper()
	peer := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
	st := newMemStore()
	c := proxytest.Card(true, peer.Interface)
	c.Capabilities.Extensions = []card.Extension{{URI: "https://ext.example/declared"}}
	c.SecuritySchemes = []card.SecurityScheme{{Name: "bearer", Type: card.SchemeHTTP, Scheme: "bearer"}}
	st.agents["peer"] = catalog.Agent{ID: "peer", Card: c}
	keeper := proxy.NewKeeper(0, 0)
	o := Options{Runner: proxy.New(proxy.Options{Client: proxytest.Loopback()}), Store: st, Keeper: keeper}
	if mutate != nil {
		mutate(&o)
	}
	return env{svc: New(o), store: st, keeper: keeper, peer: peer}
}

var ann = Caller{Actor: catalog.User("ann"), Subject: "ann", Scope: catalog.ScopeAll}

func TestStartCompletesAndStores(t *testing.T) {
	e := newEnv(t, nil)
	var started []string
	var events int
	w := Watcher{
		Started: func(run catalog.Run, turn int) { started = append(started, run.ID) },
		Event:   func(turn int, _ proxy.Event) { events++ },
	}
	out, err := e.svc.Start(context.Background(), ann, "peer", Turn{Message: proxytest.Text("hi")}, w)
	if err != nil || out.Err != nil {
		t.Fatalf("Start = %v, turn error %v", err, out.Err)
	}
	if len(started) != 1 || started[0] != out.Run.ID || events == 0 {
		t.Errorf("watcher heard started %v, %d events", started, events)
	}
	got := e.store.stored(t, out.Run.ID)
	if got.State != string(a2a.TaskStateCompleted) || got.Subject != "ann" || got.TaskID == "" {
		t.Errorf("stored run = %+v", got)
	}
	if len(out.Transcript.Turns) != 1 || out.Transcript.Turns[0].Op != proxy.OpSend {
		t.Errorf("transcript turns = %+v", out.Transcript.Turns)
	}
}

// TestTaskNotedAsRunning: once the agent names its task, the run is
// stored with it, running, before the turn ends (the console's copy of
// the flow once stored the task without the state).
func TestTaskNotedAsRunning(t *testing.T) {
	e := newEnv(t, nil)
	out, err := e.svc.Start(context.Background(), ann, "peer", Turn{Message: proxytest.Text(proxytest.SayAsk)}, Watcher{})
	if err != nil {
		t.Fatal(err)
	}
	e.store.mu.Lock()
	defer e.store.mu.Unlock()
	if len(e.store.updates) < 2 {
		t.Fatalf("%d updates, want the noted task and the settled turn", len(e.store.updates))
	}
	noted := e.store.updates[0]
	if noted.TaskID != out.Run.TaskID || noted.State != StateRunning || noted.InterfaceURL != e.peer.Interface.URL {
		t.Errorf("noted run = task %q state %q via %q; want task %q running via %q",
			noted.TaskID, noted.State, noted.InterfaceURL, out.Run.TaskID, e.peer.Interface.URL)
	}
	if last := e.store.updates[len(e.store.updates)-1]; last.State != string(a2a.TaskStateInputRequired) {
		t.Errorf("settled state = %q, want input-required", last.State)
	}
}

// TestRefusals: the service's own checks refuse before the agent is
// called and store nothing (the console's copy of the flow once skipped
// the extension check).
func TestRefusals(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	asked, err := e.svc.Start(ctx, ann, "peer", Turn{Message: proxytest.Text(proxytest.SayAsk)}, Watcher{})
	if err != nil {
		t.Fatal(err)
	}
	done, err := e.svc.Start(ctx, ann, "peer", Turn{Message: proxytest.Text("hi")}, Watcher{})
	if err != nil {
		t.Fatal(err)
	}
	e.store.mu.Lock()
	done.Run.TaskID = ""
	e.store.runs[done.Run.ID] = done.Run
	e.store.mu.Unlock()
	bob := Caller{Actor: catalog.User("bob"), Subject: "bob", Scope: catalog.ScopeAll}
	anonymous := Caller{Actor: catalog.System("anonymous"), Scope: catalog.ScopeAll}
	admin := Caller{Actor: catalog.User("root"), Subject: "root", Scope: catalog.ScopeAll, AnyRun: true}
	follow := Turn{Message: proxytest.Text("Paris")}
	for _, tc := range []struct {
		name string
		do   func() error
		want Kind
	}{
		{"undeclared extension", func() error {
			_, err := e.svc.Start(ctx, ann, "peer", Turn{Message: proxytest.Text("hi"), Extensions: []string{"https://ext.example/other"}}, Watcher{})
			return err
		}, KindExtension},
		{"unknown agent", func() error {
			_, err := e.svc.Start(ctx, ann, "nobody", Turn{Message: proxytest.Text("hi")}, Watcher{})
			return err
		}, KindNotFound},
		{"no message", func() error { _, err := e.svc.Start(ctx, ann, "peer", Turn{}, Watcher{}); return err }, KindBadRequest},
		{"another tester's run", func() error {
			_, err := e.svc.Continue(ctx, bob, Ref{RunID: asked.Run.ID}, follow, Watcher{})
			return err
		}, KindNotYours},
		{"an anonymous caller owns no run", func() error {
			_, err := e.svc.Cancel(ctx, anonymous, Ref{RunID: asked.Run.ID}, Turn{})
			return err
		}, KindNotYours},
		{"run of another agent", func() error {
			_, err := e.svc.Continue(ctx, ann, Ref{RunID: asked.Run.ID, AgentID: "other"}, follow, Watcher{})
			return err
		}, KindNotFound},
		{"unknown run", func() error { _, err := e.svc.Cancel(ctx, admin, Ref{RunID: "nope"}, Turn{}); return err }, KindNotFound},
		{"cancel without a task", func() error { _, err := e.svc.Cancel(ctx, ann, Ref{RunID: done.Run.ID}, Turn{}); return err }, KindNoTask},
		{"resubscribe without a task", func() error {
			_, err := e.svc.Resubscribe(ctx, ann, Ref{RunID: done.Run.ID}, Turn{}, Watcher{})
			return err
		}, KindNoTask},
		{"resubscribe with a message", func() error {
			_, err := e.svc.Resubscribe(ctx, ann, Ref{RunID: asked.Run.ID}, follow, Watcher{})
			return err
		}, KindBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.store.runs)
			if got := KindOf(tc.do()); got != tc.want {
				t.Errorf("kind = %q, want %q", got, tc.want)
			}
			if len(e.store.runs) != before {
				t.Errorf("a refusal stored a run")
			}
		})
	}
	// The run is still the tester's, untouched, and an admin may go on.
	if _, err := e.svc.Continue(ctx, admin, Ref{RunID: asked.Run.ID}, follow, Watcher{}); err != nil {
		t.Errorf("an admin's follow-up: %v", err)
	}
}

// TestPreflight: the caller's own mistakes found by the proxy are typed.
// A send keeps the attempt as evidence; a cancel stores nothing (the
// console's copy of the flow once mapped neither).
func TestPreflight(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	out, err := e.svc.Start(ctx, ann, "peer", Turn{Message: proxytest.Text("hi"), Choice: proxy.Choice{URL: "http://127.0.0.1:1/undeclared"}}, Watcher{})
	if err != nil {
		t.Fatal(err)
	}
	p := Preflight(out.Err)
	if p == nil || p.Kind != KindInterfaceNotDeclared {
		t.Fatalf("Preflight(%v) = %+v, want interface_not_declared", out.Err, p)
	}
	if got := e.store.stored(t, out.Run.ID); got.State != StateFailed || got.ErrorCode != proxy.CodeInterfaceNotDeclared {
		t.Errorf("stored attempt = state %q code %q", got.State, got.ErrorCode)
	}
	if Preflight(errors.New("agent down")) != nil || Preflight(nil) != nil {
		t.Error("an agent's failure taken for the caller's mistake")
	}

	asked, err := e.svc.Start(ctx, ann, "peer", Turn{Message: proxytest.Text(proxytest.SayAsk)}, Watcher{})
	if err != nil {
		t.Fatal(err)
	}
	bad := Turn{Credentials: proxy.Credentials{Bearer: "a", APIKey: "b"}}
	revision := e.store.stored(t, asked.Run.ID).Revision
	if _, err := e.svc.Cancel(ctx, ann, Ref{RunID: asked.Run.ID}, bad); KindOf(err) != KindCredentials {
		t.Errorf("cancel with two kinds of credentials: %v, want credentials_invalid", err)
	}
	if e.store.stored(t, asked.Run.ID).Revision != revision {
		t.Error("a refused cancel was stored")
	}
}

// TestConversation: a follow-up goes on the task with the credentials the
// run started with; once the task ends they are forgotten, and the next
// message starts a new task in the same context.
func TestConversation(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	creds := proxy.Credentials{Bearer: "tok"}
	asked, err := e.svc.Start(ctx, ann, "peer", Turn{Message: proxytest.Text(proxytest.SayAsk), Credentials: creds}, Watcher{})
	if err != nil {
		t.Fatal(err)
	}
	if !e.svc.Remembers(asked.Run.ID, "ann") || e.svc.Remembers(asked.Run.ID, "bob") {
		t.Fatal("credentials not kept for the tester alone")
	}
	done, err := e.svc.Continue(ctx, ann, Ref{RunID: asked.Run.ID, AgentID: "peer"}, Turn{Message: proxytest.Text("Paris")}, Watcher{})
	if err != nil || done.Err != nil {
		t.Fatalf("follow-up: %v, %v", err, done.Err)
	}
	if done.Run.TaskID != asked.Run.TaskID || done.Run.State != string(a2a.TaskStateCompleted) {
		t.Errorf("follow-up run = task %q state %q, want task %q completed", done.Run.TaskID, done.Run.State, asked.Run.TaskID)
	}
	if got := done.Transcript.Turns[1].CredentialKind; got == "" {
		t.Error("the follow-up did not use the remembered credentials")
	}
	if e.keeper.Len() != 0 {
		t.Error("credentials kept after the task completed")
	}
	next, err := e.svc.Continue(ctx, ann, Ref{RunID: asked.Run.ID}, Turn{Message: proxytest.Text("again")}, Watcher{})
	if err != nil || next.Err != nil {
		t.Fatalf("message after the end: %v, %v", err, next.Err)
	}
	if next.Run.TaskID == asked.Run.TaskID || next.Run.ContextID != asked.Run.ContextID {
		t.Errorf("after the end: task %q context %q; want a new task in context %q", next.Run.TaskID, next.Run.ContextID, asked.Run.ContextID)
	}
}

func TestLimits(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limiter = proxy.NewLimiter(proxy.Limits{PerUserPerMinute: 1}) })
	ctx := context.Background()
	if _, err := e.svc.Start(ctx, ann, "peer", Turn{Message: proxytest.Text("hi")}, Watcher{}); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Start(ctx, ann, "peer", Turn{Message: proxytest.Text("hi")}, Watcher{})
	var re *Error
	if !errors.As(err, &re) || re.Kind != KindRateLimited || re.RetryAfter <= 0 {
		t.Fatalf("second run: %v, want rate limited with a retry time", err)
	}
	if _, _, err := e.svc.Check(ctx, ann, "peer", proxy.Credentials{}); KindOf(err) != KindRateLimited {
		t.Errorf("check past the limit: %v", err)
	}
}

// TestPreparedRunID: a run takes the id a door prepared when no run has
// it, a fresh one otherwise.
func TestPreparedRunID(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	const prepared = "0b6f6f9e-9a43-4d55-8f4e-3f1f5d7c0a11"
	first, err := e.svc.Start(ctx, ann, "peer", Turn{Message: proxytest.Text("hi"), RunID: prepared}, Watcher{})
	if err != nil || first.Run.ID != prepared {
		t.Fatalf("first run id %q (%v), want the prepared one", first.Run.ID, err)
	}
	second, err := e.svc.Start(ctx, ann, "peer", Turn{Message: proxytest.Text("hi"), RunID: prepared}, Watcher{})
	if err != nil || second.Run.ID == prepared || second.Run.ID == "" {
		t.Fatalf("second run id %q (%v), want a fresh one", second.Run.ID, err)
	}
}

// TestCheckChargedPerInterface: a check is admitted as one run and each
// further interface it sends to costs one more from the caller's rate, so
// a card of many interfaces cannot turn one run into many requests.
func TestCheckChargedPerInterface(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limiter = proxy.NewLimiter(proxy.Limits{PerUserPerMinute: 2}) })
	in := e.peer.Interface
	e.store.agents["many"] = catalog.Agent{ID: "many", Card: proxytest.Card(false, in, in, in)}
	_, rec, err := e.svc.Check(context.Background(), ann, "many", proxy.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	var causes []string
	for _, c := range rec.Interfaces {
		causes = append(causes, c.Cause)
	}
	if !slices.Equal(causes, []string{"", "", proxy.CauseRateLimited}) || rec.Works != catalog.WorksAll {
		t.Errorf("causes %q, works %s; want the third interface refused for the rate and the two checked working", causes, rec.Works)
	}
	if _, err := e.svc.Start(context.Background(), ann, "peer", Turn{Message: proxytest.Text("hi")}, Watcher{}); KindOf(err) != KindRateLimited {
		t.Errorf("a run after a check that used the rate: %v, want rate limited", err)
	}
}

func TestCheckStoredAndLatest(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if _, _, ok, err := e.svc.LatestCheck(ctx, catalog.ScopeAll, "peer"); ok || err != nil {
		t.Fatalf("latest check before any: %v, %v", ok, err)
	}
	run, rec, err := e.svc.Check(ctx, ann, "peer", proxy.Credentials{})
	if err != nil || rec.Works != catalog.WorksAll || run.Kind != catalog.RunKindCheck {
		t.Fatalf("Check = %+v, %+v, %v", run, rec, err)
	}
	got, _, ok, err := e.svc.LatestCheck(ctx, catalog.ScopeAll, "peer")
	if err != nil || !ok || got.ID != run.ID {
		t.Errorf("latest check = %q (%v, %v), want %q", got.ID, ok, err, run.ID)
	}
	if _, err := e.svc.Get(ctx, ann, run.ID); KindOf(err) != KindNotFound {
		t.Errorf("a check read as a run: %v", err)
	}
}

// TestSaveMergesOtherTurns: a turn stored while another request's turn
// was stored meanwhile keeps both, in time order.
func TestSaveMergesOtherTurns(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	t0 := time.Now()
	run := catalog.Run{ID: "r", AgentID: "peer", Kind: catalog.RunKindRun, Subject: "ann", Transcript: []byte(`{"turns":[]}`)}
	if err := e.store.CreateRun(ctx, ann.Actor, run); err != nil {
		t.Fatal(err)
	}
	mine := proxy.Transcript{Turns: []proxy.Turn{{Op: proxy.OpSend, StartedAt: t0}}}
	other := proxy.Transcript{Turns: []proxy.Turn{{Op: proxy.OpCancel, StartedAt: t0.Add(time.Second)}}}
	if err := e.svc.save(ctx, ann.Actor, "", run, other, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.save(ctx, ann.Actor, "", run, mine, 0, false); err != nil {
		t.Fatal(err)
	}
	tr, err := TranscriptOf(e.store.stored(t, "r"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Turns) != 2 || tr.Turns[0].Op != proxy.OpSend || tr.Turns[1].Op != proxy.OpCancel {
		t.Errorf("merged turns = %+v", tr.Turns)
	}
}

// TestReplyAnsweredWithError: an agent that answers a reply (or a first
// turn) with a JSON-RPC error instead of an event stream fails the turn
// with the agent's code and message, and the run says failed; it once
// stayed input-required with no error.
func TestReplyAnsweredWithError(t *testing.T) {
	const rpcError = `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the model is overloaded"}}`
	for _, firstFails := range []bool{false, true} {
		t.Run(map[bool]string{false: "reply", true: "first turn"}[firstFails], func(t *testing.T) {
			e := newEnv(t, nil)
			target, err := url.Parse(e.peer.Interface.URL)
			if err != nil {
				t.Fatal(err)
			}
			honest := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, FlushInterval: -1}
			var calls atomic.Int32
			agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 && !firstFails {
					honest.ServeHTTP(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(rpcError))
			}))
			t.Cleanup(agent.Close)
			in := e.peer.Interface
			in.URL = agent.URL
			e.store.agents["peer"] = catalog.Agent{ID: "peer", Card: proxytest.Card(true, in)}

			ctx := context.Background()
			out, err := e.svc.Start(ctx, ann, "peer", Turn{Message: proxytest.Text(proxytest.SayAsk)}, Watcher{})
			if err != nil {
				t.Fatal(err)
			}
			if !firstFails {
				if out.Err != nil || out.Run.State != string(a2a.TaskStateInputRequired) {
					t.Fatalf("first turn = state %q, err %v", out.Run.State, out.Err)
				}
				out, err = e.svc.Continue(ctx, ann, Ref{RunID: out.Run.ID}, Turn{Message: proxytest.Text("Paris")}, Watcher{})
				if err != nil {
					t.Fatal(err)
				}
			}
			last := out.Transcript.Turns[len(out.Transcript.Turns)-1]
			if out.Err == nil || last.Error == nil || last.Error.Code != proxy.CodeAgentError ||
				!strings.Contains(last.Error.Message, "-32603") || !strings.Contains(last.Error.Message, "the model is overloaded") {
				t.Errorf("turn error = %+v, run err %v", last.Error, out.Err)
			}
			got := e.store.stored(t, out.Run.ID)
			if got.State != StateFailed || got.ErrorCode != proxy.CodeAgentError {
				t.Errorf("stored run = state %q error %q, want failed agent_error", got.State, got.ErrorCode)
			}
		})
	}
}

// TestNonStreamedTurn: a tester may send a turn with SendMessage although
// the card declares streaming; the turn says it was not streamed.
func TestNonStreamedTurn(t *testing.T) {
	e := newEnv(t, nil)
	out, err := e.svc.Start(context.Background(), ann, "peer", Turn{Message: proxytest.Text("hi"), NoStream: true}, Watcher{})
	if err != nil || out.Err != nil {
		t.Fatalf("Start = %v, %v", err, out.Err)
	}
	tu := out.Transcript.Turns[0]
	if tu.Streamed || len(tu.Events) != 1 || out.Run.State != string(a2a.TaskStateCompleted) {
		t.Errorf("turn = streamed %v, %d events, state %q; want one blocking answer", tu.Streamed, len(tu.Events), out.Run.State)
	}
}
