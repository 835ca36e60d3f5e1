package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
)

// Check sends one small message over every interface the agent's card
// declares and stores which really work, as a run of kind check. It never
// runs on its own: it costs the agent's owner real requests, so a tester
// starts it, and it is paid for like runs: admitted as one run (a place
// among the runs in flight, one from the caller's rate), and each further
// interface it sends to takes one more from the rate; the proxy caps the
// interfaces of one host and bounds the whole check by the maximum run
// duration.
func (s *Service) Check(ctx context.Context, c Caller, agentID string, creds proxy.Credentials) (catalog.Run, proxy.CheckRecord, error) {
	var rec proxy.CheckRecord
	ag, err := s.agent(ctx, c.Scope, agentID)
	if err != nil {
		return catalog.Run{}, rec, err
	}
	release, err := s.acquire(c)
	if err != nil {
		return catalog.Run{}, rec, err
	}
	defer release()
	var charge func() error
	if s.limiter != nil {
		subject := c.subject()
		charge = func() error { return s.limiter.Charge(subject) }
	}
	rec = proxy.NewCheckRecord(s.runner.Check(ctx, ag.Card, creds, charge))
	b, err := boundCheck(&rec, MaxTranscriptBytes)
	if err != nil {
		return catalog.Run{}, rec, fmt.Errorf("encoding check: %w", err)
	}
	now := s.now().UTC()
	run := catalog.Run{ID: uuid.NewString(), AgentID: ag.ID, Kind: catalog.RunKindCheck, Subject: c.subject(),
		State: rec.Works, Transcript: b, CreatedAt: now, UpdatedAt: now}
	// The agent has been called: the evidence is kept even when the
	// caller has gone.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	if err := s.store.CreateRun(sctx, c.Actor, run); errors.Is(err, catalog.ErrNotFound) {
		return run, rec, errorf(KindNotFound, "no agent with id %q", ag.ID)
	} else if err != nil {
		return run, rec, fmt.Errorf("storing check: %w", err)
	}
	s.log.Info("runs: agent checked", "agent_id", ag.ID, "check_id", run.ID, "works", rec.Works)
	return run, rec, nil
}

// LatestCheck is the agent's latest check; ok is false when it has none.
func (s *Service) LatestCheck(ctx context.Context, sc catalog.Scope, agentID string) (run catalog.Run, rec proxy.CheckRecord, ok bool, err error) {
	rs, err := s.store.AgentRuns(ctx, sc, agentID, catalog.RunKindCheck, 1)
	if err != nil {
		return run, rec, false, fmt.Errorf("reading checks of agent %s: %w", agentID, err)
	}
	if len(rs) == 0 {
		return run, rec, false, nil
	}
	if err := json.Unmarshal(rs[0].Transcript, &rec); err != nil {
		return rs[0], rec, false, fmt.Errorf("decoding check %s: %w", rs[0].ID, err)
	}
	return rs[0], rec, true, nil
}

// boundCheck encodes rec within max bytes, as a run's transcript is
// bounded: past it, each interface keeps only its first violation (its
// detail says the same), then none, and the record is marked truncated.
// Interfaces are capped by the card's limits and details by
// proxy.MaxDetailBytes, so the rest fits.
func boundCheck(rec *proxy.CheckRecord, max int) ([]byte, error) {
	b, err := json.Marshal(rec)
	for _, keep := range []int{1, 0} {
		if err != nil || len(b) <= max {
			return b, err
		}
		rec.Truncated = true
		for i := range rec.Interfaces {
			v := rec.Interfaces[i].Violations
			rec.Interfaces[i].Violations = v[:min(len(v), keep)]
		}
		b, err = json.Marshal(rec)
	}
	return b, err
}
