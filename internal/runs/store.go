package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
)

// maxSaveAttempts bounds the retries of a run update that lost a race;
// only the few requests of one run's tester ever race.
const maxSaveAttempts = 8

// saveTimeout bounds storing a turn whose caller has gone.
const saveTimeout = 10 * time.Second

// settle folds an operation's outcome into the run; a run that ended
// needs its credentials no more.
func (s *Service) settle(run catalog.Run, tr *proxy.Transcript, x *proxy.Exchange, err error, sent bool) catalog.Run {
	run = settleRun(run, tr, x, err, sent, s.now().UTC())
	// A failed turn on a task the agent still holds (a reply answered
	// with an error, perhaps another caller's) does not end the
	// conversation: the tester's credentials stay for the next turn.
	if Ended(run.State) && (run.State != StateFailed || run.TaskID == "") {
		s.keeper.Forget(run.ID)
	}
	s.log.Info("runs: run turn", "run_id", run.ID, "agent_id", run.AgentID, "state", run.State, "error_code", run.ErrorCode)
	return run
}

// settleRun folds an operation's outcome into the run and its
// transcript's latest result. sent is true for a message or a
// resubscription, false for a cancel.
func settleRun(run catalog.Run, tr *proxy.Transcript, x *proxy.Exchange, err error, sent bool, now time.Time) catalog.Run {
	run.UpdatedAt = now
	run.ErrorCode = ""
	if x != nil && x.Endpoint.URL != "" {
		run.InterfaceURL, run.Binding, run.ProtocolVersion = x.Endpoint.URL, x.Endpoint.Binding, x.Endpoint.Speaks
	}
	if x != nil && x.Task != nil {
		run.TaskID, run.ContextID = string(x.Task.ID), x.Task.ContextID
		run.State = string(x.Task.Status.State)
		tr.Task, tr.Message = x.Result, nil
	} else if x != nil && x.Message != nil {
		run.State = StateMessage
		if x.Message.ContextID != "" {
			run.ContextID = x.Message.ContextID
		}
		tr.Task, tr.Message = nil, x.Result
	}
	if err != nil {
		run.ErrorCode = proxy.ErrorCode(err)
		// A turn that sent a message and got no answer failed, whatever
		// state the task had before: a reply answered with an error must
		// not leave the run reading input-required. A refused cancel
		// leaves the task as it was.
		if (sent || run.State == StateRunning) && (x == nil || (x.Task == nil && x.Message == nil)) {
			run.State = StateFailed
		}
	}
	return run
}

// save stores run with tr. Turns other requests stored since this one
// read the run (index base on) are kept, in time order: a cancel sent
// from another tab while this turn streamed belongs to the transcript
// too. detach stores even when the caller has gone (a closed stream): the
// evidence is kept. op, when set, is the turn audited for actor in the
// transaction that stores it.
func (s *Service) save(ctx context.Context, actor catalog.Actor, op string, run catalog.Run, tr proxy.Transcript, base int, detach bool) error {
	if detach {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
		defer cancel()
	}
	// Read, merge, write only if nobody wrote in between; else again.
	for attempt := 1; ; attempt++ {
		// The run's caller was let in when it was read or started.
		cur, err := s.store.Run(ctx, catalog.ScopeAll, run.ID)
		if err != nil {
			return fmt.Errorf("storing run: %w", err)
		}
		out := tr
		if stored, err := TranscriptOf(cur); err == nil && len(stored.Turns) > base {
			out.Turns = append(slices.Clone(stored.Turns), tr.Turns[base:]...)
			slices.SortStableFunc(out.Turns, func(x, y proxy.Turn) int { return x.StartedAt.Compare(y.StartedAt) })
		}
		b, err := boundTranscript(out, MaxTranscriptBytes)
		if err != nil {
			return fmt.Errorf("encoding transcript: %w", err)
		}
		run.Transcript, run.Revision = b, cur.Revision
		err = s.store.UpdateRun(ctx, actor, run, op)
		if errors.Is(err, catalog.ErrConflict) && attempt < maxSaveAttempts {
			continue
		}
		if err != nil {
			return fmt.Errorf("storing run: %w", err)
		}
		return nil
	}
}

// outcome is the run as stored after a turn, with other requests' turns
// merged in; run and tr when it cannot be read back.
func (s *Service) outcome(ctx context.Context, run catalog.Run, tr proxy.Transcript, turnErr error) Outcome {
	out := Outcome{Run: run, Transcript: tr, Err: turnErr}
	cur, err := s.store.Run(context.WithoutCancel(ctx), catalog.ScopeAll, run.ID)
	if err != nil {
		return out
	}
	if stored, err := TranscriptOf(cur); err == nil {
		out.Run, out.Transcript = cur, stored
	}
	return out
}

// TranscriptOf decodes a run's stored transcript, the result put back
// from the events it is stored in (proxy.Transcript.ResultTurn).
func TranscriptOf(run catalog.Run) (proxy.Transcript, error) {
	var tr proxy.Transcript
	if err := json.Unmarshal(run.Transcript, &tr); err != nil {
		return tr, fmt.Errorf("decoding transcript of run %s: %w", run.ID, err)
	}
	if tr.Turns == nil {
		tr.Turns = []proxy.Turn{}
	}
	if i := tr.ResultTurn; i != nil && *i >= 0 && *i < len(tr.Turns) {
		tr.Task, tr.Message = proxy.FoldEvents(tr.Turns[*i].Events)
	}
	tr.ResultTurn = nil
	return tr, nil
}

// MaxTranscriptBytes bounds a run's stored transcript: an agent chooses
// how much it streams, and every turn of a conversation adds to one row.
const MaxTranscriptBytes = 1 << 20

// resultTurn is the index of the latest turn whose events fold to tr's
// result, -1 when none does (no result, or events cut short).
func resultTurn(tr proxy.Transcript) int {
	if len(tr.Task) == 0 && len(tr.Message) == 0 {
		return -1
	}
	for i := len(tr.Turns) - 1; i >= 0; i-- {
		if len(tr.Turns[i].Events) == 0 {
			continue
		}
		task, msg := proxy.FoldEvents(tr.Turns[i].Events)
		if bytes.Equal(task, tr.Task) && bytes.Equal(msg, tr.Message) {
			return i
		}
	}
	return -1
}

// storedForm is tr as stored: a result its turn ref's events fold to is
// left to them.
func storedForm(tr proxy.Transcript, ref int) proxy.Transcript {
	if ref >= 0 {
		tr.Task, tr.Message, tr.ResultTurn = nil, nil, &ref
	}
	return tr
}

// boundTranscript encodes tr, its result once, within max bytes: past
// it, the data of the oldest events goes first (null, tr.Truncated set),
// then that of the messages sent, and last the result, which says most
// about the run (kept on its own once its events' data goes).
func boundTranscript(tr proxy.Transcript, max int) ([]byte, error) {
	ref := resultTurn(tr)
	b, err := json.Marshal(storedForm(tr, ref))
	if err != nil || len(b) <= max {
		return b, err
	}
	tr.Truncated = true
	over := len(b) - max
	drop := func(raw *json.RawMessage) {
		if over > 0 && len(*raw) > 4 {
			over -= len(*raw) - 4 // "null"
			*raw = json.RawMessage("null")
		}
	}
	// Turns are shared with the caller's copy: clone what changes.
	tr.Turns = slices.Clone(tr.Turns)
	for i := range tr.Turns {
		tr.Turns[i].Events = slices.Clone(tr.Turns[i].Events)
		if i == ref {
			continue
		}
		for j := range tr.Turns[i].Events {
			drop(&tr.Turns[i].Events[j].Data)
		}
	}
	for i := range tr.Turns {
		drop(&tr.Turns[i].Message)
	}
	if over > 0 && ref >= 0 {
		// The result's own events go next: it is stored on its own.
		over += len(tr.Task) + len(tr.Message)
		i := ref
		ref = -1
		for j := range tr.Turns[i].Events {
			drop(&tr.Turns[i].Events[j].Data)
		}
	}
	if over > 0 {
		tr.Task, tr.Message = nil, nil
	}
	// An agent that streams a great many small events outgrows the
	// bound with their envelopes alone: the oldest half of them goes,
	// until it fits. A conversation of a great many turns, each with
	// its violations, outgrows it too: then the oldest turns'
	// violations go, and last the oldest half of the turns, the latest
	// always kept.
	for {
		if b, err = json.Marshal(storedForm(tr, ref)); err != nil || len(b) <= max {
			return b, err
		}
		if ref >= 0 {
			// Events are about to go: the result no longer folds from
			// them.
			ref = -1
			continue
		}
		if i := slices.IndexFunc(tr.Turns, func(t proxy.Turn) bool { return len(t.Events) > 0 }); i >= 0 {
			evs := tr.Turns[i].Events
			tr.Turns[i].Events = evs[(len(evs)+1)/2:]
			continue
		}
		var with []int
		for i, t := range tr.Turns {
			if len(t.Violations) > 0 {
				with = append(with, i)
			}
		}
		if len(with) > 0 {
			for _, i := range with[:(len(with)+1)/2] {
				tr.Turns[i].Violations = nil
			}
			continue
		}
		if len(tr.Turns) < 2 {
			return b, nil
		}
		tr.Turns = tr.Turns[len(tr.Turns)/2:]
	}
}
