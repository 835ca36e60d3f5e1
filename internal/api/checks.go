package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
)

// checkAgent sends one small message over every interface the agent's
// card declares and records which really work. It never runs on its own:
// it costs the agent's owner real requests, so a tester starts it.
func (a *API) checkAgent(c echo.Context) error {
	ctx := c.Request().Context()
	in, err := a.decodeRunRequest(c, false)
	if err != nil {
		return err
	}
	if in.Message != nil {
		e := newError(http.StatusBadRequest, CodeInvalidBody, "a check sends its own message; give only credentials")
		e.body.Parameter = "message"
		return e
	}
	ag, err := a.catalog.Agent(ctx, a.scope(c), c.Param("id"))
	if errors.Is(err, catalog.ErrNotFound) {
		return newError(http.StatusNotFound, CodeNotFound, "no agent with id %q", c.Param("id"))
	}
	if err != nil {
		return fmt.Errorf("reading agent: %w", err)
	}
	release, err := a.acquire(c)
	if err != nil {
		return err
	}
	defer release()
	creds := in.credentials()
	checks := a.runner.Check(ctx, ag.Card, creds)
	rec := proxy.NewCheckRecord(checks)
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encoding check: %w", err)
	}
	now := time.Now().UTC()
	run := catalog.Run{ID: uuid.NewString(), AgentID: ag.ID, Kind: catalog.RunKindCheck, Subject: subject(ctx),
		State: rec.Works, Transcript: b, CreatedAt: now, UpdatedAt: now}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := a.runs.CreateRun(sctx, actorOf(c), run); errors.Is(err, catalog.ErrNotFound) {
		return newError(http.StatusNotFound, CodeNotFound, "no agent with id %q", ag.ID)
	} else if err != nil {
		return fmt.Errorf("storing check: %w", err)
	}
	a.log.Info("api: agent checked", "agent_id", ag.ID, "check_id", run.ID, "works", rec.Works)
	return c.JSON(http.StatusCreated, newCheckResponse(run, rec))
}

// latestCheck is the agent's latest check, nil when it has none or runs
// are not served.
func (a *API) latestCheck(ctx context.Context, sc catalog.Scope, agentID string) (*CheckResponse, error) {
	if a.runs == nil {
		return nil, nil
	}
	runs, err := a.runs.AgentRuns(ctx, sc, agentID, catalog.RunKindCheck, 1)
	if err != nil {
		return nil, fmt.Errorf("reading checks of agent %s: %w", agentID, err)
	}
	if len(runs) == 0 {
		return nil, nil
	}
	var rec proxy.CheckRecord
	if err := json.Unmarshal(runs[0].Transcript, &rec); err != nil {
		return nil, fmt.Errorf("decoding check %s: %w", runs[0].ID, err)
	}
	r := newCheckResponse(runs[0], rec)
	return &r, nil
}

func newCheckResponse(run catalog.Run, rec proxy.CheckRecord) CheckResponse {
	out := CheckResponse{ID: run.ID, AgentID: run.AgentID, StartedBy: run.Subject, Works: rec.Works,
		Interfaces: []CheckedInterface{}, CreatedAt: run.CreatedAt}
	for _, ci := range rec.Interfaces {
		w := CheckedInterface{RunInterface: RunInterface{URL: ci.URL, Binding: ci.Binding, ProtocolVersion: ci.ProtocolVersion},
			Works: ci.Works, Cause: ci.Cause, Detail: ci.Detail, DurationMS: ci.DurationMS, State: ci.State}
		for _, v := range ci.Violations {
			w.Violations = append(w.Violations, RunViolation{Code: v.Code, Seq: v.Seq, Detail: v.Detail})
		}
		out.Interfaces = append(out.Interfaces, w)
	}
	return out
}

// CheckResponse is a declared-vs-working check: whether each interface the
// card declares really works.
type CheckResponse struct {
	ID        string `json:"id"`
	AgentID   string `json:"agent_id"`
	StartedBy string `json:"started_by"`
	// Works is all, some or none of the checked interfaces; unchecked when
	// no interface could be checked (no declared protocol version).
	Works      string             `json:"works"`
	Interfaces []CheckedInterface `json:"interfaces"`
	CreatedAt  time.Time          `json:"created_at"`
}

// CheckedInterface is one interface's result.
type CheckedInterface struct {
	RunInterface
	Works bool `json:"works"`
	// Cause is empty when it works; else an Error code
	// (agent_unreachable, agent_error, run_timeout, credentials_invalid,
	// …), malformed (answered, but broke the protocol) or unchecked.
	Cause      string         `json:"cause,omitempty"`
	Detail     string         `json:"detail,omitempty"`
	DurationMS float64        `json:"duration_ms"`
	State      string         `json:"state,omitempty"`
	Violations []RunViolation `json:"violations,omitempty"`
}
