package api

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
)

// checkAgent has every interface the agent's card declares checked
// (runs.Service.Check) and answers with the stored check.
func (a *API) checkAgent(c echo.Context) error {
	in, err := a.decodeRunRequest(c, false)
	if err != nil {
		return err
	}
	if in.Message != nil {
		e := newError(http.StatusBadRequest, CodeInvalidBody, "a check sends its own message; give only credentials")
		e.body.Parameter = "message"
		return e
	}
	run, rec, err := a.runs.Check(c.Request().Context(), a.caller(c), c.Param("id"), in.credentials())
	if err != nil {
		return runError(c, err)
	}
	return c.JSON(http.StatusCreated, newCheckResponse(run, rec))
}

// latestCheck is the agent's latest check, nil when it has none or runs
// are not served.
func (a *API) latestCheck(ctx context.Context, sc catalog.Scope, agentID string) (*CheckResponse, error) {
	if a.runs == nil {
		return nil, nil
	}
	run, rec, ok, err := a.runs.LatestCheck(ctx, sc, agentID)
	if err != nil || !ok {
		return nil, err
	}
	r := newCheckResponse(run, rec)
	return &r, nil
}

func newCheckResponse(run catalog.Run, rec proxy.CheckRecord) CheckResponse {
	out := CheckResponse{ID: run.ID, AgentID: run.AgentID, StartedBy: run.Subject, Works: rec.Works,
		Interfaces: []CheckedInterface{}, CreatedAt: run.CreatedAt, Truncated: rec.Truncated}
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
	// Truncated: the stored record outgrew the run's bound (1 MiB) and
	// its interfaces' violations were dropped to fit.
	Truncated bool `json:"truncated,omitempty"`
}

// CheckedInterface is one interface's result.
type CheckedInterface struct {
	RunInterface
	Works bool `json:"works"`
	// Cause is empty when it works; else an Error code
	// (agent_unreachable, agent_error, run_timeout, credentials_invalid,
	// …), malformed (answered, but broke the protocol), unchecked (no
	// protocol version declared), or host_cap, rate_limited, out_of_time
	// (not sent to: see proxy.Check).
	Cause      string         `json:"cause,omitempty"`
	Detail     string         `json:"detail,omitempty"`
	DurationMS float64        `json:"duration_ms"`
	State      string         `json:"state,omitempty"`
	Violations []RunViolation `json:"violations,omitempty"`
}
