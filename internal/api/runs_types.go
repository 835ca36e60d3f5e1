package api

import (
	"encoding/json"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
)

// RunRequest starts or continues a run. The message is in the v1.0 JSON
// shape (parts {"text"}, {"data"}, {"url","mediaType"},
// {"raw","filename","mediaType"}) whatever the agent speaks.
type RunRequest struct {
	Message *RunMessage `json:"message,omitempty"`
	// Interface is a URL the card declares; empty means the card's order
	// of preference, with fallback when one cannot be reached.
	Interface string `json:"interface,omitempty"`
	// Binding narrows Interface when the card declares the URL more than
	// once.
	Binding string `json:"binding,omitempty"`
	// ProtocolVersion picks among the interfaces the card declares with
	// that version (a mixed card declares one URL as both a v1.0 and a
	// v0.3 interface), and is the version to speak on an interface whose
	// card declares none ("1.0" or "0.3"); the registry never guesses it.
	ProtocolVersion string          `json:"protocol_version,omitempty"`
	ContextID       string          `json:"context_id,omitempty"`
	TaskID          string          `json:"task_id,omitempty"`
	Credentials     *RunCredentials `json:"credentials,omitempty"`
	// Extensions are URIs of extensions the card declares, activated for
	// this request (A2A-Extensions).
	Extensions []string `json:"extensions,omitempty"`
	// Stream false sends with SendMessage even when the card declares
	// streaming; absent means stream when the card allows.
	Stream *bool `json:"stream,omitempty"`
}

// RunMessage is an A2A v1.0 Message as the caller writes it.
type RunMessage struct {
	Role      string            `json:"role,omitempty"`
	MessageID string            `json:"messageId,omitempty"`
	Parts     []json.RawMessage `json:"parts"`
}

// RunCredentials are used for the one request and then forgotten: never
// stored, logged or echoed.
type RunCredentials struct {
	Bearer                  string                `json:"bearer,omitempty"`
	APIKey                  string                `json:"api_key,omitempty"`
	Basic                   *RunBasic             `json:"basic,omitempty"`
	OAuth2ClientCredentials *RunClientCredentials `json:"oauth2_client_credentials,omitempty"`
}

// RunBasic is an HTTP Basic user and password.
type RunBasic struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// RunClientCredentials is an OAuth 2.0 client credentials grant.
type RunClientCredentials struct {
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	Scopes       []string `json:"scopes,omitempty"`
}

// RunInterface is the interface a run used.
type RunInterface struct {
	URL             string `json:"url"`
	Binding         string `json:"binding"`
	ProtocolVersion string `json:"protocol_version"`
}

// RunResponse is a run with its transcript.
type RunResponse struct {
	ID        string        `json:"id"`
	AgentID   string        `json:"agent_id"`
	StartedBy string        `json:"started_by"`
	Interface *RunInterface `json:"interface,omitempty"`
	// State is the task state (TASK_STATE_…), "message", "running" or
	// "failed".
	State string `json:"state"`
	// Awaiting is "input" or "auth" when the agent waits for the tester
	// (TASK_STATE_INPUT_REQUIRED, TASK_STATE_AUTH_REQUIRED): answer with
	// POST /runs/{id}/messages.
	Awaiting  string          `json:"awaiting,omitempty"`
	ContextID string          `json:"context_id,omitempty"`
	TaskID    string          `json:"task_id,omitempty"`
	Task      json.RawMessage `json:"task,omitempty"`
	Message   json.RawMessage `json:"message,omitempty"`
	// Events are every turn's events in order.
	Events    []RunEvent `json:"events"`
	Turns     []RunTurn  `json:"turns"`
	Error     *RunError  `json:"error,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	// TranscriptWithheld: the run is its tester's (made with
	// credentials, or --run-private-all) and the caller is neither they
	// nor an admin: it happened, without task, events, turns or ids.
	TranscriptWithheld bool `json:"transcript_withheld,omitempty"`
	// Truncated: the stored transcript outgrew the run's bound (1 MiB)
	// and its oldest turns or their details were dropped to fit.
	Truncated bool `json:"truncated,omitempty"`
}

// RunEvent is one A2A event as relayed, Data in v1.0 JSON.
type RunEvent struct {
	// Turn is the index of the turn it belongs to.
	Turn  int             `json:"turn"`
	Seq   int             `json:"seq"`
	AtMS  float64         `json:"at_ms"`
	Kind  string          `json:"kind"`
	State string          `json:"state,omitempty"`
	Data  json.RawMessage `json:"data"`
}

// RunTurn is one operation of the run.
type RunTurn struct {
	Op         string          `json:"op"`
	StartedAt  time.Time       `json:"started_at"`
	DurationMS float64         `json:"duration_ms"`
	Message    json.RawMessage `json:"message,omitempty"`
	// CredentialKind names the kind of credential offered (never its
	// value); Scheme the card's scheme it satisfied.
	CredentialKind string        `json:"credential_kind,omitempty"`
	Scheme         string        `json:"scheme,omitempty"`
	Extensions     []string      `json:"extensions,omitempty"`
	Streamed       bool          `json:"streamed"`
	Interface      *RunInterface `json:"interface,omitempty"`
	// Speaks is the protocol version used when the card declared none.
	Speaks     string         `json:"speaks,omitempty"`
	Skipped    []RunSkipped   `json:"skipped,omitempty"`
	Fallbacks  []RunFallback  `json:"fallbacks,omitempty"`
	Violations []RunViolation `json:"violations,omitempty"`
	EventCount int            `json:"event_count"`
	Error      *RunError      `json:"error,omitempty"`
}

// RunSkipped is a declared interface the proxy could not use.
type RunSkipped struct {
	RunInterface
	Reason string `json:"reason"`
}

// RunFallback is an interface that could not be reached, after which the
// next one was tried.
type RunFallback struct {
	RunInterface
	Error string `json:"error"`
}

// RunViolation is a protocol rule the agent broke.
type RunViolation struct {
	Code   string `json:"code"`
	Seq    int    `json:"seq,omitempty"`
	Detail string `json:"detail"`
}

// RunStarted is the first server-sent event of a streamed run.
type RunStarted struct {
	ID      string `json:"id"`
	AgentID string `json:"agent_id"`
}

// RunError is how a turn failed: one of the Error codes and a message
// safe to show (credentials redacted).
type RunError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// RunFailure is the `error` server-sent event: the stable error and, when
// the run was stored, the run.
type RunFailure struct {
	RunError
	Run *RunResponse `json:"run,omitempty"`
}

// RunSummary is a run in a list.
type RunSummary struct {
	ID        string        `json:"id"`
	AgentID   string        `json:"agent_id"`
	StartedBy string        `json:"started_by"`
	Interface *RunInterface `json:"interface,omitempty"`
	State     string        `json:"state"`
	ErrorCode string        `json:"error_code,omitempty"`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
}

// RunList is GET /agents/{id}/runs.
type RunList struct {
	Runs []RunSummary `json:"runs"`
}

func runInterface(r catalog.Run) *RunInterface {
	if r.InterfaceURL == "" {
		return nil
	}
	return &RunInterface{URL: r.InterfaceURL, Binding: r.Binding, ProtocolVersion: r.ProtocolVersion}
}

func newRunSummary(r catalog.Run) RunSummary {
	return RunSummary{ID: r.ID, AgentID: r.AgentID, StartedBy: r.Subject, Interface: runInterface(r),
		State: r.State, ErrorCode: r.ErrorCode, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func newRunResponse(r catalog.Run, tr proxy.Transcript) RunResponse {
	out := RunResponse{ID: r.ID, AgentID: r.AgentID, StartedBy: r.Subject, Interface: runInterface(r), State: r.State,
		ContextID: r.ContextID, TaskID: r.TaskID, Task: tr.Task, Message: tr.Message,
		Events: []RunEvent{}, Turns: []RunTurn{}, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Truncated: tr.Truncated}
	switch a2a.TaskState(r.State) {
	case a2a.TaskStateInputRequired:
		out.Awaiting = "input"
	case a2a.TaskStateAuthRequired:
		out.Awaiting = "auth"
	}
	for i, t := range tr.Turns {
		rt := RunTurn{Op: t.Op, StartedAt: t.StartedAt, DurationMS: t.DurationMS, Message: t.Message,
			CredentialKind: t.CredentialKind, Scheme: t.Scheme, Extensions: t.Extensions, Streamed: t.Streamed, EventCount: len(t.Events)}
		if t.Interface != nil {
			rt.Interface = &RunInterface{URL: t.Interface.URL, Binding: t.Interface.Binding, ProtocolVersion: t.Interface.ProtocolVersion}
			if t.Interface.Speaks != t.Interface.ProtocolVersion {
				rt.Speaks = t.Interface.Speaks
			}
		}
		for _, s := range t.Skipped {
			rt.Skipped = append(rt.Skipped, RunSkipped{RunInterface{s.URL, s.Binding, s.ProtocolVersion}, s.Reason})
		}
		for _, f := range t.Fallbacks {
			rt.Fallbacks = append(rt.Fallbacks, RunFallback{RunInterface{f.URL, f.Binding, f.ProtocolVersion}, f.Error})
		}
		for _, v := range t.Violations {
			rt.Violations = append(rt.Violations, RunViolation{Code: v.Code, Seq: v.Seq, Detail: v.Detail})
		}
		if t.Error != nil {
			rt.Error = &RunError{Code: t.Error.Code, Message: t.Error.Message}
		}
		for _, e := range t.Events {
			out.Events = append(out.Events, RunEvent{Turn: i, Seq: e.Seq, AtMS: e.AtMS, Kind: e.Kind, State: e.State, Data: e.Data})
		}
		out.Turns = append(out.Turns, rt)
	}
	if n := len(out.Turns); n > 0 && out.Turns[n-1].Error != nil {
		out.Error = out.Turns[n-1].Error
	}
	return out
}
