package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/sse"
)

// Runner is the part of the proxy the run routes drive; *proxy.Proxy
// implements it.
type Runner interface {
	Send(ctx context.Context, call proxy.Call, msg *a2a.Message, stream bool, emit func(proxy.Event)) (*proxy.Exchange, error)
	Cancel(ctx context.Context, call proxy.Call, taskID string) (*proxy.Exchange, error)
	Resubscribe(ctx context.Context, call proxy.Call, taskID string, emit func(proxy.Event)) (*proxy.Exchange, error)
	Check(ctx context.Context, c *card.Card, creds proxy.Credentials) []proxy.InterfaceCheck
	Limits() (maxRun time.Duration, maxMessage, maxFile int64)
}

// RunStore keeps runs; *catalog.Store implements it.
type RunStore interface {
	CreateRun(ctx context.Context, actor catalog.Actor, r catalog.Run) error
	UpdateRun(ctx context.Context, r catalog.Run) error
	// Run and AgentRuns leave out the runs of agents the scope does not
	// see (catalog.ErrNotFound, none).
	Run(ctx context.Context, sc catalog.Scope, id string) (catalog.Run, error)
	// AgentRuns lists an agent's runs of one kind (catalog.RunKindRun,
	// catalog.RunKindCheck), newest first.
	AgentRuns(ctx context.Context, sc catalog.Scope, agentID, kind string, limit int) ([]catalog.Run, error)
}

// Run states besides the task states (TASK_STATE_…) a run takes from its
// task.
const (
	RunStateRunning = "running"
	// RunStateMessage: the agent answered with a message, not a task.
	RunStateMessage = "message"
	RunStateFailed  = "failed"
)

// maxRunsListed bounds GET /agents/{id}/runs.
const maxRunsListed = 100

// isRunRoute tells the routes whose bodies carry messages (files
// included), which get a larger body limit than the rest of the API.
func isRunRoute(path string) bool {
	for _, suffix := range []string{"/runs", "/checks", "/messages", "/cancel", "/resubscribe"} {
		if strings.HasSuffix(path, suffix) {
			return true
		}
	}
	return false
}

// maxRunBody is the largest run request: the message limit, base64
// growth of its files (4/3), and room for the rest of the request.
func (a *API) maxRunBody() int64 {
	_, maxMsg, _ := a.runner.Limits()
	return maxMsg/3*4 + 64<<10
}

func (a *API) startRun(c echo.Context) error {
	ctx := c.Request().Context()
	in, err := a.decodeRunRequest(c, true)
	if err != nil {
		return err
	}
	ag, err := a.catalog.Agent(ctx, a.scope(c), c.Param("id"))
	if errors.Is(err, catalog.ErrNotFound) {
		return newError(http.StatusNotFound, CodeNotFound, "no agent with id %q", c.Param("id"))
	}
	if err != nil {
		return fmt.Errorf("reading agent: %w", err)
	}
	msg, err := in.message(in.ContextID, in.TaskID)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	run := catalog.Run{ID: uuid.NewString(), AgentID: ag.ID, Kind: catalog.RunKindRun, Subject: subject(ctx), State: RunStateRunning,
		ContextID: msg.ContextID, TaskID: string(msg.TaskID), CreatedAt: now, UpdatedAt: now}
	tr := proxy.Transcript{Format: proxy.TranscriptFormat, Turns: []proxy.Turn{}}
	choice := proxy.Choice{URL: in.Interface, Binding: in.Binding, SpeakVersion: in.ProtocolVersion}
	return a.runSend(c, ag, run, tr, choice, in.credentials(), in.Extensions, msg, true)
}

func (a *API) continueRun(c echo.Context) error {
	run, ag, err := a.ownRun(c)
	if err != nil {
		return err
	}
	in, err := a.decodeRunRequest(c, true)
	if err != nil {
		return err
	}
	taskID := run.TaskID
	if isTerminal(run.State) {
		// A terminal task takes no more messages (v1.0 §3.1.1); the
		// conversation goes on in the same context with a new task.
		taskID = ""
	}
	msg, err := in.message(run.ContextID, taskID)
	if err != nil {
		return err
	}
	tr, err := transcriptOf(run)
	if err != nil {
		return err
	}
	return a.runSend(c, ag, run, tr, pinned(run, in), in.credentials(), in.Extensions, msg, false)
}

// resubscribeRun reopens the stream of the run's task (v1.0
// SubscribeToTask, v0.3 tasks/resubscribe), for a tester whose stream was
// cut.
func (a *API) resubscribeRun(c echo.Context) error {
	run, ag, err := a.ownRun(c)
	if err != nil {
		return err
	}
	in, err := a.decodeRunRequest(c, false)
	if err != nil {
		return err
	}
	if in.Message != nil {
		e := newError(http.StatusBadRequest, CodeInvalidBody, "a resubscription sends no message")
		e.body.Parameter = "message"
		return e
	}
	if run.TaskID == "" {
		return newError(http.StatusConflict, CodeRunNoTask, "the run has no task to follow")
	}
	tr, err := transcriptOf(run)
	if err != nil {
		return err
	}
	return a.runSend(c, ag, run, tr, pinned(run, in), in.credentials(), in.Extensions, nil, false)
}

func (a *API) cancelRun(c echo.Context) error {
	ctx := c.Request().Context()
	run, ag, err := a.ownRun(c)
	if err != nil {
		return err
	}
	in, err := a.decodeRunRequest(c, false)
	if err != nil {
		return err
	}
	if run.TaskID == "" {
		return newError(http.StatusConflict, CodeRunNoTask, "the run has no task to cancel")
	}
	tr, err := transcriptOf(run)
	if err != nil {
		return err
	}
	release, err := a.acquire(c)
	if err != nil {
		return err
	}
	defer release()
	started := time.Now()
	creds := a.keeper.Use(run.ID, subject(ctx), in.credentials())
	x, cerr := a.runner.Cancel(ctx, proxy.Call{Card: ag.Card, Choice: pinned(run, in), Credentials: creds}, run.TaskID)
	if herr := preflightError(cerr); herr != nil {
		return herr
	}
	base := len(tr.Turns)
	tr.Turns = append(tr.Turns, proxy.NewTurn(proxy.OpCancel, started, nil, run.TaskID, creds, false, x, cerr))
	run = a.settle(run, &tr, x, cerr)
	if err := a.saveRun(ctx, run, tr, base, false); err != nil {
		return err
	}
	tr, _ = a.storedTranscript(ctx, run.ID, tr)
	return c.JSON(http.StatusOK, newRunResponse(run, tr))
}

func (a *API) getRun(c echo.Context) error {
	run, err := a.runs.Run(c.Request().Context(), a.scope(c), c.Param("id"))
	// A check is read through its agent (AgentDetail.check), not here.
	if errors.Is(err, catalog.ErrNotFound) || (err == nil && run.Kind == catalog.RunKindCheck) {
		return newError(http.StatusNotFound, CodeNotFound, "no run with id %q", c.Param("id"))
	}
	if err != nil {
		return fmt.Errorf("reading run: %w", err)
	}
	tr, err := transcriptOf(run)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newRunResponse(run, tr))
}

func (a *API) listRuns(c echo.Context) error {
	ctx := c.Request().Context()
	if _, err := a.catalog.Agent(ctx, a.scope(c), c.Param("id")); errors.Is(err, catalog.ErrNotFound) {
		return newError(http.StatusNotFound, CodeNotFound, "no agent with id %q", c.Param("id"))
	} else if err != nil {
		return fmt.Errorf("reading agent: %w", err)
	}
	limit := maxRunsListed
	if v := c.QueryParam(paramLimit); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxRunsListed {
			return invalidParameter(paramLimit, "limit must be an integer between 1 and %d", maxRunsListed)
		}
		limit = n
	}
	runs, err := a.runs.AgentRuns(ctx, a.scope(c), c.Param("id"), catalog.RunKindRun, limit)
	if err != nil {
		return fmt.Errorf("listing runs: %w", err)
	}
	out := RunList{Runs: []RunSummary{}}
	for _, r := range runs {
		out.Runs = append(out.Runs, newRunSummary(r))
	}
	return c.JSON(http.StatusOK, out)
}

// ownRun loads the run named in the path and its agent, for a caller who
// may continue it: the one who started it, or an admin.
func (a *API) ownRun(c echo.Context) (catalog.Run, catalog.Agent, error) {
	ctx := c.Request().Context()
	run, err := a.runs.Run(ctx, a.scope(c), c.Param("id"))
	if errors.Is(err, catalog.ErrNotFound) || (err == nil && run.Kind == catalog.RunKindCheck) {
		return run, catalog.Agent{}, newError(http.StatusNotFound, CodeNotFound, "no run with id %q", c.Param("id"))
	}
	if err != nil {
		return run, catalog.Agent{}, fmt.Errorf("reading run: %w", err)
	}
	if a.authz != nil {
		if p := auth.FromContext(ctx); p.Subject != run.Subject && p.Role < auth.Admin {
			return run, catalog.Agent{}, newError(http.StatusForbidden, CodeForbidden, "only the tester who started this run may continue it")
		}
	}
	ag, err := a.catalog.Agent(ctx, a.scope(c), run.AgentID)
	if errors.Is(err, catalog.ErrNotFound) || (err == nil && ag.Removed != nil) {
		// A removed agent's runs are history: read, never continued.
		return run, ag, newError(http.StatusNotFound, CodeNotFound, "the run's agent is gone")
	}
	if err != nil {
		return run, ag, fmt.Errorf("reading agent: %w", err)
	}
	return run, ag, nil
}

// pinned keeps a conversation on the interface its run used: a task lives
// on the server that made it.
func pinned(run catalog.Run, in RunRequest) proxy.Choice {
	// The version spoken is the one the run spoke, which the tester chose
	// when the card declared none.
	speak := in.ProtocolVersion
	if speak == "" {
		speak = run.ProtocolVersion
	}
	ch := proxy.Choice{URL: run.InterfaceURL, Binding: run.Binding, Version: run.ProtocolVersion, SpeakVersion: speak}
	if run.InterfaceURL == "" {
		// The first turn never reached an interface: choose afresh.
		ch = proxy.Choice{URL: in.Interface, Binding: in.Binding, SpeakVersion: in.ProtocolVersion}
	}
	return ch
}

// runSend sends msg for run and answers as JSON or, when the caller
// accepts text/event-stream, as a stream of server-sent events.
func (a *API) runSend(c echo.Context, ag catalog.Agent, run catalog.Run, tr proxy.Transcript, choice proxy.Choice,
	creds proxy.Credentials, exts []string, msg *a2a.Message, create bool) error {
	ctx := c.Request().Context()
	if err := declaredExtensions(ag.Card, exts); err != nil {
		return err
	}
	// msg nil means a resubscription to the run's task.
	op, taskID, streamed := proxy.OpSend, "", ag.Card.Capabilities.Streaming
	send := func(ctx context.Context, call proxy.Call, emit func(proxy.Event)) (*proxy.Exchange, error) {
		return a.runner.Send(ctx, call, msg, true, emit)
	}
	if msg != nil {
		taskID = string(msg.TaskID)
	} else {
		op, taskID, streamed = proxy.OpResubscribe, run.TaskID, true
		send = func(ctx context.Context, call proxy.Call, emit func(proxy.Event)) (*proxy.Exchange, error) {
			return a.runner.Resubscribe(ctx, call, run.TaskID, emit)
		}
	}
	release, err := a.acquire(c)
	if err != nil {
		return err
	}
	defer release()
	if create {
		if err := a.runs.CreateRun(ctx, actorOf(c), run); errors.Is(err, catalog.ErrNotFound) {
			return newError(http.StatusNotFound, CodeNotFound, "no agent with id %q", ag.ID)
		} else if err != nil {
			return fmt.Errorf("creating run: %w", err)
		}
		c.Response().Header().Set(echo.HeaderLocation, BasePath+"/runs/"+run.ID)
	}
	// Credentials offered are kept (in memory) for the conversation's next
	// turns; a turn offering none uses those.
	creds = a.keeper.Use(run.ID, subject(ctx), creds)
	call := proxy.Call{Card: ag.Card, Choice: choice, Credentials: creds, Extensions: exts}
	base := len(tr.Turns)
	started := time.Now()
	// The task id is stored as soon as the agent names it, so another
	// request (another tab, POST /runs/{id}/cancel) can act on the task
	// while this one still streams.
	noted := run.TaskID != ""
	note := func(e proxy.Event) {
		if noted || e.TaskID == "" {
			return
		}
		noted = true
		r := run
		r.TaskID, r.ContextID, r.State = e.TaskID, e.ContextID, RunStateRunning
		r.InterfaceURL, r.Binding, r.ProtocolVersion = e.Via.URL, e.Via.Binding, e.Via.Speaks
		if err := a.saveRun(ctx, r, tr, base, false); err != nil {
			a.log.Warn("api: noting a run's task", "err", err, "run_id", run.ID)
		}
	}
	if !sse.Accepts(c.Request()) {
		x, serr := send(ctx, call, note)
		tr.Turns = append(tr.Turns, proxy.NewTurn(op, started, msg, taskID, creds, streamed, x, serr))
		run = a.settle(run, &tr, x, serr)
		if err := a.saveRun(ctx, run, tr, base, true); err != nil {
			return err
		}
		if herr := preflightError(serr); herr != nil {
			// The attempt is kept as evidence, but the answer is the
			// caller's mistake, not a run to go and read.
			c.Response().Header().Del(echo.HeaderLocation)
			return herr
		}
		status := http.StatusOK
		if create {
			status = http.StatusCreated
		}
		tr, _ = a.storedTranscript(ctx, run.ID, tr)
		return c.JSON(status, newRunResponse(run, tr))
	}

	stream := sse.Start(c.Response(), a.maxRun())
	stream.SendJSON("run", RunStarted{ID: run.ID, AgentID: run.AgentID})
	x, serr := send(ctx, call, func(e proxy.Event) {
		stream.SendJSON("a2a", RunEvent{Turn: base, Seq: e.Seq, AtMS: float64(e.At.Microseconds()) / 1000, Kind: e.Kind, State: e.State, Data: e.Data})
		note(e)
	})
	tr.Turns = append(tr.Turns, proxy.NewTurn(op, started, msg, taskID, creds, streamed, x, serr))
	run = a.settle(run, &tr, x, serr)
	if err := a.saveRun(ctx, run, tr, base, true); err != nil {
		a.log.Error("api: storing run", "err", err, "run_id", run.ID)
		stream.SendJSON("error", RunFailure{RunError: RunError{Code: CodeInternal, Message: "the run could not be stored"}})
		return nil
	}
	tr, _ = a.storedTranscript(ctx, run.ID, tr)
	resp := newRunResponse(run, tr)
	if serr != nil {
		stream.SendJSON("error", RunFailure{RunError: *resp.Error, Run: &resp})
		return nil
	}
	stream.SendJSON("done", resp)
	return nil
}

func (a *API) maxRun() time.Duration {
	d, _, _ := a.runner.Limits()
	return d
}

// acquire admits the caller's run under the configured limits or answers
// 429 with Retry-After.
func (a *API) acquire(c echo.Context) (func(), error) {
	if a.runLimiter == nil {
		return func() {}, nil
	}
	release, err := a.runLimiter.Acquire(subject(c.Request().Context()))
	var le *proxy.LimitError
	if errors.As(err, &le) {
		secs := int((le.RetryAfter + time.Second - 1) / time.Second)
		c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
		if errors.Is(err, proxy.ErrRateLimited) {
			return nil, newError(http.StatusTooManyRequests, CodeTooManyRequests, "too many runs started; retry in %d s", secs)
		}
		return nil, newError(http.StatusTooManyRequests, CodeTooManyRuns, "too many runs in flight; retry in %d s", secs)
	}
	if err != nil {
		return nil, err
	}
	return release, nil
}

// settle folds an operation's outcome into the run; a run that ended
// needs its credentials no more.
func (a *API) settle(run catalog.Run, tr *proxy.Transcript, x *proxy.Exchange, err error) catalog.Run {
	run = SettleRun(run, tr, x, err)
	if RunEnded(run.State) {
		a.keeper.Forget(run.ID)
	}
	a.log.Info("api: run turn", "run_id", run.ID, "agent_id", run.AgentID, "state", run.State, "error_code", run.ErrorCode)
	return run
}

// SettleRun folds an operation's outcome into the run and its transcript's
// latest result. The console's "Try it" panel settles its runs with it
// too, so a run means the same whichever started it.
func SettleRun(run catalog.Run, tr *proxy.Transcript, x *proxy.Exchange, err error) catalog.Run {
	run.UpdatedAt = time.Now().UTC()
	run.ErrorCode = ""
	if x != nil && x.Endpoint.URL != "" {
		run.InterfaceURL, run.Binding, run.ProtocolVersion = x.Endpoint.URL, x.Endpoint.Binding, x.Endpoint.Speaks
	}
	if x != nil && x.Task != nil {
		run.TaskID, run.ContextID = string(x.Task.ID), x.Task.ContextID
		run.State = string(x.Task.Status.State)
		tr.Task, tr.Message = x.Result, nil
	} else if x != nil && x.Message != nil {
		run.State = RunStateMessage
		if x.Message.ContextID != "" {
			run.ContextID = x.Message.ContextID
		}
		tr.Task, tr.Message = nil, x.Result
	}
	if err != nil {
		run.ErrorCode = proxy.ErrorCode(err)
		// A run that never got an answer failed; one that did keeps the
		// task's state (a refused cancel leaves the task as it was).
		if run.State == RunStateRunning && (x == nil || (x.Task == nil && x.Message == nil)) {
			run.State = RunStateFailed
		}
	}
	return run
}

// saveRun stores run with tr. Turns other requests stored since this one
// read the run (index base on) are kept, in time order: a cancel sent from
// another tab while this turn streamed belongs to the transcript too.
func (a *API) saveRun(ctx context.Context, run catalog.Run, tr proxy.Transcript, base int, detach bool) error {
	if detach {
		// The caller may be gone (a closed stream); the evidence is kept.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
	}
	return SaveRun(ctx, a.runs, run, tr, base)
}

// SaveRun stores run with tr in runs, merging the turns other requests
// stored since tr was read (index base on), as saveRun says.
func SaveRun(ctx context.Context, runs RunStore, run catalog.Run, tr proxy.Transcript, base int) error {
	// Read, merge, write only if nobody wrote in between; else again.
	for attempt := 1; ; attempt++ {
		// The run's caller was let in when it was read or started.
		cur, err := runs.Run(ctx, catalog.ScopeAll, run.ID)
		if err != nil {
			return fmt.Errorf("storing run: %w", err)
		}
		out := tr
		if stored, err := transcriptOf(cur); err == nil && len(stored.Turns) > base {
			out.Turns = append(slices.Clone(stored.Turns), tr.Turns[base:]...)
			slices.SortStableFunc(out.Turns, func(x, y proxy.Turn) int { return x.StartedAt.Compare(y.StartedAt) })
		}
		b, err := json.Marshal(out)
		if err != nil {
			return fmt.Errorf("encoding transcript: %w", err)
		}
		run.Transcript, run.Revision = b, cur.Revision
		err = runs.UpdateRun(ctx, run)
		if errors.Is(err, catalog.ErrConflict) && attempt < maxSaveAttempts {
			continue
		}
		if err != nil {
			return fmt.Errorf("storing run: %w", err)
		}
		return nil
	}
}

// maxSaveAttempts bounds the retries of a run update that lost a race;
// only the few requests of one run's tester ever race.
const maxSaveAttempts = 8

// preflightError answers the caller's own mistakes (an undeclared
// interface, unusable credentials, an oversized message) as 4xx; other
// outcomes are the run's result.
func preflightError(err error) error {
	switch code := proxy.ErrorCode(err); {
	case err == nil:
		return nil
	case code == proxy.CodeInterfaceNotDeclared:
		e := newError(http.StatusBadRequest, CodeInterfaceNotDeclared, "%v", err)
		e.body.Parameter = "interface"
		return e
	case code == proxy.CodeCredentials:
		e := newError(http.StatusBadRequest, CodeCredentialsInvalid, "%v", err)
		e.body.Parameter = "credentials"
		return e
	case code == proxy.CodeVersionUnknown:
		return newError(http.StatusUnprocessableEntity, CodeVersionUnknown, "%v", err)
	case code == proxy.CodeNoUsableInterface:
		return newError(http.StatusUnprocessableEntity, CodeNoUsableInterface, "%v", err)
	case code == proxy.CodeInvalidMessage:
		e := newError(http.StatusBadRequest, CodeInvalidMessage, "%v", err)
		e.body.Parameter = "message"
		return e
	case code == proxy.CodeMessageTooLarge:
		return newError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "%v", err)
	}
	return nil
}

// declaredExtensions refuses extensions the card does not declare: the
// registry activates only what the agent says it supports.
func declaredExtensions(c *card.Card, exts []string) error {
	for _, uri := range exts {
		if !slices.ContainsFunc(c.Capabilities.Extensions, func(e card.Extension) bool { return e.URI == uri }) {
			e := newError(http.StatusBadRequest, CodeInvalidBody, "extension %q is not declared by the agent's card", uri)
			e.body.Parameter = "extensions"
			return e
		}
	}
	return nil
}

func subject(ctx context.Context) string {
	if s := auth.FromContext(ctx).Subject; s != "" {
		return s
	}
	return "anonymous"
}

func isTerminal(state string) bool {
	return a2a.TaskState(state).Terminal()
}

// RunEnded tells a run whose task reached a terminal state, or that
// failed before any answer: its remembered credentials are forgotten.
// (A conversation answered with a message may go on in its context; its
// credentials expire with the Keeper's time-to-live.)
func RunEnded(state string) bool {
	return isTerminal(state) || state == RunStateFailed
}

// storedTranscript reads back the transcript as stored (with other
// requests' turns merged in), falling back to tr.
func (a *API) storedTranscript(ctx context.Context, id string, tr proxy.Transcript) (proxy.Transcript, error) {
	cur, err := a.runs.Run(context.WithoutCancel(ctx), catalog.ScopeAll, id)
	if err != nil {
		return tr, err
	}
	stored, err := transcriptOf(cur)
	if err != nil {
		return tr, err
	}
	return stored, nil
}

func transcriptOf(run catalog.Run) (proxy.Transcript, error) {
	var tr proxy.Transcript
	if err := json.Unmarshal(run.Transcript, &tr); err != nil {
		return tr, fmt.Errorf("decoding transcript of run %s: %w", run.ID, err)
	}
	if tr.Turns == nil {
		tr.Turns = []proxy.Turn{}
	}
	return tr, nil
}

// decodeRunRequest reads a run request body. An empty body is allowed
// where no message is needed (cancel).
func (a *API) decodeRunRequest(c echo.Context, needMessage bool) (RunRequest, error) {
	var in RunRequest
	req := c.Request()
	limit := a.maxRunBody()
	if req.ContentLength == 0 && !needMessage {
		return in, nil
	}
	if err := decodeJSONBody(c, &in, limit, `{"message": {...}, ...} (a run request)`); err != nil {
		return in, err
	}
	if needMessage && in.Message == nil {
		e := newError(http.StatusBadRequest, CodeInvalidBody, "message is required")
		e.body.Parameter = "message"
		return in, e
	}
	return in, nil
}

// message builds the A2A message from the request's v1.0-shaped message,
// carrying the conversation's ids.
func (in RunRequest) message(contextID, taskID string) (*a2a.Message, error) {
	bad := func(format string, args ...any) error {
		e := newError(http.StatusBadRequest, CodeInvalidMessage, format, args...)
		e.body.Parameter = "message"
		return e
	}
	m := in.Message
	switch strings.ToLower(strings.TrimPrefix(strings.ToUpper(m.Role), "ROLE_")) {
	case "", "user":
	default:
		return nil, bad("message.role must be user")
	}
	if len(m.Parts) == 0 {
		return nil, bad("message.parts must hold at least one part")
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser)
	if m.MessageID != "" {
		msg.ID = m.MessageID
	}
	for i, raw := range m.Parts {
		var p a2a.Part
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, bad("message.parts[%d] must have exactly one of text, raw, data, url", i)
		}
		msg.Parts = append(msg.Parts, &p)
	}
	msg.ContextID, msg.TaskID = contextID, a2a.TaskID(taskID)
	return msg, nil
}

func (in RunRequest) credentials() proxy.Credentials {
	var cr proxy.Credentials
	if in.Credentials == nil {
		return cr
	}
	k := in.Credentials
	cr.Bearer, cr.APIKey = k.Bearer, k.APIKey
	if k.Basic != nil {
		cr.Basic = &proxy.Basic{Username: k.Basic.Username, Password: k.Basic.Password}
	}
	if k.OAuth2ClientCredentials != nil {
		o := k.OAuth2ClientCredentials
		cr.OAuth2ClientCredentials = &proxy.ClientCredentials{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes}
	}
	return cr
}
