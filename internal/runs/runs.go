// Package runs owns test runs: a tester's messages to an agent through
// the proxy, kept as runs with their transcripts. Every door (the JSON
// API, the console, and those to come) starts, continues, cancels and
// follows runs through a Service, with the caller as an argument, so a
// run means the same whichever door started it. It knows no HTTP: events
// go to the door through a Watcher, refusals come back as *Error.
package runs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
)

// Runner is the part of the proxy runs drive; *proxy.Proxy implements it.
type Runner interface {
	Send(ctx context.Context, call proxy.Call, msg *a2a.Message, stream bool, emit func(proxy.Event)) (*proxy.Exchange, error)
	Cancel(ctx context.Context, call proxy.Call, taskID string) (*proxy.Exchange, error)
	Resubscribe(ctx context.Context, call proxy.Call, taskID string, emit func(proxy.Event)) (*proxy.Exchange, error)
	// Check calls charge before each interface after the first it sends
	// to; an error stops it sending (proxy.Proxy.Check).
	Check(ctx context.Context, c *card.Card, creds proxy.Credentials, charge func() error) []proxy.InterfaceCheck
	Limits() (maxRun time.Duration, maxMessage, maxFile int64)
}

// Store keeps runs and reads the agents they are for; *catalog.Store
// implements it.
type Store interface {
	// Agent returns catalog.ErrNotFound for an agent the scope does not
	// see.
	Agent(ctx context.Context, sc catalog.Scope, id string) (catalog.Agent, error)
	CreateRun(ctx context.Context, actor catalog.Actor, r catalog.Run) error
	// UpdateRun fails with catalog.ErrConflict when r.Revision is not
	// the stored one; op, when set, is the turn audited for actor in the
	// same transaction.
	UpdateRun(ctx context.Context, actor catalog.Actor, r catalog.Run, op string) error
	// Run and AgentRuns leave out the runs of agents the scope does not
	// see (catalog.ErrNotFound, none).
	Run(ctx context.Context, sc catalog.Scope, id string) (catalog.Run, error)
	// AgentRuns lists an agent's runs of one kind (catalog.RunKindRun,
	// catalog.RunKindCheck), newest first.
	AgentRuns(ctx context.Context, sc catalog.Scope, agentID, kind string, limit int) ([]catalog.Run, error)
	// HasConversation tells whether subject started a run of the agent
	// on taskID and in contextID (each when not empty).
	HasConversation(ctx context.Context, agentID, subject, taskID, contextID string) (bool, error)
}

// Run states besides the task states (TASK_STATE_…) a run takes from its
// task.
const (
	StateRunning = "running"
	// StateMessage: the agent answered with a message, not a task.
	StateMessage = "message"
	StateFailed  = "failed"
)

// Caller is who asks, as the door identified them.
type Caller struct {
	// Actor is who the catalog records as writing (auth.ActorOf).
	Actor catalog.Actor
	// Scope is what the caller sees (auth.ScopeOf); a run of an agent
	// outside it is not found.
	Scope catalog.Scope
	// Subject owns the runs the caller starts and the credentials they
	// offer; empty means "anonymous".
	Subject string
	// AnyRun lets the caller continue runs others started: an admin, or
	// anyone when sign-in is off.
	AnyRun bool
}

func (c Caller) subject() string {
	if c.Subject == "" {
		return "anonymous"
	}
	return c.Subject
}

// Options configure a Service.
type Options struct {
	Runner Runner
	Store  Store
	// Limiter, when set, bounds runs in flight and their rate per
	// subject, whichever door they come through.
	Limiter *proxy.Limiter
	// Keeper, when set, remembers the credentials a run was given, in
	// memory, so that its follow-ups by the same subject need not repeat
	// them.
	Keeper *proxy.Keeper
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// PrivateAll withholds every run's transcript from all but its
	// tester and admins; otherwise only runs made with credentials are
	// (see Get).
	PrivateAll bool
}

// Service runs tests against agents.
type Service struct {
	runner  Runner
	store   Store
	limiter *proxy.Limiter
	keeper  *proxy.Keeper
	log     *slog.Logger
	now     func() time.Time
	private bool
}

// New returns a Service over opts; Runner and Store must not be nil.
func New(opts Options) *Service {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Service{runner: opts.Runner, store: opts.Store, limiter: opts.Limiter, keeper: opts.Keeper, log: log, now: time.Now, private: opts.PrivateAll}
}

// Limits are the runner's: how long a run may last, and how large a
// message and a file in it may be.
func (s *Service) Limits() (maxRun time.Duration, maxMessage, maxFile int64) {
	return s.runner.Limits()
}

// Remember keeps credentials for a run's next turns by subject (a
// tester's OAuth sign-in to the agent, made before the turn that uses
// it).
func (s *Service) Remember(runID, subject string, cr proxy.Credentials) {
	s.keeper.Remember(runID, subject, cr)
}

// Remembers tells whether credentials are kept for subject's next turn of
// the run.
func (s *Service) Remembers(runID, subject string) bool {
	return s.keeper.Holds(runID, subject)
}

// Read is a run as its reader may see it.
type Read struct {
	Run        catalog.Run
	Transcript proxy.Transcript
	// Withheld: the run is its tester's (made with credentials, or
	// Options.PrivateAll), and the reader sees that it happened — its
	// agent, tester, state, times — without the transcript, the task and
	// context ids, or the interface.
	Withheld bool
}

// Get reads a run (not a check) the caller sees. A run made with
// credentials shows what an agent answered its tester alone — their
// data, what the credentials opened — so its transcript is for its tester
// and admins (Caller.AnyRun) only; with Options.PrivateAll every run's is.
func (s *Service) Get(ctx context.Context, c Caller, id string) (Read, error) {
	run, err := s.store.Run(ctx, c.Scope, id)
	// A check is read through its agent (LatestCheck), not here.
	if errors.Is(err, catalog.ErrNotFound) || (err == nil && run.Kind != catalog.RunKindRun) {
		return Read{}, errorf(KindNotFound, "no run with id %q", id)
	}
	if err != nil {
		return Read{}, fmt.Errorf("reading run: %w", err)
	}
	tr, err := TranscriptOf(run)
	if err != nil {
		return Read{}, err
	}
	mine := c.AnyRun || (c.Subject != "" && c.Subject == run.Subject)
	if mine || !(s.private || withCredentials(tr)) {
		return Read{Run: run, Transcript: tr}, nil
	}
	run.Transcript, run.TaskID, run.ContextID = nil, "", ""
	run.InterfaceURL, run.Binding, run.ProtocolVersion = "", "", ""
	return Read{Run: run, Transcript: proxy.Transcript{Format: tr.Format, Turns: []proxy.Turn{}}, Withheld: true}, nil
}

// withCredentials tells whether any turn of the run offered credentials.
func withCredentials(tr proxy.Transcript) bool {
	for _, t := range tr.Turns {
		if t.CredentialKind != "" {
			return true
		}
	}
	return false
}

// List is an agent's runs, newest first, at most limit.
func (s *Service) List(ctx context.Context, sc catalog.Scope, agentID string, limit int) ([]catalog.Run, error) {
	if _, err := s.store.Agent(ctx, sc, agentID); errors.Is(err, catalog.ErrNotFound) {
		return nil, errorf(KindNotFound, "no agent with id %q", agentID)
	} else if err != nil {
		return nil, fmt.Errorf("reading agent: %w", err)
	}
	rs, err := s.store.AgentRuns(ctx, sc, agentID, catalog.RunKindRun, limit)
	if err != nil {
		return nil, fmt.Errorf("listing runs of agent %s: %w", agentID, err)
	}
	return rs, nil
}

// Ended tells a run whose task reached a terminal state, or that failed
// before any answer: its remembered credentials are forgotten, and it
// takes no cancel. (A conversation answered with a message may go on in
// its context; its credentials expire with the Keeper's time-to-live.)
func Ended(state string) bool {
	return a2a.TaskState(state).Terminal() || state == StateFailed
}
