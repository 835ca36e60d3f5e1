package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
	"github.com/a2aregistry/registry/internal/runs"
	"github.com/a2aregistry/registry/internal/web/view"
	"github.com/a2aregistry/registry/web/templates"
)

// The console drives the proxy and stores runs through the run service.
var (
	_ runs.Runner = (*proxy.Proxy)(nil)
	_ runs.Store  = (*catalog.Store)(nil)
)

// tryToken is the bearer token the test agent demands; it must never
// reach a page, a log or a stored transcript.
const tryToken = "s3cret-bearer-token-4711"

// syncBuffer collects logs written from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// tryFixture is a console with a proxy, over a catalog holding one agent
// served in-process by an honest a2asrv peer that wants a bearer token.
type tryFixture struct {
	*fixture
	srv   *httptest.Server
	peer  proxytest.Peer
	id    string
	logs  *syncBuffer
	token string // CSRF
}

func newTryFixture(t *testing.T) *tryFixture {
	t.Helper()
	return newTryFixtureWith(t, Options{})
}

// newTryFixtureWith sets Authorizer and Principal
// from o; the run service limits runs by limiter (nil: no limits).
// Schemes, when given, are added to the card's security schemes, and the
// console then offers OAuth sign-in through the fixture's proxy.
func newTryFixtureWith(t *testing.T, o Options, schemes ...map[string]any) *tryFixture {
	return newTryFixtureLimited(t, o, nil, schemes...)
}

func newTryFixtureLimited(t *testing.T, o Options, limiter *proxy.Limiter, schemes ...map[string]any) *tryFixture {
	t.Helper()
	f := newFixture(t, fixtureOptions{})
	peer := proxytest.Start(t, card.BindingJSONRPC, "0.3", proxytest.Options{
		Wrap: func(h http.Handler) http.Handler { return proxytest.Guard("Bearer "+tryToken, h) },
	})
	peer.Agent.Started = make(chan struct{})
	declared := map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}
	for _, s := range schemes {
		maps.Copy(declared, s)
	}
	raw, err := json.Marshal(map[string]any{
		"name": "Peer", "description": "in-process agent", "url": peer.Interface.URL, "version": "1",
		"protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
		"capabilities":      map[string]any{"streaming": true},
		"defaultInputModes": []string{"text/plain"}, "defaultOutputModes": []string{"text/plain"},
		"skills":          []any{map[string]any{"id": "echo", "name": "Echo", "description": "echoes", "tags": []string{"t"}}},
		"securitySchemes": declared,
		"security":        []any{map[string]any{"bearer": []string{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := f.upsert(t, "https://peer.example/.well-known/agent-card.json", raw, t0)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	px := proxy.New(proxy.Options{Client: proxytest.Loopback(), Logger: log})
	svc := runs.New(runs.Options{Runner: px, Store: f.store, Limiter: limiter, Keeper: proxy.NewKeeper(0, 0), Logger: log})
	co := Options{Searcher: f.store, Agents: f.store, Runs: svc, Logger: log,
		Authorizer: o.Authorizer, Principal: o.Principal}
	if len(schemes) > 0 {
		co.OAuth = px
	}
	f.console = New(co)
	f.e = echo.New()
	f.console.Mount(f.e)
	srv := httptest.NewServer(f.e)
	t.Cleanup(srv.Close)
	return &tryFixture{fixture: f, srv: srv, peer: peer, id: id, logs: logs, token: f.console.processCSRF}
}

// post sends a multipart form to path; stream asks for server-sent
// events. Redirects are not followed.
func (tf *tryFixture) post(t *testing.T, path string, fields map[string]string, stream bool) *http.Response {
	t.Helper()
	return tf.postAs(t, "", path, fields, stream)
}

// postAs is post as the caller named by a "subject:role" header (see
// headerAuth).
func (tf *tryFixture) postAs(t *testing.T, who, path string, fields map[string]string, stream bool) *http.Response {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, tf.srv.URL+path, &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if who != "" {
		req.Header.Set(testCaller, who)
	}
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseEvent is one server-sent event.
type sseEvent struct{ event, data string }

// readEvents reads server-sent events until the stream ends, handing
// each to seen (when not nil) as it arrives.
func readEvents(t *testing.T, r io.Reader, seen func(sseEvent)) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	var data []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.event != "" {
				cur.data = strings.Join(data, "\n")
				out = append(out, cur)
				if seen != nil {
					seen(cur)
				}
			}
			cur, data = sseEvent{}, nil
		case strings.HasPrefix(line, "event: "):
			cur.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		}
	}
	return out
}

func (tf *tryFixture) fields(text string) map[string]string {
	return map[string]string{csrfField: tf.token, fieldText: text, fieldBearer: tryToken}
}

// latestRun is the agent's newest run.
func (tf *tryFixture) latestRun(t *testing.T) catalog.Run {
	t.Helper()
	runs, err := tf.store.AgentRuns(context.Background(), catalog.ScopeAll, tf.id, catalog.RunKindRun, 1)
	if err != nil || len(runs) == 0 {
		t.Fatalf("no run stored: %v", err)
	}
	r, err := tf.store.Run(context.Background(), catalog.ScopeAll, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (tf *tryFixture) getPage(t *testing.T, path string) string {
	t.Helper()
	rec := tf.get(t, path, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s = %d", path, rec.Code)
	}
	return rec.Body.String()
}

// TestTryItStreams sends a task and reads its events as HTML fragments:
// the agent's text arrives escaped, the run is stored completed, and the
// credential is nowhere but on the wire to the agent.
func TestTryItStreams(t *testing.T) {
	tf := newTryFixture(t)
	try := "/agents/" + tf.id + "/try"

	agentPage := tf.getPage(t, "/agents/"+tf.id)
	if !strings.Contains(agentPage, `href="`+try+`"`) {
		t.Errorf("agent page does not link the Try it panel")
	}
	form := tf.getPage(t, try)
	for _, want := range []string{`name="cred_bearer"`, `enctype="multipart/form-data"`, `data-tryit-stream`, tf.console.assets.url(tryScript)} {
		if !strings.Contains(form, want) {
			t.Errorf("Try it page lacks %q", want)
		}
	}

	resp := tf.post(t, try, tf.fields("hello "+xssPayload), true)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("POST = %d %s, want an event stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readEvents(t, resp.Body, nil)
	if len(events) < 3 || events[0].event != "run" || events[len(events)-1].event != "done" {
		t.Fatalf("events = %v, want run, events…, done", events)
	}
	var streamed strings.Builder
	for _, e := range events[1 : len(events)-1] {
		if e.event != "event" {
			t.Errorf("event %q in the middle of the stream", e.event)
		}
		streamed.WriteString(e.data)
	}
	got := streamed.String()
	for _, want := range []string{"TASK_STATE_COMPLETED", "done:", "hello", "&lt;script&gt;"} {
		if !strings.Contains(got, want) {
			t.Errorf("streamed fragments lack %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"<script>", "<img", "<svg"} {
		if strings.Contains(got, bad) {
			t.Errorf("streamed fragments hold agent markup %q", bad)
		}
	}

	run := tf.latestRun(t)
	if run.State != string(a2a.TaskStateCompleted) {
		t.Errorf("stored run state = %q, want completed", run.State)
	}
	if want := runURL(tf.id, run.ID); events[len(events)-1].data != want {
		t.Errorf("done names %q, want %q", events[len(events)-1].data, want)
	}
	runPage := tf.getPage(t, runURL(tf.id, run.ID))
	listed := tf.getPage(t, try)
	if !strings.Contains(listed, runURL(tf.id, run.ID)) {
		t.Errorf("Try it page does not list the run")
	}
	for name, s := range map[string]string{
		"stream": got, "run page": runPage, "run list": listed, "logs": tf.logs.String(), "stored transcript": string(run.Transcript),
	} {
		if strings.Contains(s, tryToken) {
			t.Errorf("the bearer token appears in the %s", name)
		}
	}
	if strings.Contains(runPage, "<script>window") {
		t.Errorf("run page holds agent markup")
	}
}

// TestTryItPlainPost: without the script, a post answers with the run's
// page (303), so the panel works without JavaScript.
func TestTryItPlainPost(t *testing.T) {
	tf := newTryFixture(t)
	tests := []struct {
		name       string
		fields     map[string]string
		wantStatus int
		wantState  string
	}{
		{name: "completed", fields: tf.fields("hi"), wantStatus: http.StatusSeeOther, wantState: string(a2a.TaskStateCompleted)},
		{name: "no credentials: the agent refuses", fields: map[string]string{csrfField: tf.token, fieldText: "hi"},
			wantStatus: http.StatusSeeOther, wantState: runs.StateFailed},
		{name: "empty message", fields: map[string]string{csrfField: tf.token}, wantStatus: http.StatusBadRequest},
		{name: "data not JSON", fields: map[string]string{csrfField: tf.token, fieldData: "{nope"}, wantStatus: http.StatusBadRequest},
		{name: "undeclared interface", fields: map[string]string{csrfField: tf.token, fieldText: "hi", fieldInterface: "7"}, wantStatus: http.StatusBadRequest},
		{name: "version to speak not a protocol version", fields: map[string]string{csrfField: tf.token, fieldText: "hi", fieldSpeak: "2.0"}, wantStatus: http.StatusBadRequest},
		{name: "no CSRF token", fields: map[string]string{fieldText: "hi"}, wantStatus: http.StatusForbidden},
	}
	blocking := tf.fields("hi")
	blocking[fieldBlocking] = "1"
	tests = append(tests, struct {
		name       string
		fields     map[string]string
		wantStatus int
		wantState  string
	}{name: "sent without streaming", fields: blocking, wantStatus: http.StatusSeeOther, wantState: string(a2a.TaskStateCompleted)})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := tf.store.AgentRuns(context.Background(), catalog.ScopeAll, tf.id, catalog.RunKindRun, 100)
			resp := tf.post(t, "/agents/"+tf.id+"/try", tt.fields, false)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("POST = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			after, _ := tf.store.AgentRuns(context.Background(), catalog.ScopeAll, tf.id, catalog.RunKindRun, 100)
			if tt.wantState == "" {
				if len(after) != len(before) {
					t.Errorf("a refused post stored a run")
				}
				return
			}
			run := tf.latestRun(t)
			if loc := resp.Header.Get("Location"); loc != runURL(tf.id, run.ID) {
				t.Errorf("Location = %q, want the run page", loc)
			}
			if run.State != tt.wantState {
				t.Errorf("run state = %q, want %q", run.State, tt.wantState)
			}
			var tr proxy.Transcript
			if err := json.Unmarshal(run.Transcript, &tr); err != nil || len(tr.Turns) != 1 {
				t.Fatalf("transcript: %v", err)
			}
			if streamed := tt.fields[fieldBlocking] == ""; tr.Turns[0].Streamed != streamed {
				t.Errorf("turn streamed = %v, want %v", tr.Turns[0].Streamed, streamed)
			}
		})
	}
}

// TestTryItReply: a task that asks for input shows a reply box; the reply
// goes on the same task and completes it.
func TestTryItReply(t *testing.T) {
	tf := newTryFixture(t)
	resp := tf.post(t, "/agents/"+tf.id+"/try", tf.fields(proxytest.SayAsk), true)
	readEvents(t, resp.Body, nil)
	run := tf.latestRun(t)
	if run.State != string(a2a.TaskStateInputRequired) {
		t.Fatalf("run state = %q, want input-required", run.State)
	}
	page := tf.getPage(t, runURL(tf.id, run.ID))
	reply := runURL(tf.id, run.ID) + "/messages"
	for _, want := range []string{`action="` + reply + `"`, "which city?", "data-remembered"} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	// The reply offers no token: the one the run started with is
	// remembered (the peer refuses a request without it).
	resp = tf.post(t, reply, map[string]string{csrfField: tf.token, fieldText: "Paris"}, true)
	events := readEvents(t, resp.Body, nil)
	if len(events) == 0 || events[len(events)-1].event != "done" {
		t.Fatalf("reply events = %v, want …, done", events)
	}
	after, err := tf.store.Run(context.Background(), catalog.ScopeAll, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.State != string(a2a.TaskStateCompleted) || after.TaskID != run.TaskID {
		t.Errorf("after the reply: state %q task %q, want completed on task %q", after.State, after.TaskID, run.TaskID)
	}
	var tr proxy.Transcript
	if err := json.Unmarshal(after.Transcript, &tr); err != nil || len(tr.Turns) != 2 {
		t.Errorf("transcript holds %d turns (%v), want 2", len(tr.Turns), err)
	}
	if page := tf.getPage(t, runURL(tf.id, run.ID)); strings.Contains(page, `action="`+reply+`"`) || strings.Contains(page, "data-remembered") {
		t.Errorf("a completed run still offers a reply box, or remembers its credentials")
	}
}

// TestTryItCancel cancels a working task while its stream is open; the
// stream ends and the run is canceled.
func TestTryItCancel(t *testing.T) {
	tf := newTryFixture(t)
	resp := tf.post(t, "/agents/"+tf.id+"/try", tf.fields(proxytest.SayWait), true)
	working := make(chan struct{})
	done := make(chan []sseEvent)
	go func() {
		once := sync.Once{}
		done <- readEvents(t, resp.Body, func(e sseEvent) {
			// The task id is stored before the next event is relayed, so
			// once "working" arrives a cancel can find the task.
			if strings.Contains(e.data, string(a2a.TaskStateWorking)) {
				once.Do(func() { close(working) })
			}
		})
	}()
	<-working
	run := tf.latestRun(t)
	if run.TaskID == "" {
		t.Fatal("the run's task id was not stored while it streamed")
	}
	c := tf.post(t, runURL(tf.id, run.ID)+"/cancel", map[string]string{csrfField: tf.token, fieldBearer: tryToken}, false)
	if c.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel = %d, want 303", c.StatusCode)
	}
	events := <-done
	if last := events[len(events)-1]; last.event != "done" {
		t.Errorf("stream ended with %q, want done", last.event)
	}
	after := tf.latestRun(t)
	if after.State != string(a2a.TaskStateCanceled) {
		t.Errorf("run state = %q, want canceled", after.State)
	}
	var tr proxy.Transcript
	if err := json.Unmarshal(after.Transcript, &tr); err != nil || len(tr.Turns) != 2 {
		t.Errorf("transcript holds %d turns (%v), want the send and the cancel", len(tr.Turns), err)
	}
}

// testCaller is the request header that names the test caller as
// "subject:role".
const testCaller = "X-Test-Caller"

func callerOf(c echo.Context) (Principal, bool) {
	sub, role, _ := strings.Cut(c.Request().Header.Get(testCaller), ":")
	r, err := auth.ParseRole(role)
	if err != nil {
		return Principal{}, false
	}
	return Principal{Subject: sub, Name: sub, Role: r}, true
}

// headerAuth admits the caller of the X-Test-Caller header by role.
type headerAuth struct{}

func (headerAuth) RequireRole(need auth.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if p, ok := callerOf(c); !ok || !p.Role.Includes(need) {
				return echo.ErrForbidden
			}
			return next(c)
		}
	}
}

// TestTryItRoles: the panel is for testers and above; a run is continued
// only by the tester who started it, or an admin.
func TestTryItRoles(t *testing.T) {
	tf := newTryFixtureWith(t, Options{Authorizer: headerAuth{}, Principal: callerOf})
	try := "/agents/" + tf.id + "/try"
	for _, tt := range []struct {
		who      string
		wantLink bool
		wantTry  int
	}{
		{who: "vic:viewer", wantLink: false, wantTry: http.StatusForbidden},
		{who: "alice:tester", wantLink: true, wantTry: http.StatusOK},
		{who: "ada:admin", wantLink: true, wantTry: http.StatusOK},
	} {
		t.Run(tt.who, func(t *testing.T) {
			agentPage := tf.get(t, "/agents/"+tf.id, map[string]string{testCaller: tt.who}).Body.String()
			if got := strings.Contains(agentPage, `href="`+try+`"`); got != tt.wantLink {
				t.Errorf("agent page links Try it: %v, want %v", got, tt.wantLink)
			}
			if rec := tf.get(t, try, map[string]string{testCaller: tt.who}); rec.Code != tt.wantTry {
				t.Errorf("GET %s = %d, want %d", try, rec.Code, tt.wantTry)
			}
		})
	}
	if resp := tf.postAs(t, "vic:viewer", try, tf.fields("hi"), false); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer's post = %d, want 403", resp.StatusCode)
	}

	readEvents(t, tf.postAs(t, "alice:tester", try, tf.fields(proxytest.SayAsk), true).Body, nil)
	run := tf.latestRun(t)
	if run.Subject != "alice" || run.State != string(a2a.TaskStateInputRequired) {
		t.Fatalf("run of %q in state %q, want alice's, input-required", run.Subject, run.State)
	}
	reply := runURL(tf.id, run.ID) + "/messages"
	for _, tt := range []struct {
		who  string
		want int
	}{
		{who: "bob:tester", want: http.StatusForbidden},
		{who: "ada:admin", want: http.StatusSeeOther},
	} {
		if resp := tf.postAs(t, tt.who, reply, tf.fields("Paris"), false); resp.StatusCode != tt.want {
			t.Errorf("%s replies to alice's run: %d, want %d", tt.who, resp.StatusCode, tt.want)
		}
	}
}

// TestTryItParts: a data part and a file travel as the message's parts
// (the test agent echoes the text; the transcript keeps what was sent).
func TestTryItParts(t *testing.T) {
	tf := newTryFixture(t)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range map[string]string{csrfField: tf.token, fieldBearer: tryToken, fieldText: "parts", fieldData: `{"city":"Paris","n":12345678901234567890}`} {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := mw.CreateFormFile(fieldFile, "note.txt")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(fw, "file bytes")
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, tf.srv.URL+"/agents/"+tf.id+"/try", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST = %d, want 303", resp.StatusCode)
	}
	var tr proxy.Transcript
	if err := json.Unmarshal(tf.latestRun(t).Transcript, &tr); err != nil || len(tr.Turns) != 1 {
		t.Fatalf("transcript: %d turns, %v", len(tr.Turns), err)
	}
	sent := resultItems(tr.Turns[0].Message)
	want := []string{"text", "data", "file"}
	if len(sent) != len(want) {
		t.Fatalf("sent %d parts, want %d", len(sent), len(want))
	}
	for i, it := range sent {
		if it.Kind != want[i] {
			t.Errorf("part %d is %s, want %s", i, it.Kind, want[i])
		}
	}
	if d := sent[1].Text; !strings.Contains(d, "12345678901234567890") {
		t.Errorf("data part sent as %s, want its number unrounded", d)
	}
	if f := sent[2]; f.Filename != "note.txt" || f.Size != len("file bytes") {
		t.Errorf("file part %q of %d bytes, want note.txt of %d", f.Filename, f.Size, len("file bytes"))
	}
}

// TestEventView reads each v1.0 event shape the proxy relays.
func TestEventView(t *testing.T) {
	tests := []struct {
		name, kind, data string
		want             []view.Item
	}{
		{name: "status message", kind: proxy.KindStatusUpdate,
			data: `{"taskId":"t","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"role":"ROLE_AGENT","parts":[{"text":"which city?"}]}}}`,
			want: []view.Item{{Kind: "text", Text: "which city?"}}},
		{name: "artifact chunk", kind: proxy.KindArtifactUpdate,
			data: `{"taskId":"t","artifact":{"artifactId":"a1","name":"answer","parts":[{"text":" Paris"}]},"append":true}`,
			want: []view.Item{{Kind: "text", Text: " Paris", Artifact: "answer"}}},
		{name: "message with data and file", kind: proxy.KindMessage,
			data: `{"role":"ROLE_AGENT","parts":[{"data":{"a":1}},{"raw":"aGk=","filename":"x.svg","mediaType":"image/svg+xml"},{"url":"https://x.example/f"}]}`,
			want: []view.Item{{Kind: "data", Text: `{"a":1}`}, {Kind: "file", Filename: "x.svg", MediaType: "image/svg+xml", Size: 2},
				{Kind: "url", Text: "https://x.example/f"}}},
		{name: "task without text", kind: proxy.KindTask, data: `{"id":"t","status":{"state":"TASK_STATE_SUBMITTED"}}`},
		{name: "not JSON", kind: proxy.KindTask, data: `nope`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := eventView(1, tt.kind, "", json.RawMessage(tt.data))
			if len(got.Items) != len(tt.want) {
				t.Fatalf("items = %+v, want %+v", got.Items, tt.want)
			}
			for i := range tt.want {
				if got.Items[i] != tt.want[i] {
					t.Errorf("item %d = %+v, want %+v", i, got.Items[i], tt.want[i])
				}
			}
		})
	}
}

// TestRunPageEscapes: what the agent sent — text, artifact names,
// violation details, error messages — is shown as text.
func TestRunPageEscapes(t *testing.T) {
	data := json.RawMessage(`{"parts":[{"text":` + mustJSON(t, xssPayload) + `}]}`)
	turn := turnView(proxy.Turn{Op: proxy.OpSend,
		Events:     []proxy.TurnEvent{{Seq: 1, Kind: proxy.KindMessage, Data: data}},
		Violations: []proxy.TurnViolation{{Code: proxy.ViolationMalformedPart, Detail: xssPayload}},
		Error:      &proxy.TurnError{Code: proxy.CodeAgentError, Message: xssPayload}})
	if len(turn.Violations) != 1 || turn.ErrorCode != proxy.CodeAgentError || len(turn.Events) != 1 {
		t.Fatalf("turn view = %+v", turn)
	}
	var b strings.Builder
	if err := templates.RunPage(view.Run{Turns: []view.Turn{turn}, Result: resultItems(data)}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script>", "<img", "<svg"} {
		if strings.Contains(page, bad) {
			t.Errorf("run page holds agent markup %q", bad)
		}
	}
	if n := strings.Count(page, "&lt;script&gt;"); n != 4 {
		t.Errorf("escaped payload shown %d times, want 4 (result, event, violation, error)", n)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTryItLimited: console runs count against the API's run limits.
func TestTryItLimited(t *testing.T) {
	tf := newTryFixtureLimited(t, Options{}, proxy.NewLimiter(proxy.Limits{PerUserPerMinute: 1}))
	try := "/agents/" + tf.id + "/try"
	if resp := tf.post(t, try, tf.fields("one"), false); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("first run = %d, want 303", resp.StatusCode)
	}
	resp := tf.post(t, try, tf.fields("two"), false)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second run = %d (Retry-After %q), want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if runs, err := tf.store.AgentRuns(context.Background(), catalog.ScopeAll, tf.id, catalog.RunKindRun, 10); err != nil || len(runs) != 1 {
		t.Errorf("%d runs stored (%v), want only the admitted one", len(runs), err)
	}
}

// TestResultJoinsArtifactChunks: the text chunks a streamed artifact came
// in are shown as the one text they make; other parts stay apart.
func TestResultJoinsArtifactChunks(t *testing.T) {
	data := json.RawMessage(`{"id":"t","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[` +
		`{"artifactId":"a","parts":[{"text":"done:"},{"text":" hello"},{"text":" world"},{"data":{"n":1}},{"text":"after"}]},` +
		`{"artifactId":"b","parts":[{"text":"other"}]}]}`)
	got := resultItems(data)
	want := []view.Item{{Kind: "text", Artifact: "a", Text: "done: hello world"}, {Kind: "data", Artifact: "a", Text: `{"n":1}`},
		{Kind: "text", Artifact: "a", Text: "after"}, {Kind: "text", Artifact: "b", Text: "other"}}
	if len(got) != len(want) {
		t.Fatalf("items = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestAgentPageShowsLatestCheck: each declared interface shows whether it
// answered at the latest check, with what failed.
func TestAgentPageShowsLatestCheck(t *testing.T) {
	tf := newTryFixture(t)
	page := tf.getPage(t, "/agents/"+tf.id)
	if !strings.Contains(page, "not checked") {
		t.Error("an agent never checked does not say so")
	}
	in := tf.peer.Interface
	rec := proxy.CheckRecord{Works: catalog.WorksSome, Interfaces: []proxy.CheckedInterface{
		{URL: in.URL, Binding: in.Binding, ProtocolVersion: in.ProtocolVersion, Works: false, Detail: "the agent answered with JSON-RPC error -32603: overloaded"}}}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := tf.store.CreateRun(context.Background(), catalog.System("test"), catalog.Run{ID: "check-1", AgentID: tf.id,
		Kind: catalog.RunKindCheck, Subject: "test", State: rec.Works, Transcript: b, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	page = tf.getPage(t, "/agents/"+tf.id)
	for _, want := range []string{`<span class="badge bad">does not work</span>`, "JSON-RPC error -32603: overloaded"} {
		if !strings.Contains(page, want) {
			t.Errorf("agent page lacks %q", want)
		}
	}
}
