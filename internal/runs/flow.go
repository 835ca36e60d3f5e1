package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
)

// Turn is what a door asks of one turn of a run.
type Turn struct {
	// Message is the tester's message. Start sends it as given; Continue
	// sets its context and task to the run's. Resubscribe takes none.
	Message *a2a.Message
	// Choice picks the interface of a run's first turn. A later turn
	// stays on the interface the run used (a task lives on the server
	// that made it), speaking Choice.SpeakVersion when set, else the
	// version the run spoke.
	Choice      proxy.Choice
	Credentials proxy.Credentials
	// Extensions are URIs of extensions the card declares, activated for
	// this turn (A2A-Extensions); any other is refused.
	Extensions []string
	// NoStream sends the message with SendMessage (message/send) even
	// when the card declares streaming: a tester checks that the agent's
	// non-streamed answer works too.
	NoStream bool
	// RunID, on Start only, is an id the door prepared for the run (an
	// OAuth sign-in to the agent made before it, whose token is kept
	// under that id); it is used when no run has it yet.
	RunID string
}

// Ref names the run a follow-up is for.
type Ref struct {
	RunID string
	// AgentID, when set, is the agent the run must be of (a door that
	// addresses runs under their agent).
	AgentID string
}

// Watcher hears of a turn while it runs; either func may be nil.
type Watcher struct {
	// Started hears of the run once it is admitted (and stored, when it
	// is new), before the agent is called; turn is the index the turn
	// under way will have in the transcript.
	Started func(run catalog.Run, turn int)
	// Event hears of each event the agent sends.
	Event func(turn int, e proxy.Event)
}

// Outcome is a run after a turn.
type Outcome struct {
	Run catalog.Run
	// Transcript is as stored, with turns other requests stored
	// meanwhile merged in.
	Transcript proxy.Transcript
	// Err is how the turn failed (the run's result, kept in its
	// transcript); nil when the agent answered. Preflight(Err) tells the
	// caller's own mistakes from the agent's failures.
	Err error
}

// Start sends a first message to the agent and stores the run.
func (s *Service) Start(ctx context.Context, c Caller, agentID string, t Turn, w Watcher) (Outcome, error) {
	if t.Message == nil {
		return Outcome{}, errorf(KindBadRequest, "message is required")
	}
	ag, err := s.agent(ctx, c.Scope, agentID)
	if err != nil {
		return Outcome{}, err
	}
	if err := s.ownConversation(ctx, c, ag.ID, t.Message); err != nil {
		return Outcome{}, err
	}
	now := s.now().UTC()
	run := catalog.Run{ID: s.newID(ctx, t.RunID), AgentID: ag.ID, Kind: catalog.RunKindRun, Subject: c.subject(),
		State: StateRunning, ContextID: t.Message.ContextID, TaskID: string(t.Message.TaskID), CreatedAt: now, UpdatedAt: now}
	tr := proxy.Transcript{Format: proxy.TranscriptFormat, Turns: []proxy.Turn{}}
	return s.send(ctx, c, exchange{agent: ag, run: run, tr: tr, choice: t.Choice, turn: t, create: true}, w)
}

// ownConversation refuses a first message that names a task or context
// the caller has no run on: the agent would take it as a turn of that
// conversation, someone else's, and answer with its history (in A2A a
// message's contextId and taskId place it in a conversation).
func (s *Service) ownConversation(ctx context.Context, c Caller, agentID string, msg *a2a.Message) error {
	if msg.TaskID == "" && msg.ContextID == "" {
		return nil
	}
	if c.Subject != "" {
		ok, err := s.store.HasConversation(ctx, agentID, c.Subject, string(msg.TaskID), msg.ContextID)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return errorf(KindNotYours, "task_id and context_id must be those of one of your own runs of this agent")
}

// Continue sends a follow-up message in the run's conversation: on its
// task, or in its context with a new task once the task has ended (a
// terminal task takes no more messages, A2A v1.0 §3.1.1).
func (s *Service) Continue(ctx context.Context, c Caller, ref Ref, t Turn, w Watcher) (Outcome, error) {
	if t.Message == nil {
		return Outcome{}, errorf(KindBadRequest, "message is required")
	}
	run, ag, tr, err := s.own(ctx, c, ref)
	if err != nil {
		return Outcome{}, err
	}
	msg := *t.Message
	msg.ContextID, msg.TaskID = run.ContextID, a2a.TaskID(run.TaskID)
	if a2a.TaskState(run.State).Terminal() {
		msg.TaskID = ""
	}
	t.Message = &msg
	return s.send(ctx, c, exchange{agent: ag, run: run, tr: tr, choice: pinned(run, t.Choice), turn: t}, w)
}

// Resubscribe reopens the stream of the run's task (v1.0 SubscribeToTask,
// v0.3 tasks/resubscribe), for a tester whose stream was cut.
func (s *Service) Resubscribe(ctx context.Context, c Caller, ref Ref, t Turn, w Watcher) (Outcome, error) {
	if t.Message != nil {
		return Outcome{}, errorf(KindBadRequest, "a resubscription sends no message")
	}
	run, ag, tr, err := s.own(ctx, c, ref)
	if err != nil {
		return Outcome{}, err
	}
	if run.TaskID == "" {
		return Outcome{}, errorf(KindNoTask, "the run has no task to follow")
	}
	return s.send(ctx, c, exchange{agent: ag, run: run, tr: tr, choice: pinned(run, t.Choice), turn: t}, w)
}

// Cancel asks the agent to cancel the run's task. A refusal of the
// caller's own making (Preflight) stores nothing; any other outcome is a
// turn of the run.
func (s *Service) Cancel(ctx context.Context, c Caller, ref Ref, t Turn) (Outcome, error) {
	run, ag, tr, err := s.own(ctx, c, ref)
	if err != nil {
		return Outcome{}, err
	}
	if run.TaskID == "" {
		return Outcome{}, errorf(KindNoTask, "the run has no task to cancel")
	}
	release, err := s.acquire(c)
	if err != nil {
		return Outcome{}, err
	}
	defer release()
	started := time.Now()
	creds := s.keeper.Use(run.ID, c.subject(), t.Credentials)
	x, cerr := s.runner.Cancel(ctx, proxy.Call{Card: ag.Card, Choice: pinned(run, t.Choice), Credentials: creds}, run.TaskID)
	if p := Preflight(cerr); p != nil {
		return Outcome{}, p
	}
	base := len(tr.Turns)
	tr.Turns = append(tr.Turns, proxy.NewTurn(proxy.OpCancel, started, nil, run.TaskID, creds, false, x, cerr))
	run = s.settle(run, &tr, x, cerr, false)
	if err := s.save(ctx, c.Actor, proxy.OpCancel, run, tr, base, false); err != nil {
		return Outcome{Run: run, Transcript: tr, Err: cerr}, err
	}
	return s.outcome(ctx, run, tr, cerr), nil
}

// exchange is one send or resubscription of a run.
type exchange struct {
	agent  catalog.Agent
	run    catalog.Run
	tr     proxy.Transcript
	choice proxy.Choice
	turn   Turn
	// create stores run before the agent is called.
	create bool
}

// send is the one flow of a turn that talks to the agent: extension
// check, limits, the new run stored, credentials, the call with the task
// noted as soon as the agent names it, the turn settled and stored. A
// message nil resubscribes to the run's task.
func (s *Service) send(ctx context.Context, c Caller, x exchange, w Watcher) (Outcome, error) {
	if err := declaredExtensions(x.agent.Card, x.turn.Extensions); err != nil {
		return Outcome{}, err
	}
	release, err := s.acquire(c)
	if err != nil {
		return Outcome{}, err
	}
	defer release()
	run, tr := x.run, x.tr
	if x.create {
		if err := s.store.CreateRun(ctx, c.Actor, run); errors.Is(err, catalog.ErrNotFound) {
			return Outcome{}, errorf(KindNotFound, "no agent with id %q", run.AgentID)
		} else if err != nil {
			return Outcome{}, fmt.Errorf("creating run: %w", err)
		}
	}
	// Credentials offered are kept (in memory) for the conversation's
	// next turns; a turn offering none uses those.
	creds := s.keeper.Use(run.ID, c.subject(), x.turn.Credentials)
	call := proxy.Call{Card: x.agent.Card, Choice: x.choice, Credentials: creds, Extensions: x.turn.Extensions}
	base := len(tr.Turns)
	if w.Started != nil {
		w.Started(run, base)
	}
	note := s.noter(ctx, run, tr, base)
	emit := func(e proxy.Event) {
		if w.Event != nil {
			w.Event(base, e)
		}
		note(e)
	}
	started := time.Now()
	msg := x.turn.Message
	var (
		ex   *proxy.Exchange
		serr error
		turn proxy.Turn
	)
	if msg != nil {
		ex, serr = s.runner.Send(ctx, call, msg, !x.turn.NoStream, emit)
		turn = proxy.NewTurn(proxy.OpSend, started, msg, string(msg.TaskID), creds, x.agent.Card.Capabilities.Streaming && !x.turn.NoStream, ex, serr)
	} else {
		ex, serr = s.runner.Resubscribe(ctx, call, run.TaskID, emit)
		turn = proxy.NewTurn(proxy.OpResubscribe, started, nil, run.TaskID, creds, true, ex, serr)
	}
	tr.Turns = append(tr.Turns, turn)
	run = s.settle(run, &tr, ex, serr, true)
	// A follow-up is audited with the turn it stores; a new run was
	// audited when it was created.
	op := turn.Op
	if x.create {
		op = ""
	}
	if err := s.save(ctx, c.Actor, op, run, tr, base, true); err != nil {
		return Outcome{Run: run, Transcript: tr, Err: serr}, err
	}
	return s.outcome(ctx, run, tr, serr), nil
}

// noteActor stores a task id the agent named: part of the turn, which is
// audited when it is stored.
var noteActor = catalog.System("runs")

// noter stores the task id as soon as the agent names it, so another
// request (another tab, a cancel) can act on the task while this one
// still streams.
func (s *Service) noter(ctx context.Context, run catalog.Run, tr proxy.Transcript, base int) func(proxy.Event) {
	noted := run.TaskID != ""
	return func(e proxy.Event) {
		if noted || e.TaskID == "" {
			return
		}
		noted = true
		r := run
		// The run is under way on this task whatever state it had.
		r.TaskID, r.ContextID, r.State = e.TaskID, e.ContextID, StateRunning
		r.InterfaceURL, r.Binding, r.ProtocolVersion = e.Via.URL, e.Via.Binding, e.Via.Speaks
		if err := s.save(ctx, noteActor, "", r, tr, base, false); err != nil {
			s.log.WarnContext(ctx, "runs: noting a run's task", "err", err, "run_id", run.ID)
		}
	}
}

// acquire admits the caller's run under the limits.
func (s *Service) acquire(c Caller) (func(), error) {
	if s.limiter == nil {
		return func() {}, nil
	}
	release, err := s.limiter.Acquire(c.subject())
	if err != nil {
		return nil, limited(err)
	}
	return release, nil
}

// agent reads the agent a run is for: seen by the caller, not removed (a
// removed agent keeps its history, not its runs), with a card.
func (s *Service) agent(ctx context.Context, sc catalog.Scope, id string) (catalog.Agent, error) {
	ag, err := s.store.Agent(ctx, sc, id)
	if errors.Is(err, catalog.ErrNotFound) || (err == nil && ag.Removed != nil) {
		return ag, errorf(KindNotFound, "no agent with id %q", id)
	}
	if err != nil {
		return ag, fmt.Errorf("reading agent %s: %w", id, err)
	}
	if ag.Card == nil {
		return ag, fmt.Errorf("agent %s has no parsed card", id)
	}
	return ag, nil
}

// Own reads the run ref names for a caller who may continue it (a door
// preparing its next turn, such as a sign-in to the agent): KindNotFound,
// KindNotYours otherwise.
func (s *Service) Own(ctx context.Context, c Caller, ref Ref) (catalog.Run, error) {
	run, _, _, err := s.own(ctx, c, ref)
	return run, err
}

// own loads the run ref names and its agent, for a caller who may
// continue it: the one who started it, or one who may act on any run.
func (s *Service) own(ctx context.Context, c Caller, ref Ref) (catalog.Run, catalog.Agent, proxy.Transcript, error) {
	run, err := s.store.Run(ctx, c.Scope, ref.RunID)
	if errors.Is(err, catalog.ErrNotFound) || (err == nil && (run.Kind != catalog.RunKindRun || (ref.AgentID != "" && run.AgentID != ref.AgentID))) {
		return run, catalog.Agent{}, proxy.Transcript{}, errorf(KindNotFound, "no run with id %q", ref.RunID)
	}
	if err != nil {
		return run, catalog.Agent{}, proxy.Transcript{}, fmt.Errorf("reading run: %w", err)
	}
	// An anonymous caller owns no run: with sign-in on, anonymous
	// testers are not one another.
	if !c.AnyRun && (c.Subject == "" || c.Subject != run.Subject) {
		return run, catalog.Agent{}, proxy.Transcript{}, errorf(KindNotYours, "only the tester who started this run may continue it")
	}
	ag, err := s.agent(ctx, c.Scope, run.AgentID)
	if KindOf(err) == KindNotFound {
		return run, ag, proxy.Transcript{}, errorf(KindNotFound, "the run's agent is gone")
	}
	if err != nil {
		return run, ag, proxy.Transcript{}, err
	}
	tr, err := TranscriptOf(run)
	return run, ag, tr, err
}

// newID is proposed when no run has it yet, else a fresh id.
func (s *Service) newID(ctx context.Context, proposed string) string {
	if proposed != "" {
		if _, err := s.store.Run(ctx, catalog.ScopeAll, proposed); errors.Is(err, catalog.ErrNotFound) {
			return proposed
		}
	}
	return uuid.NewString()
}

// pinned keeps a conversation on the interface its run used: a task lives
// on the server that made it. The version spoken is the one asked for,
// else the one the run spoke (which the tester chose when the card
// declared none).
func pinned(run catalog.Run, asked proxy.Choice) proxy.Choice {
	if run.InterfaceURL == "" {
		// The first turn never reached an interface: choose afresh.
		return proxy.Choice{URL: asked.URL, Binding: asked.Binding, Version: asked.Version, SpeakVersion: asked.SpeakVersion}
	}
	speak := asked.SpeakVersion
	if speak == "" {
		speak = run.ProtocolVersion
	}
	return proxy.Choice{URL: run.InterfaceURL, Binding: run.Binding, Version: run.ProtocolVersion, SpeakVersion: speak}
}

// declaredExtensions refuses extensions the card does not declare: the
// registry activates only what the agent says it supports.
func declaredExtensions(c *card.Card, exts []string) error {
	for _, uri := range exts {
		if !slices.ContainsFunc(c.Capabilities.Extensions, func(e card.Extension) bool { return e.URI == uri }) {
			return errorf(KindExtension, "extension %q is not declared by the agent's card", uri)
		}
	}
	return nil
}
