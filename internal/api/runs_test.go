package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
	"github.com/a2aregistry/registry/internal/query"
	"github.com/a2aregistry/registry/internal/runs"
)

func init() {
	// The document describes a stream as a string; the validator reads
	// it as one.
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
}

func newTestRunner() *proxy.Proxy {
	return proxy.New(proxy.Options{Client: proxytest.Loopback()})
}

// fakeRunStore keeps runs in memory.
type fakeRunStore struct {
	mu   sync.Mutex
	runs map[string]catalog.Run
}

func newFakeRunStore() *fakeRunStore { return &fakeRunStore{runs: map[string]catalog.Run{}} }

func (f *fakeRunStore) CreateRun(_ context.Context, _ catalog.Actor, r catalog.Run) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.runs[r.ID]; ok {
		return catalog.ErrConflict
	}
	f.runs[r.ID] = r
	return nil
}

func (f *fakeRunStore) HasConversation(_ context.Context, agentID, subject, taskID, contextID string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.runs {
		if r.AgentID == agentID && r.Kind == catalog.RunKindRun && r.Subject == subject &&
			(taskID == "" || r.TaskID == taskID) && (contextID == "" || r.ContextID == contextID) {
			return true, nil
		}
	}
	return false, nil
}

func (f *fakeRunStore) UpdateRun(_ context.Context, _ catalog.Actor, r catalog.Run, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, ok := f.runs[r.ID]
	if !ok {
		return catalog.ErrNotFound
	}
	if old.Revision != r.Revision {
		return catalog.ErrConflict
	}
	r.AgentID, r.Kind, r.Subject, r.CreatedAt = old.AgentID, old.Kind, old.Subject, old.CreatedAt
	r.Revision++
	f.runs[r.ID] = r
	return nil
}

func (f *fakeRunStore) Run(_ context.Context, _ catalog.Scope, id string) (catalog.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.runs[id]
	if !ok {
		return r, catalog.ErrNotFound
	}
	return r, nil
}

func (f *fakeRunStore) AgentRuns(_ context.Context, _ catalog.Scope, agentID, kind string, limit int) ([]catalog.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []catalog.Run
	for _, r := range f.runs {
		if r.AgentID == agentID && r.Kind == kind {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b catalog.Run) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out[:min(limit, len(out))], nil
}

// runEnv is an API with a real proxy in front of one in-process agent,
// catalogued as "peer".
type runEnv struct {
	testEnv
	runs *fakeRunStore
	peer proxytest.Peer
}

func newRunEnv(t *testing.T, binding, version string, mutate func(*Options)) runEnv {
	return newRunEnvWith(t, binding, version, mutate, nil)
}

// runBackend is what the run service reads and writes: agents from the
// API's catalog, runs from a store of runs.
type runBackend struct {
	Catalog
	*fakeRunStore
}

// newRunService is a run service over a real proxy, reading agents from
// cat and keeping runs in rs; mutate adjusts its options.
func newRunService(cat Catalog, rs *fakeRunStore, mutate func(*runs.Options)) *runs.Service {
	o := runs.Options{Runner: newTestRunner(), Store: runBackend{cat, rs}}
	if mutate != nil {
		mutate(&o)
	}
	return runs.New(o)
}

func newRunEnvWith(t *testing.T, binding, version string, mutate func(*Options), mutateRuns func(*runs.Options)) runEnv {
	t.Helper()
	pe := proxytest.Start(t, binding, version, proxytest.Options{})
	rs := newFakeRunStore()
	env := newTestEnv(t, func(o *Options) {
		o.Runs = newRunService(o.Catalog, rs, mutateRuns)
		if mutate != nil {
			mutate(o)
		}
	})
	c := proxytest.Card(true, pe.Interface)
	env.cat.agents["peer"] = catalog.Agent{ID: "peer", CardURL: "http://peer.test/.well-known/agent-card.json", Card: c}
	return runEnv{testEnv: env, runs: rs, peer: pe}
}

func runBody(text string, extra string) string {
	return fmt.Sprintf(`{"message": {"role": "user", "parts": [{"text": %q}]}%s}`, text, extra)
}

var jsonHeader = map[string]string{"Content-Type": "application/json"}

func decodeRun(t *testing.T, rec *httptest.ResponseRecorder) RunResponse {
	t.Helper()
	var r RunResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("decoding run: %v: %s", err, rec.Body)
	}
	return r
}

func TestRunOverEachBinding(t *testing.T) {
	for _, binding := range []string{card.BindingJSONRPC, card.BindingHTTPJSON, card.BindingGRPC} {
		for _, version := range []string{"1.0", "0.3"} {
			t.Run(binding+"/"+version, func(t *testing.T) {
				env := newRunEnv(t, binding, version, nil)
				rec := env.do(t, http.MethodPost, "/api/v1/agents/peer/runs",
					`{"message": {"role": "user", "parts": [{"text": "hi"}, {"data": {"n": 1}}, {"url": "https://example.com/a.pdf", "mediaType": "application/pdf"}, {"raw": "aGVsbG8=", "filename": "h.txt", "mediaType": "text/plain"}]}}`, jsonHeader)
				if rec.Code != http.StatusCreated {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				run := decodeRun(t, rec)
				if run.State != "TASK_STATE_COMPLETED" || run.Interface == nil || run.Interface.URL != env.peer.Interface.URL {
					t.Errorf("run = state %q interface %+v", run.State, run.Interface)
				}
				if len(run.Events) < 4 || len(run.Turns) != 1 || run.Task == nil {
					t.Errorf("run has %d events, %d turns, task %s", len(run.Events), len(run.Turns), run.Task)
				}
				// Parts are v1.0 JSON whatever the agent spoke.
				if !strings.Contains(string(run.Task), `"text":"done:"`) || strings.Contains(string(run.Task), `"kind"`) {
					t.Errorf("task is not in the v1.0 shape: %s", run.Task)
				}
				if loc := rec.Header().Get("Location"); loc != "/api/v1/runs/"+run.ID {
					t.Errorf("Location = %q", loc)
				}
				got := env.do(t, http.MethodGet, "/api/v1/runs/"+run.ID, "", nil)
				if got.Code != http.StatusOK || decodeRun(t, got).State != run.State {
					t.Errorf("GET run: %d %s", got.Code, got.Body)
				}
				list := env.do(t, http.MethodGet, "/api/v1/agents/peer/runs", "", nil)
				var l RunList
				if err := json.Unmarshal(list.Body.Bytes(), &l); err != nil || len(l.Runs) != 1 || l.Runs[0].ID != run.ID {
					t.Errorf("list: %s", list.Body)
				}
			})
		}
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data string
}

func readEvents(t *testing.T, r io.Reader, each func(sseEvent) bool) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		case line == "":
			if !each(ev) {
				return
			}
			ev = sseEvent{}
		}
	}
}

func TestRunStreamsEvents(t *testing.T) {
	env := newRunEnv(t, card.BindingJSONRPC, "1.0", nil)
	rec := env.do(t, http.MethodPost, "/api/v1/agents/peer/runs", runBody("hello there", ""),
		map[string]string{"Content-Type": "application/json", "Accept": "text/event-stream"})
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q: %s", ct, rec.Body)
	}
	var names []string
	var done RunResponse
	readEvents(t, rec.Body, func(e sseEvent) bool {
		names = append(names, e.name)
		if e.name == "done" {
			if err := json.Unmarshal([]byte(e.data), &done); err != nil {
				t.Errorf("done: %v", err)
			}
		}
		return true
	})
	if len(names) < 6 || names[0] != "run" || names[len(names)-1] != "done" {
		t.Fatalf("events %v, want run, a2a…, done", names)
	}
	for _, n := range names[1 : len(names)-1] {
		if n != "a2a" {
			t.Errorf("event %q between run and done", n)
		}
	}
	if done.State != "TASK_STATE_COMPLETED" || len(done.Events) != len(names)-2 {
		t.Errorf("done run: state %q, %d events for %d relayed", done.State, len(done.Events), len(names)-2)
	}
}

func TestRunMultiTurn(t *testing.T) {
	env := newRunEnv(t, card.BindingJSONRPC, "0.3", nil)
	rec := env.do(t, http.MethodPost, "/api/v1/agents/peer/runs", runBody(proxytest.SayAsk, ""), jsonHeader)
	run := decodeRun(t, rec)
	if run.Awaiting != "input" || run.TaskID == "" {
		t.Fatalf("first turn: awaiting %q, task %q", run.Awaiting, run.TaskID)
	}
	rec = env.do(t, http.MethodPost, "/api/v1/runs/"+run.ID+"/messages", runBody("Paris", ""), jsonHeader)
	if rec.Code != http.StatusOK {
		t.Fatalf("reply: %d %s", rec.Code, rec.Body)
	}
	next := decodeRun(t, rec)
	if next.TaskID != run.TaskID || next.State != "TASK_STATE_COMPLETED" || len(next.Turns) != 2 || next.Awaiting != "" {
		t.Errorf("second turn: task %q (was %q) state %q, %d turns", next.TaskID, run.TaskID, next.State, len(next.Turns))
	}
}

func TestRunCancel(t *testing.T) {
	env := newRunEnv(t, card.BindingJSONRPC, "1.0", nil)
	env.peer.Agent.Started = make(chan struct{})
	srv := httptest.NewServer(env.e)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/agents/peer/runs", strings.NewReader(runBody(proxytest.SayWait, "")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var runID, last string
	var final RunResponse
	readEvents(t, resp.Body, func(e sseEvent) bool {
		switch e.name {
		case "run":
			var s RunStarted
			_ = json.Unmarshal([]byte(e.data), &s)
			runID = s.ID
		case "a2a":
			if strings.Contains(e.data, "TASK_STATE_WORKING") {
				<-env.peer.Agent.Started
				rec := env.do(t, http.MethodPost, "/api/v1/runs/"+runID+"/cancel", "", nil)
				if rec.Code != http.StatusOK || decodeRun(t, rec).State != "TASK_STATE_CANCELED" {
					t.Errorf("cancel during the stream: %d %s", rec.Code, rec.Body)
				}
			}
		case "done", "error":
			last = e.name
			_ = json.Unmarshal([]byte(e.data), &final)
			return false
		}
		return true
	})
	if last != "done" || final.State != "TASK_STATE_CANCELED" {
		t.Errorf("stream ended with %q, state %q", last, final.State)
	}
	// Both turns are in the stored transcript, whichever was saved first.
	stored := decodeRun(t, env.do(t, http.MethodGet, "/api/v1/runs/"+runID, "", nil))
	var ops []string
	for _, tu := range stored.Turns {
		ops = append(ops, tu.Op)
	}
	if !slices.Equal(ops, []string{proxy.OpSend, proxy.OpCancel}) && !slices.Equal(ops, []string{proxy.OpCancel, proxy.OpSend}) {
		t.Errorf("turns %v, want the send and the cancel", ops)
	}
}

func TestRunRefusals(t *testing.T) {
	tests := []struct {
		name       string
		target     string
		body       string
		setup      func(env runEnv)
		wantStatus int
		wantCode   string
	}{
		{"unknown agent", "/api/v1/agents/nope/runs", runBody("hi", ""), nil, http.StatusNotFound, CodeNotFound},
		{"undeclared interface", "/api/v1/agents/peer/runs", runBody("hi", `, "interface": "http://127.0.0.1:1/other"`), nil, http.StatusBadRequest, CodeInterfaceNotDeclared},
		{"unknown version", "/api/v1/agents/peer/runs", runBody("hi", ""), func(env runEnv) {
			c := proxytest.Card(true, env.peer.Interface)
			c.Interfaces[0].ProtocolVersion = card.VersionUnknown
			env.cat.agents["peer"] = catalog.Agent{ID: "peer", Card: c}
		}, http.StatusUnprocessableEntity, CodeVersionUnknown},
		{"credentials the card does not ask for", "/api/v1/agents/peer/runs", runBody("hi", `, "credentials": {"bearer": "tok-123456"}`), nil, http.StatusBadRequest, CodeCredentialsInvalid},
		{"part without content", "/api/v1/agents/peer/runs", `{"message": {"parts": [{"filename": "x"}]}}`, nil, http.StatusBadRequest, CodeInvalidMessage},
		{"agent role", "/api/v1/agents/peer/runs", `{"message": {"role": "agent", "parts": [{"text": "x"}]}}`, nil, http.StatusBadRequest, CodeInvalidMessage},
		{"no message", "/api/v1/agents/peer/runs", `{}`, nil, http.StatusBadRequest, CodeInvalidBody},
		{"undeclared extension", "/api/v1/agents/peer/runs", runBody("hi", `, "extensions": ["https://example.com/x"]`), nil, http.StatusBadRequest, CodeInvalidBody},
		{"unknown field", "/api/v1/agents/peer/runs", runBody("hi", `, "token": "x"`), nil, http.StatusBadRequest, CodeInvalidBody},
		{"unknown run", "/api/v1/runs/nope/messages", runBody("hi", ""), nil, http.StatusNotFound, CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newRunEnv(t, card.BindingJSONRPC, "1.0", nil)
			if tt.setup != nil {
				tt.setup(env)
			}
			rec := env.do(t, http.MethodPost, tt.target, tt.body, jsonHeader)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.wantStatus, rec.Body)
			}
			var e ErrorResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code != tt.wantCode {
				t.Errorf("code %q, want %q", e.Error.Code, tt.wantCode)
			}
		})
	}
}

// TestRunLimits answers 429 with Retry-After past the per-user rate, and
// 413 for a file over the limit.
func TestRunLimits(t *testing.T) {
	env := newRunEnvWith(t, card.BindingJSONRPC, "1.0", nil, func(o *runs.Options) {
		o.Limiter = proxy.NewLimiter(proxy.Limits{PerUserPerMinute: 1})
		o.Runner = proxy.New(proxy.Options{Client: proxytest.Loopback(), MaxFileBytes: 4})
	})
	if rec := env.do(t, http.MethodPost, "/api/v1/agents/peer/runs", runBody("hi", ""), jsonHeader); rec.Code != http.StatusCreated {
		t.Fatalf("first run: %d %s", rec.Code, rec.Body)
	}
	rec := env.do(t, http.MethodPost, "/api/v1/agents/peer/runs", runBody("hi", ""), jsonHeader)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("second run: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}

	env = newRunEnvWith(t, card.BindingJSONRPC, "1.0", nil, func(o *runs.Options) {
		o.Runner = proxy.New(proxy.Options{Client: proxytest.Loopback(), MaxFileBytes: 4})
	})
	rec = env.do(t, http.MethodPost, "/api/v1/agents/peer/runs", `{"message": {"parts": [{"raw": "aGVsbG8gd29ybGQ="}]}}`, jsonHeader)
	var e ErrorResponse
	_ = json.Unmarshal(rec.Body.Bytes(), &e)
	if rec.Code != http.StatusRequestEntityTooLarge || e.Error.Code != CodePayloadTooLarge {
		t.Errorf("oversized file: %d %s", rec.Code, rec.Body)
	}
}

// TestProxyCodesHaveAPICodes: every code a run's error may carry is one
// the API documents.
func TestProxyCodesHaveAPICodes(t *testing.T) {
	api := []string{CodeInterfaceNotDeclared, CodeVersionUnknown, CodeNoUsableInterface, CodeCredentialsInvalid,
		CodeTokenRequestFailed, CodeAgentUnreachable, CodeAgentError, CodeRunTimeout, CodeRunStopped, CodeInvalidMessage,
		CodePayloadTooLarge, CodeInternal, CodeSelf}
	for _, err := range []error{proxy.ErrInterfaceNotDeclared, proxy.ErrVersionUnknown, proxy.ErrNoUsableInterface,
		proxy.ErrUnreachable, proxy.ErrSelf, proxy.ErrAgent, proxy.ErrCredentials, proxy.ErrTokenRequest, proxy.ErrInvalidMessage,
		proxy.ErrMessageTooLarge, proxy.ErrRunTimeout, &proxy.Error{Cause: context.Canceled}, errors.New("other")} {
		if code := proxy.ErrorCode(err); !slices.Contains(api, code) {
			t.Errorf("proxy code %q of %v is not an API code", code, err)
		}
	}
}

// TestCheckAgent records which declared interfaces work and shows the
// latest check in the agent.
func TestCheckAgent(t *testing.T) {
	env := newRunEnv(t, card.BindingJSONRPC, "1.0", nil)
	c := proxytest.Card(true, env.peer.Interface, card.Interface{URL: proxytest.ClosedURL(t), Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"})
	ag := env.cat.agents["peer"]
	ag.Card = c
	env.cat.agents["peer"] = ag
	rec := env.do(t, http.MethodPost, "/api/v1/agents/peer/checks", "", nil)
	if rec.Code != http.StatusCreated {
		t.Fatalf("check: %d %s", rec.Code, rec.Body)
	}
	var got CheckResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Works != "some" || len(got.Interfaces) != 2 || !got.Interfaces[0].Works || got.Interfaces[1].Cause != CodeAgentUnreachable {
		t.Errorf("check = %+v", got)
	}
	// What a check records is what the works search filter accepts.
	for _, w := range []string{got.Works, proxy.Works(nil)} {
		if !slices.Contains(query.EnumValues(catalog.FieldWorks), w) {
			t.Errorf("check's works %q is not a works filter value %v", w, query.EnumValues(catalog.FieldWorks))
		}
	}
	// Checks are not runs: the runs list leaves them out.
	list := env.do(t, http.MethodGet, "/api/v1/agents/peer/runs", "", nil)
	if !strings.Contains(list.Body.String(), `"runs":[]`) {
		t.Errorf("runs list shows the check: %s", list.Body)
	}
}

// TestRunResubscribe follows a working task from a second stream while
// the first one runs, then cancels it: both streams end canceled.
func TestRunResubscribe(t *testing.T) {
	env := newRunEnv(t, card.BindingJSONRPC, "1.0", nil)
	env.peer.Agent.Started = make(chan struct{})
	srv := httptest.NewServer(env.e)
	defer srv.Close()
	stream := func(path, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	first := stream("/api/v1/agents/peer/runs", runBody(proxytest.SayWait, ""))
	var runID string
	resubscribed := make(chan string, 1)
	readEvents(t, first.Body, func(e sseEvent) bool {
		switch {
		case e.name == "run":
			var s RunStarted
			_ = json.Unmarshal([]byte(e.data), &s)
			runID = s.ID
		case e.name == "a2a" && strings.Contains(e.data, "TASK_STATE_WORKING"):
			<-env.peer.Agent.Started
			second := stream("/api/v1/runs/"+runID+"/resubscribe", "{}")
			following := make(chan struct{})
			go func() {
				var last sseEvent
				once := false
				readEvents(t, second.Body, func(e sseEvent) bool {
					if e.name == "a2a" && !once {
						once = true
						close(following)
					}
					last = e
					return true
				})
				if !once {
					close(following)
				}
				var r RunResponse
				_ = json.Unmarshal([]byte(last.data), &r)
				resubscribed <- last.name + " " + r.State
			}()
			<-following
			if rec := env.do(t, http.MethodPost, "/api/v1/runs/"+runID+"/cancel", "", nil); rec.Code != http.StatusOK {
				t.Errorf("cancel: %d %s", rec.Code, rec.Body)
			}
		case e.name == "done" || e.name == "error":
			return false
		}
		return true
	})
	if got := <-resubscribed; got != "done TASK_STATE_CANCELED" {
		t.Errorf("resubscription ended with %q, want done TASK_STATE_CANCELED", got)
	}
}

// TestRunKeepsPickedVersion: a conversation over an interface whose card
// declares no version goes on in the version the tester picked, without
// naming it again, and stays on the interface it started on.
func TestRunKeepsPickedVersion(t *testing.T) {
	env := newRunEnv(t, card.BindingJSONRPC, "0.3", nil)
	unknown := env.peer.Interface
	unknown.ProtocolVersion = card.VersionUnknown
	// The same URL declared again as 1.0 (a mixed card): the wrong wire
	// format for this server.
	v1 := env.peer.Interface
	v1.ProtocolVersion = "1.0"
	env.cat.agents["peer"] = catalog.Agent{ID: "peer", Card: proxytest.Card(true, unknown, v1)}
	rec := env.do(t, http.MethodPost, "/api/v1/agents/peer/runs", runBody(proxytest.SayAsk, `, "interface": "`+unknown.URL+`", "protocol_version": "0.3"`), jsonHeader)
	run := decodeRun(t, rec)
	if run.Awaiting != "input" {
		t.Fatalf("first turn: %d %s", rec.Code, rec.Body)
	}
	rec = env.do(t, http.MethodPost, "/api/v1/runs/"+run.ID+"/messages", runBody("Paris", ""), jsonHeader)
	if rec.Code != http.StatusOK {
		t.Fatalf("second turn: %d %s", rec.Code, rec.Body)
	}
	next := decodeRun(t, rec)
	if next.State != "TASK_STATE_COMPLETED" || len(next.Turns) != 2 || next.Turns[1].Speaks != "0.3" {
		t.Errorf("second turn: %d state %q, turn %+v", rec.Code, next.State, next.Turns[1])
	}
}

// TestRunPicksDeclaredVersion: a mixed card declares one URL as both a
// v1.0 and a v0.3 interface; protocol_version picks the entry, whichever
// the card lists first, and the run speaks that version.
func TestRunPicksDeclaredVersion(t *testing.T) {
	for _, speaks := range []string{"1.0", "0.3"} {
		for _, firstDeclared := range []string{"1.0", "0.3"} {
			t.Run("server "+speaks+"/first "+firstDeclared, func(t *testing.T) {
				env := newRunEnv(t, card.BindingJSONRPC, speaks, nil)
				a, b := env.peer.Interface, env.peer.Interface
				a.ProtocolVersion = firstDeclared
				b.ProtocolVersion = map[string]string{"1.0": "0.3", "0.3": "1.0"}[firstDeclared]
				env.cat.agents["peer"] = catalog.Agent{ID: "peer", Card: proxytest.Card(true, a, b)}
				rec := env.do(t, http.MethodPost, "/api/v1/agents/peer/runs",
					runBody("hi", `, "interface": "`+a.URL+`", "protocol_version": "`+speaks+`"`), jsonHeader)
				run := decodeRun(t, rec)
				if rec.Code != http.StatusCreated || run.State != "TASK_STATE_COMPLETED" || run.Interface == nil ||
					run.Interface.ProtocolVersion != speaks {
					t.Errorf("run = %d state %q interface %+v\n%s", rec.Code, run.State, run.Interface, rec.Body)
				}
			})
		}
	}
}

// TestRunNotStreamed: "stream": false sends with SendMessage although the
// card declares streaming; the turn says so.
func TestRunNotStreamed(t *testing.T) {
	env := newRunEnv(t, card.BindingJSONRPC, "1.0", nil)
	for _, tt := range []struct {
		extra        string
		wantStreamed bool
	}{{"", true}, {`, "stream": true`, true}, {`, "stream": false`, false}} {
		rec := env.do(t, http.MethodPost, "/api/v1/agents/peer/runs", runBody("hi", tt.extra), jsonHeader)
		run := decodeRun(t, rec)
		if rec.Code != http.StatusCreated || len(run.Turns) != 1 || run.Turns[0].Streamed != tt.wantStreamed || run.State != "TASK_STATE_COMPLETED" {
			t.Errorf("%q: %d turns %+v state %q", tt.extra, rec.Code, run.Turns, run.State)
		}
	}
}

// TestRunBelongsToItsTester: another tester may read a run but not
// continue or cancel it; an admin may.
func TestRunBelongsToItsTester(t *testing.T) {
	var as auth.Principal
	env := newRunEnv(t, card.BindingJSONRPC, "1.0", func(o *Options) {
		o.Authorizer = authorizerFunc(func(need auth.Role) echo.MiddlewareFunc {
			return func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c echo.Context) error {
					c.SetRequest(c.Request().WithContext(auth.WithPrincipal(c.Request().Context(), as, "")))
					return next(c)
				}
			}
		})
	})
	as = auth.Principal{Subject: "ann", Role: auth.Tester}
	run := decodeRun(t, env.do(t, http.MethodPost, "/api/v1/agents/peer/runs", runBody(proxytest.SayAsk, ""), jsonHeader))
	tests := []struct {
		who    auth.Principal
		method string
		path   string
		want   int
	}{
		{auth.Principal{Subject: "bob", Role: auth.Tester}, http.MethodGet, "/api/v1/runs/" + run.ID, http.StatusOK},
		{auth.Principal{Subject: "bob", Role: auth.Editor}, http.MethodPost, "/api/v1/runs/" + run.ID + "/messages", http.StatusForbidden},
		{auth.Principal{Subject: "bob", Role: auth.Tester}, http.MethodPost, "/api/v1/runs/" + run.ID + "/cancel", http.StatusForbidden},
		{auth.Principal{Subject: "root", Role: auth.Admin}, http.MethodPost, "/api/v1/runs/" + run.ID + "/messages", http.StatusOK},
	}
	for _, tt := range tests {
		as = tt.who
		body := ""
		if strings.HasSuffix(tt.path, "/messages") {
			body = runBody("Paris", "")
		}
		if rec := env.do(t, tt.method, tt.path, body, jsonHeader); rec.Code != tt.want {
			t.Errorf("%s %s %s: %d, want %d: %s", tt.who.Subject, tt.method, tt.path, rec.Code, tt.want, rec.Body)
		}
	}
}

// TestRefusedCancelKeepsState: canceling a completed task is refused by
// the agent; the run says so and keeps the task's state.
func TestRefusedCancelKeepsState(t *testing.T) {
	env := newRunEnv(t, card.BindingJSONRPC, "1.0", nil)
	run := decodeRun(t, env.do(t, http.MethodPost, "/api/v1/agents/peer/runs", runBody("hi", ""), jsonHeader))
	rec := env.do(t, http.MethodPost, "/api/v1/runs/"+run.ID+"/cancel", "", nil)
	got := decodeRun(t, rec)
	if rec.Code != http.StatusOK || got.State != "TASK_STATE_COMPLETED" || got.Error == nil || got.Error.Code != CodeAgentError {
		t.Errorf("refused cancel: %d state %q error %+v", rec.Code, got.State, got.Error)
	}
}

// TestRunListsVersionViolation: a v1.0 agent that answers in the v0.3
// shape (it ignores A2A-Version) fails the run, and the stored transcript
// lists the violation as conformance evidence, in the documented shape.
func TestRunListsVersionViolation(t *testing.T) {
	env := newRunEnv(t, card.BindingJSONRPC, "1.0", nil)
	lax := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"}}}`, req.ID)
	}))
	defer lax.Close()
	env.cat.agents["lax"] = catalog.Agent{ID: "lax", CardURL: "http://lax.test/.well-known/agent-card.json",
		Card: proxytest.Card(false, card.Interface{URL: lax.URL, Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"})}
	body := runBody("hi", "")
	rec := env.do(t, http.MethodPost, "/api/v1/agents/lax/runs", body, jsonHeader)
	checkConformance(t, http.MethodPost, "/api/v1/agents/lax/runs", body, jsonHeader, rec)
	run := decodeRun(t, rec)
	if len(run.Turns) != 1 || len(run.Turns[0].Violations) != 1 || run.Turns[0].Violations[0].Code != proxy.ViolationVersionIgnored {
		t.Fatalf("turns %+v, want one with a version_ignored violation", run.Turns)
	}
	stored, err := env.runs.Run(context.Background(), catalog.ScopeAll, run.ID)
	if err != nil || !strings.Contains(string(stored.Transcript), `"version_ignored"`) {
		t.Errorf("stored transcript lacks the violation: %v %s", err, stored.Transcript)
	}
}
