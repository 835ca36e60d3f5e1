package runs

import (
	"errors"
	"fmt"
	"time"

	"github.com/a2aregistry/registry/internal/proxy"
)

// Kind is the machine-readable cause of an Error, for each door to answer
// in its own way (an HTTP status and code, a page).
type Kind string

// The kinds of Error.
const (
	// KindNotFound: no agent or run the caller sees, or a run whose agent
	// was removed (its runs are history: read, never continued).
	KindNotFound Kind = "not_found"
	// KindNotYours: only the tester who started the run, or an admin,
	// may continue it.
	KindNotYours Kind = "forbidden"
	// KindNoTask: the run has no task to cancel or follow.
	KindNoTask Kind = "run_has_no_task"
	// KindTooManyRuns and KindRateLimited: the limits refused the run for
	// now; Error.RetryAfter says for how long.
	KindTooManyRuns Kind = "too_many_runs"
	KindRateLimited Kind = "too_many_requests"
	// KindExtension: an extension the agent's card does not declare.
	KindExtension Kind = "extension_not_declared"
	// KindBadRequest: a request the operation cannot take (a message to
	// a resubscription, none to a turn).
	KindBadRequest Kind = "bad_request"

	// The caller's own mistakes the proxy finds before it reaches the
	// agent (Preflight), named as proxy.ErrorCode names them.
	KindInterfaceNotDeclared Kind = proxy.CodeInterfaceNotDeclared
	KindCredentials          Kind = proxy.CodeCredentials
	KindVersionUnknown       Kind = proxy.CodeVersionUnknown
	KindNoUsableInterface    Kind = proxy.CodeNoUsableInterface
	KindInvalidMessage       Kind = proxy.CodeInvalidMessage
	KindMessageTooLarge      Kind = proxy.CodeMessageTooLarge
)

// Error is an operation refused, in words safe to show the caller.
type Error struct {
	Kind    Kind
	Message string
	// RetryAfter is when a limited caller may try again.
	RetryAfter time.Duration
	// Err is the cause, when there is one.
	Err error
}

func (e *Error) Error() string { return e.Message }

func (e *Error) Unwrap() error { return e.Err }

func errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// KindOf is err's Kind, or "" when err is no *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// Preflight is a turn's error as the caller's own mistake (an undeclared
// interface, unusable credentials, an oversized message), nil for every
// other outcome, which is the run's result: the agent's answer, or its
// failure.
func Preflight(err error) *Error {
	if err == nil {
		return nil
	}
	switch k := Kind(proxy.ErrorCode(err)); k {
	case KindInterfaceNotDeclared, KindCredentials, KindVersionUnknown, KindNoUsableInterface,
		KindInvalidMessage, KindMessageTooLarge:
		return &Error{Kind: k, Message: err.Error(), Err: err}
	}
	return nil
}

// limited turns a Limiter refusal into an Error.
func limited(err error) error {
	var le *proxy.LimitError
	if !errors.As(err, &le) {
		return fmt.Errorf("admitting run: %w", err)
	}
	secs := int((le.RetryAfter + time.Second - 1) / time.Second)
	if errors.Is(err, proxy.ErrRateLimited) {
		return &Error{Kind: KindRateLimited, RetryAfter: le.RetryAfter, Err: err,
			Message: fmt.Sprintf("too many runs started; retry in %d s", secs)}
	}
	return &Error{Kind: KindTooManyRuns, RetryAfter: le.RetryAfter, Err: err,
		Message: fmt.Sprintf("too many runs in flight; retry in %d s", secs)}
}
