package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// Call is what every operation needs: the card to read interfaces and
// schemes from, the caller's pick, and credentials.
type Call struct {
	Card        *card.Card
	Choice      Choice
	Credentials Credentials
	// Extensions are the URIs of extensions the caller activates, sent as
	// A2A-Extensions (v1.0 §3.2.6; X-A2A-Extensions to v0.3 agents).
	Extensions []string
}

// Event kinds, named after the v1.0 StreamResponse fields.
const (
	KindTask           = "task"
	KindMessage        = "message"
	KindStatusUpdate   = "statusUpdate"
	KindArtifactUpdate = "artifactUpdate"
)

// Event is one A2A event as relayed, in the v1.0 JSON shape whatever the
// agent spoke.
type Event struct {
	// Seq counts events from 1 within one operation.
	Seq int
	// At is the time since the operation started.
	At   time.Duration
	Kind string
	// State is the task state a task or status update carries
	// (TASK_STATE_…), empty otherwise.
	State string
	// TaskID and ContextID are those the event names.
	TaskID, ContextID string
	// Via is the interface it came over.
	Via Endpoint
	// Data is the event object (a Task, Message, TaskStatusUpdateEvent or
	// TaskArtifactUpdateEvent) in v1.0 JSON, credentials scrubbed.
	Data json.RawMessage
}

// Attempt is an interface tried before the one that answered, and why it
// was left.
type Attempt struct {
	Interface card.Interface
	Speaks    string
	// Error is what failed, credentials scrubbed.
	Error string
}

// Violation is a protocol rule the agent broke during the operation.
type Violation struct {
	Code string
	// Seq is the event it concerns, 0 for the exchange as a whole.
	Seq    int
	Detail string
}

// Violation codes.
const (
	// ViolationEventAfterTerminal: an event after a terminal state or
	// after a Message ended the stream (v1.0 §3.1.2: a Message or a
	// terminal task ends the stream).
	ViolationEventAfterTerminal = "event_after_terminal"
	// ViolationUnknownState: a task state that is not one of the spec's.
	ViolationUnknownState = "unknown_state"
	// ViolationUpdateBeforeTask: a status or artifact update before the
	// Task it updates was sent (v1.0 §3.1.2: the first event is a Task or
	// a Message).
	ViolationUpdateBeforeTask = "update_before_task"
	// ViolationTaskChanged: events of one stream name different tasks.
	ViolationTaskChanged = "task_id_changed"
	// ViolationMalformedPart: a part with no content.
	ViolationMalformedPart = "malformed_part"
	// ViolationMissingTaskID: a task or update without an id.
	ViolationMissingTaskID = "missing_task_id"
)

// Exchange is what one operation did.
type Exchange struct {
	// Endpoint is the interface that answered (or the last one tried).
	Endpoint Endpoint
	// Scheme is the card's security scheme the credentials satisfied.
	Scheme string
	// Extensions are those activated.
	Extensions []string
	Skipped    []Skipped
	Attempts   []Attempt
	Events     []Event
	Violations []Violation
	// Task or Message is the final result: the task as last seen, or the
	// agent's direct message. Both nil when the operation failed.
	Task    *a2a.Task
	Message *a2a.Message
	// Result is Task or Message in v1.0 JSON, credentials scrubbed.
	Result json.RawMessage
	// Duration is the whole operation's time.
	Duration time.Duration
}

// State is the final task state, "" when the result is a message or
// nothing.
func (x *Exchange) State() string {
	if x.Task == nil {
		return ""
	}
	return string(x.Task.Status.State)
}

// Error is an operation's failure: a sentinel (ErrUnreachable, ErrAgent,
// …) for the cause, and a message safe to show and store.
type Error struct {
	Cause error
	// Reason is the A2A error reason when the agent sent one
	// (TASK_NOT_FOUND, UNAUTHENTICATED, …).
	Reason  string
	Message string
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Cause }

// Send sends msg. With stream, it uses SendStreamingMessage when the card
// declares streaming (else SendMessage, and says so by relaying the one
// result) and calls emit for each event as it arrives. emit may be nil.
func (p *Proxy) Send(ctx context.Context, call Call, msg *a2a.Message, stream bool, emit func(Event)) (*Exchange, error) {
	if err := p.checkMessage(msg); err != nil {
		return nil, err
	}
	streaming := stream && call.Card.Capabilities.Streaming
	return p.do(ctx, call, emit, func(ctx context.Context, c *connection) iter.Seq2[a2a.Event, error] {
		req := &a2a.SendMessageRequest{Message: msg}
		if streaming {
			return c.client.SendStreamingMessage(ctx, req)
		}
		return single(func() (a2a.Event, error) {
			r, err := c.client.SendMessage(ctx, req)
			if err != nil {
				return nil, err
			}
			return r.(a2a.Event), nil
		})
	})
}

// GetTask fetches a task.
func (p *Proxy) GetTask(ctx context.Context, call Call, taskID string) (*Exchange, error) {
	return p.do(ctx, call, nil, func(ctx context.Context, c *connection) iter.Seq2[a2a.Event, error] {
		return single(func() (a2a.Event, error) {
			t, err := c.client.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(taskID)})
			return t, err
		})
	})
}

// Cancel asks the agent to cancel a task.
func (p *Proxy) Cancel(ctx context.Context, call Call, taskID string) (*Exchange, error) {
	return p.do(ctx, call, nil, func(ctx context.Context, c *connection) iter.Seq2[a2a.Event, error] {
		return single(func() (a2a.Event, error) {
			t, err := c.client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(taskID)})
			return t, err
		})
	})
}

// Resubscribe reopens the event stream of a task (v1.0 SubscribeToTask,
// v0.3 tasks/resubscribe).
func (p *Proxy) Resubscribe(ctx context.Context, call Call, taskID string, emit func(Event)) (*Exchange, error) {
	return p.do(ctx, call, emit, func(ctx context.Context, c *connection) iter.Seq2[a2a.Event, error] {
		return c.client.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(taskID)})
	})
}

func single(f func() (a2a.Event, error)) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		e, err := f()
		yield(e, err)
	}
}

// do runs op over the endpoints in order, moving on only when an endpoint
// could not be reached before anything was relayed.
func (p *Proxy) do(ctx context.Context, call Call, emit func(Event), op func(context.Context, *connection) iter.Seq2[a2a.Event, error]) (*Exchange, error) {
	start := p.now()
	eps, skipped, err := endpoints(call.Card, call.Choice)
	x := &Exchange{Skipped: skipped, Extensions: call.Extensions}
	if err != nil {
		return x, err
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.MaxRun)
	defer cancel()
	au, err := p.resolve(ctx, call.Card, call.Credentials)
	if err != nil {
		return x, err
	}
	x.Scheme = au.scheme
	rec := &recorder{x: x, au: au, start: start, now: p.now, emit: emit, max: p.opts.MaxEvents}
	var (
		last    error
		lastURL string
	)
	// allSelf: every interface tried leads to the registry itself.
	allSelf := true
	failed := func(ep Endpoint, err error, conn *connection) {
		msg := capDetail(au.scrub(detail(err, ep.URL)))
		// gRPC reports a failed dial as text only; the dialer kept it.
		if cause := dialCause(err, conn); errors.Is(cause, safehttp.ErrSelf) {
			msg = safehttp.Describe(hostOf(ep.URL), cause)
		} else {
			allSelf = false
		}
		x.Attempts = append(x.Attempts, Attempt{Interface: ep.Interface, Speaks: ep.Speaks, Error: msg})
		last, lastURL = err, ep.URL
	}
	for _, ep := range eps {
		x.Endpoint = ep
		conn, err := p.connect(ctx, ep, au, call.Extensions)
		if err != nil {
			failed(ep, err, conn)
			continue
		}
		err = rec.consume(op(ctx, conn))
		_ = conn.client.Destroy()
		if err == nil && rec.seq == 0 {
			// Every operation answers with at least a Task or a Message;
			// nothing at all is the agent's failure, not a success.
			err = errNoEvents
		}
		if v := versionViolation(ep, err, rec.seq > 0 && err == nil, conn.sniff); v != nil {
			x.Violations = append(x.Violations, *v)
		}
		x.Result = result(x, au)
		if err == nil {
			x.Duration = p.now().Sub(start)
			return x, nil
		}
		if rec.seq == 0 && connectFailed(err, conn) && ctx.Err() == nil {
			failed(ep, err, conn)
			continue
		}
		x.Duration = p.now().Sub(start)
		return x, p.classify(ctx, err, au, ep.URL)
	}
	x.Duration = p.now().Sub(start)
	if last != nil && allSelf {
		return x, &Error{Cause: ErrSelf, Message: x.Attempts[len(x.Attempts)-1].Error}
	}
	msg := "no declared interface could be reached"
	if last != nil {
		msg += ": " + capDetail(au.scrub(detail(last, lastURL)))
	}
	return x, &Error{Cause: ErrUnreachable, Message: msg}
}

// result encodes the final task or message.
func result(x *Exchange, au *auth) json.RawMessage {
	var v any
	switch {
	case x.Task != nil:
		v = x.Task
	case x.Message != nil:
		v = x.Message
	default:
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return au.scrubJSON(b)
}

// classify turns an SDK error into an Error safe to store and show (see
// detail).
func (p *Proxy) classify(ctx context.Context, err error, au *auth, rawURL string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Cause: ErrRunTimeout, Message: fmt.Sprintf("the run passed its limit of %s", p.opts.MaxRun)}
	}
	if ctx.Err() != nil {
		return &Error{Cause: ctx.Err(), Message: "the run was stopped"}
	}
	var ns *notStreamError
	switch {
	case errors.As(err, &ns):
		return &Error{Cause: ErrAgent, Message: au.scrub(ns.Error())}
	case errors.Is(err, errNoEvents):
		return &Error{Cause: ErrAgent, Message: errNoEvents.Error()}
	}
	reason := ""
	if r := a2a.ErrorReason(err); r != "INTERNAL_ERROR" || errors.Is(err, a2a.ErrInternalError) {
		reason = r
	}
	return &Error{Cause: ErrAgent, Reason: reason, Message: capDetail(au.scrub(detail(err, rawURL)))}
}

// recorder turns SDK events into Events, checks them against the
// protocol's ordering rules, and relays them.
type recorder struct {
	x     *Exchange
	au    *auth
	start time.Time
	now   func() time.Time
	emit  func(Event)
	seq   int
	// ended is set by a Message or a terminal state: nothing may follow.
	ended  bool
	taskID a2a.TaskID
	max    int
}

// errTooManyEvents stops an operation whose agent sent more than the
// proxy records.
var errTooManyEvents = errors.New("too many events")

// MaxViolations bounds the protocol violations one operation records: an
// agent can break a rule once per part of every event, and each is
// stored with the run; the first ones say what is wrong.
const MaxViolations = 32

// MaxIDBytes bounds a task or context id an agent names: an event with a
// longer one ends the operation as the agent's error, before anything
// stores it.
const MaxIDBytes = 1024

// errIDTooLong stops an operation whose agent named a longer id.
var errIDTooLong = errors.New("id too long")

func (r *recorder) consume(events iter.Seq2[a2a.Event, error]) error {
	for ev, err := range events {
		if err != nil {
			return err
		}
		if ev == nil {
			continue
		}
		if r.seq >= r.max {
			return fmt.Errorf("the agent sent more than %d events: %w", r.max, errTooManyEvents)
		}
		if ti, ok := ev.(a2a.TaskInfoProvider); ok {
			// A run keeps the agent's ids in its row, beside the bounded
			// transcript, and sends them back on every follow-up.
			if info := ti.TaskInfo(); len(info.TaskID) > MaxIDBytes || len(info.ContextID) > MaxIDBytes {
				return fmt.Errorf("the agent named a task or context id of %d bytes; a run keeps ids of at most %d: %w",
					max(len(info.TaskID), len(info.ContextID)), MaxIDBytes, errIDTooLong)
			}
		}
		r.add(ev)
	}
	return nil
}

var knownStates = map[a2a.TaskState]bool{
	a2a.TaskStateSubmitted: true, a2a.TaskStateWorking: true, a2a.TaskStateInputRequired: true,
	a2a.TaskStateAuthRequired: true, a2a.TaskStateCompleted: true, a2a.TaskStateCanceled: true,
	a2a.TaskStateFailed: true, a2a.TaskStateRejected: true,
}

func (r *recorder) add(ev a2a.Event) {
	r.seq++
	e := Event{Seq: r.seq, At: r.now().Sub(r.start), Via: r.x.Endpoint}
	if ti, ok := ev.(a2a.TaskInfoProvider); ok {
		info := ti.TaskInfo()
		e.TaskID, e.ContextID = string(info.TaskID), info.ContextID
	}
	violate := func(code, format string, args ...any) {
		if len(r.x.Violations) >= MaxViolations {
			return
		}
		// A detail quotes the agent's ids, which it may have made of a secret.
		r.x.Violations = append(r.x.Violations, Violation{Code: code, Seq: r.seq, Detail: capDetail(r.au.scrub(fmt.Sprintf(format, args...)))})
	}
	if r.ended {
		violate(ViolationEventAfterTerminal, "event %d arrived after the stream had ended", r.seq)
	}
	checkTask := func(id a2a.TaskID) {
		switch {
		case id == "":
			violate(ViolationMissingTaskID, "the event names no task")
		case r.taskID != "" && id != r.taskID:
			violate(ViolationTaskChanged, "the event names task %s, the stream was about %s", id, r.taskID)
		}
	}
	checkState := func(s a2a.TaskState) {
		if !knownStates[s] {
			violate(ViolationUnknownState, "unknown task state %q", s)
		}
		if s.Terminal() {
			r.ended = true
		}
	}
	checkParts := func(parts a2a.ContentParts, where string) {
		for i, pt := range parts {
			if pt == nil || pt.Content == nil {
				violate(ViolationMalformedPart, "%s part %d has no content", where, i)
			}
		}
	}
	switch v := ev.(type) {
	case *a2a.Task:
		e.Kind, e.State = KindTask, string(v.Status.State)
		checkTask(v.ID)
		checkState(v.Status.State)
		for _, a := range v.Artifacts {
			if a != nil {
				checkParts(a.Parts, "artifact")
			}
		}
		r.taskID = v.ID
	case *a2a.Message:
		e.Kind = KindMessage
		checkParts(v.Parts, "message")
		r.ended = true
	case *a2a.TaskStatusUpdateEvent:
		e.Kind, e.State = KindStatusUpdate, string(v.Status.State)
		if r.x.Task == nil {
			violate(ViolationUpdateBeforeTask, "a status update arrived before the task")
		}
		checkTask(v.TaskID)
		checkState(v.Status.State)
		if r.x.Task == nil {
			r.taskID = v.TaskID
		}
	case *a2a.TaskArtifactUpdateEvent:
		e.Kind = KindArtifactUpdate
		if r.x.Task == nil {
			violate(ViolationUpdateBeforeTask, "an artifact update arrived before the task")
		}
		checkTask(v.TaskID)
		if v.Artifact != nil {
			checkParts(v.Artifact.Parts, "artifact")
		}
	}
	fold(r.x, ev)
	data, err := json.Marshal(ev)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": "event could not be encoded"})
	}
	e.Data = r.au.scrubJSON(data)
	e.TaskID, e.ContextID, e.State = r.au.scrub(e.TaskID), r.au.scrub(e.ContextID), r.au.scrub(e.State)
	r.x.Events = append(r.x.Events, e)
	if r.emit != nil {
		r.emit(e)
	}
}

// fold applies an event to the operation's result: a task replaces what
// came before; a message is the result when no task came; a status or
// artifact update changes the task it names (a status update before any
// task stands for it).
func fold(x *Exchange, ev a2a.Event) {
	switch v := ev.(type) {
	case *a2a.Task:
		x.Task, x.Message = v, nil
	case *a2a.Message:
		if x.Task == nil {
			x.Message = v
		}
	case *a2a.TaskStatusUpdateEvent:
		if x.Task != nil && v.TaskID == x.Task.ID {
			x.Task.Status = v.Status
		} else if x.Task == nil {
			x.Task = &a2a.Task{ID: v.TaskID, ContextID: v.ContextID, Status: v.Status}
		}
	case *a2a.TaskArtifactUpdateEvent:
		if v.Artifact != nil && x.Task != nil && v.TaskID == x.Task.ID {
			appendArtifact(x.Task, v)
		}
	}
}

// FoldEvents replays a stored turn's events as the proxy folded them into
// the turn's result and encodes it (v1.0 JSON): the task as last seen, or
// else the agent's message; both nil when they come to nothing or an
// event no longer decodes (its data dropped from a bounded transcript).
// A transcript stores a result its turn's events fold to only in those
// events.
func FoldEvents(evs []TurnEvent) (task, message json.RawMessage) {
	var x Exchange
	for _, e := range evs {
		if len(e.Data) == 0 || string(e.Data) == "null" {
			return nil, nil
		}
		var ev a2a.Event
		switch e.Kind {
		case KindTask:
			ev = &a2a.Task{}
		case KindMessage:
			ev = &a2a.Message{}
		case KindStatusUpdate:
			ev = &a2a.TaskStatusUpdateEvent{}
		case KindArtifactUpdate:
			ev = &a2a.TaskArtifactUpdateEvent{}
		default:
			return nil, nil
		}
		if err := json.Unmarshal(e.Data, ev); err != nil {
			return nil, nil
		}
		fold(&x, ev)
	}
	var err error
	switch {
	case x.Task != nil:
		task, err = json.Marshal(x.Task)
	case x.Message != nil:
		message, err = json.Marshal(x.Message)
	}
	if err != nil {
		return nil, nil
	}
	return task, message
}

// appendArtifact folds an artifact update into the task (v1.0
// TaskArtifactUpdateEvent: append adds parts to the artifact with the same
// id, else it replaces or adds it).
func appendArtifact(t *a2a.Task, u *a2a.TaskArtifactUpdateEvent) {
	for i, a := range t.Artifacts {
		if a != nil && a.ID == u.Artifact.ID {
			if u.Append {
				cp := *a
				cp.Parts = append(append(a2a.ContentParts(nil), a.Parts...), u.Artifact.Parts...)
				t.Artifacts[i] = &cp
			} else {
				t.Artifacts[i] = u.Artifact
			}
			return
		}
	}
	t.Artifacts = append(t.Artifacts, u.Artifact)
}

// checkMessage holds the message to the proxy's limits before anything is
// sent.
func (p *Proxy) checkMessage(msg *a2a.Message) error {
	if msg == nil || len(msg.Parts) == 0 {
		return fmt.Errorf("%w: the message has no parts", ErrInvalidMessage)
	}
	for i, pt := range msg.Parts {
		if pt == nil || pt.Content == nil {
			return fmt.Errorf("%w: part %d has no content", ErrInvalidMessage, i)
		}
		if raw, ok := pt.Content.(a2a.Raw); ok && int64(len(raw)) > p.opts.MaxFileBytes {
			return fmt.Errorf("%w: part %d carries %d bytes, over the limit of %d", ErrMessageTooLarge, i, len(raw), p.opts.MaxFileBytes)
		}
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidMessage, err)
	}
	if int64(len(b)) > p.opts.MaxMessageBytes {
		return fmt.Errorf("%w: the message is %d bytes encoded, over the limit of %d", ErrMessageTooLarge, len(b), p.opts.MaxMessageBytes)
	}
	return nil
}
