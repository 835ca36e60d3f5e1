package proxy

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Transcript is a run's evidence as stored with it (catalog.Run.Transcript
// holds its JSON): every operation of the conversation, in order. It is
// the storage encoding, not an API shape; it never holds a credential,
// only which kind was offered and which scheme it satisfied.
type Transcript struct {
	// Format versions this encoding.
	Format int    `json:"format"`
	Turns  []Turn `json:"turns"`
	// Task or Message is the conversation's latest result (v1.0 JSON).
	Task    json.RawMessage `json:"task,omitempty"`
	Message json.RawMessage `json:"message,omitempty"`
	// ResultTurn, in the stored encoding only, is the index of the turn
	// whose events fold to the result (FoldEvents), which is then stored
	// there alone, not in Task or Message as well: a blocking answer is
	// its one event, a stream's result the sum of its events. Decoding
	// puts the result back.
	ResultTurn *int `json:"result_turn,omitempty"`
	// Truncated: the transcript outgrew the stored bound, and the data
	// of its oldest events (then of its sent messages, last the result)
	// was dropped, each left as null.
	Truncated bool `json:"truncated,omitempty"`
}

// TranscriptFormat is the current Transcript.Format.
const TranscriptFormat = 1

// Operations a Turn records.
const (
	OpSend        = "send"
	OpCancel      = "cancel"
	OpGetTask     = "get_task"
	OpResubscribe = "resubscribe"
)

// Turn is one operation.
type Turn struct {
	Op         string    `json:"op"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS float64   `json:"duration_ms"`
	// Message is what was sent (v1.0 JSON), for OpSend.
	Message        json.RawMessage `json:"message,omitempty"`
	TaskID         string          `json:"task_id,omitempty"`
	CredentialKind string          `json:"credential_kind,omitempty"`
	Scheme         string          `json:"scheme,omitempty"`
	Extensions     []string        `json:"extensions,omitempty"`
	Streamed       bool            `json:"streamed,omitempty"`
	Interface      *TurnInterface  `json:"interface,omitempty"`
	Skipped        []TurnSkipped   `json:"skipped,omitempty"`
	// Fallbacks are the interfaces tried before the one that answered.
	Fallbacks  []TurnFallback  `json:"fallbacks,omitempty"`
	Events     []TurnEvent     `json:"events"`
	Violations []TurnViolation `json:"violations,omitempty"`
	Error      *TurnError      `json:"error,omitempty"`
}

// TurnInterface is the interface used.
type TurnInterface struct {
	URL             string `json:"url"`
	Binding         string `json:"binding"`
	ProtocolVersion string `json:"protocol_version"`
	// Speaks differs from ProtocolVersion when the card declared none and
	// the tester picked it.
	Speaks string `json:"speaks"`
	Tenant string `json:"tenant,omitempty"`
}

// TurnSkipped is a declared interface not tried.
type TurnSkipped struct {
	URL             string `json:"url"`
	Binding         string `json:"binding"`
	ProtocolVersion string `json:"protocol_version"`
	Reason          string `json:"reason"`
}

// TurnFallback is an interface that failed to connect.
type TurnFallback struct {
	URL             string `json:"url"`
	Binding         string `json:"binding"`
	ProtocolVersion string `json:"protocol_version"`
	Error           string `json:"error"`
}

// TurnEvent is one relayed event.
type TurnEvent struct {
	Seq   int             `json:"seq"`
	AtMS  float64         `json:"at_ms"`
	Kind  string          `json:"kind"`
	State string          `json:"state,omitempty"`
	Data  json.RawMessage `json:"data"`
}

// TurnViolation is a protocol rule broken.
type TurnViolation struct {
	Code   string `json:"code"`
	Seq    int    `json:"seq,omitempty"`
	Detail string `json:"detail"`
}

// TurnError is how the operation failed.
type TurnError struct {
	Code    string `json:"code"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
}

// Error codes of TurnError and of the API's run errors: stable, machine
// readable.
const (
	CodeInterfaceNotDeclared = "interface_not_declared"
	CodeVersionUnknown       = "protocol_version_unknown"
	CodeNoUsableInterface    = "no_usable_interface"
	CodeUnreachable          = "agent_unreachable"
	// CodeSelf: the agent's interfaces, or its token URL, lead to the
	// registry itself (safehttp.CauseSelf).
	CodeSelf            = "self"
	CodeAgentError      = "agent_error"
	CodeCredentials     = "credentials_invalid"
	CodeTokenRequest    = "token_request_failed"
	CodeInvalidMessage  = "invalid_message"
	CodeMessageTooLarge = "payload_too_large"
	CodeRunTimeout      = "run_timeout"
	CodeCanceled        = "run_stopped"
	CodeInternal        = "internal"
)

// ErrorCode maps an operation's error onto its stable code.
func ErrorCode(err error) string {
	for _, m := range []struct {
		err  error
		code string
	}{
		{ErrInterfaceNotDeclared, CodeInterfaceNotDeclared},
		{ErrVersionUnknown, CodeVersionUnknown},
		{ErrNoUsableInterface, CodeNoUsableInterface},
		{ErrSelf, CodeSelf},
		{ErrUnreachable, CodeUnreachable},
		{ErrAgent, CodeAgentError},
		{ErrCredentials, CodeCredentials},
		{ErrTokenRequest, CodeTokenRequest},
		{ErrMessageTooLarge, CodeMessageTooLarge},
		{ErrInvalidMessage, CodeInvalidMessage},
		{ErrRunTimeout, CodeRunTimeout},
	} {
		if errors.Is(err, m.err) {
			return m.code
		}
	}
	var pe *Error
	if errors.As(err, &pe) {
		return CodeCanceled
	}
	return CodeInternal
}

// NewTurn records one operation. x may be nil (the operation failed
// before anything was tried); err is the operation's error.
func NewTurn(op string, started time.Time, msg *a2a.Message, taskID string, creds Credentials, streamed bool, x *Exchange, err error) Turn {
	t := Turn{Op: op, StartedAt: started.UTC(), TaskID: taskID, CredentialKind: creds.Kind(), Streamed: streamed, Events: []TurnEvent{}}
	if msg != nil {
		if b, merr := json.Marshal(msg); merr == nil {
			t.Message = b
		}
	}
	if x != nil {
		t.DurationMS = ms(x.Duration)
		t.Scheme, t.Extensions = x.Scheme, x.Extensions
		if x.Endpoint.URL != "" {
			t.Interface = &TurnInterface{URL: x.Endpoint.URL, Binding: x.Endpoint.Binding,
				ProtocolVersion: x.Endpoint.ProtocolVersion, Speaks: x.Endpoint.Speaks, Tenant: x.Endpoint.Tenant}
		}
		for _, s := range x.Skipped {
			t.Skipped = append(t.Skipped, TurnSkipped{URL: s.Interface.URL, Binding: s.Interface.Binding, ProtocolVersion: s.Interface.ProtocolVersion, Reason: s.Reason})
		}
		for _, a := range x.Attempts {
			t.Fallbacks = append(t.Fallbacks, TurnFallback{URL: a.Interface.URL, Binding: a.Interface.Binding, ProtocolVersion: a.Interface.ProtocolVersion, Error: a.Error})
		}
		for _, e := range x.Events {
			t.Events = append(t.Events, TurnEvent{Seq: e.Seq, AtMS: ms(e.At), Kind: e.Kind, State: e.State, Data: e.Data})
		}
		for _, v := range x.Violations {
			t.Violations = append(t.Violations, TurnViolation(v))
		}
	}
	if err != nil {
		te := &TurnError{Code: ErrorCode(err), Message: err.Error()}
		var pe *Error
		if errors.As(err, &pe) {
			te.Reason = pe.Reason
		}
		t.Error = te
	}
	return t
}

// Kind names the kind of credential offered, for transcripts.
func (c Credentials) Kind() string {
	switch {
	case c.Bearer != "":
		return "bearer"
	case c.APIKey != "":
		return "api_key"
	case c.Basic != nil:
		return "basic"
	case c.OAuth2ClientCredentials != nil:
		return "oauth2_client_credentials"
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
