package api

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/crawler"
)

// Error codes. They are part of the API contract: openapi.json lists them
// in the Error schema's enum, and clients switch on them.
const (
	CodeBadRequest           = "bad_request"
	CodeInvalidParameter     = "invalid_parameter"
	CodeInvalidCursor        = "invalid_cursor"
	CodeInvalidQuery         = "invalid_query"
	CodeInvalidBody          = "invalid_body"
	CodeUnauthorized         = "unauthorized"
	CodeForbidden            = "forbidden"
	CodeCrossSite            = "cross_site"
	CodeMisdirectedRequest   = "misdirected_request"
	CodeNotFound             = "not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodePayloadTooLarge      = "payload_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	// The codes of a failed registration are the crawler's kinds
	// (crawler.Problem.Kind), which the console shows too.
	CodeInvalidURL      = "invalid_url"
	CodeFetchFailed     = "fetch_failed"
	CodeBlockedAddress  = "blocked_address"
	CodeInvalidCard     = "invalid_card"
	CodeTooManyRequests = "too_many_requests"
	CodeClientError     = "client_error"
	CodeUnavailable     = "unavailable"
	CodeTimeout         = "timeout"
	CodeInternal        = "internal"
	// CodeConflict: the write clashes with what is stored (a trusted key
	// pinned already).
	CodeConflict = "conflict"
	// CodeInvalidKey: a JWK that cannot be pinned (symmetric, not a
	// signature key, a kid that disagrees).
	CodeInvalidKey = "invalid_key"
	// CodeSourceBusy answers a refresh while another check of the source
	// runs.
	CodeSourceBusy = "source_busy"
	// CodePolicyRefused: a rule of the admission policy (action reject)
	// refused the card; Error.Rule names it.
	CodePolicyRefused = "policy_refused"

	// Codes of test runs (the proxy's, see proxy.ErrorCode, and the run
	// routes' own).
	CodeInvalidMessage       = "invalid_message"
	CodeRunNoTask            = "run_has_no_task"
	CodeTooManyRuns          = "too_many_runs"
	CodeInterfaceNotDeclared = "interface_not_declared"
	CodeVersionUnknown       = "protocol_version_unknown"
	CodeNoUsableInterface    = "no_usable_interface"
	CodeCredentialsInvalid   = "credentials_invalid"
	CodeTokenRequestFailed   = "token_request_failed"
	CodeAgentUnreachable     = "agent_unreachable"
	CodeAgentError           = "agent_error"
	CodeRunTimeout           = "run_timeout"
	CodeRunStopped           = "run_stopped"
	// CodeSelf: the agent's interfaces or token URL lead to the registry
	// itself, which it never calls (the crawler's class self).
	CodeSelf = "self"
)

// apiError is an error a handler has already turned into an answer.
type apiError struct {
	status int
	body   Error
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.status, e.body.Code, e.body.Message)
}

func newError(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, body: Error{Code: code, Message: fmt.Sprintf(format, args...)}}
}

func invalidParameter(name, format string, args ...any) *apiError {
	e := newError(http.StatusBadRequest, CodeInvalidParameter, format, args...)
	e.body.Parameter = name
	return e
}

// statusCodes names the statuses echo and middleware (auth, rate limits)
// raise as *echo.HTTPError.
var statusCodes = map[int]string{
	http.StatusBadRequest:            CodeBadRequest,
	http.StatusUnauthorized:          CodeUnauthorized,
	http.StatusForbidden:             CodeForbidden,
	http.StatusNotFound:              CodeNotFound,
	http.StatusMethodNotAllowed:      CodeMethodNotAllowed,
	http.StatusMisdirectedRequest:    CodeMisdirectedRequest,
	http.StatusRequestEntityTooLarge: CodePayloadTooLarge,
	http.StatusUnsupportedMediaType:  CodeUnsupportedMediaType,
	http.StatusTooManyRequests:       CodeTooManyRequests,
	http.StatusServiceUnavailable:    CodeUnavailable,
}

// isAPIPath tells whether the request belongs to this API, so its errors
// are answered in this API's JSON shape.
func isAPIPath(p string) bool {
	return p == BasePath || strings.HasPrefix(p, BasePath+"/")
}

// ErrorHandler returns an echo.HTTPErrorHandler that answers errors of
// requests under BasePath with an ErrorResponse and hands every other
// error to next (which may be nil). Mount installs it.
func (a *API) ErrorHandler(next echo.HTTPErrorHandler) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if !isAPIPath(c.Request().URL.Path) {
			if next != nil {
				next(err, c)
			}
			return
		}
		a.writeError(err, c)
	}
}

func (a *API) writeError(err error, c echo.Context) {
	req := c.Request()
	if c.Response().Committed {
		a.log.Error("api: error after response started", "err", err, "method", req.Method, "path", req.URL.Path)
		return
	}
	status, body := a.classify(err, req)
	h := c.Response().Header()
	h.Set("X-Content-Type-Options", "nosniff")
	// An error may follow a handler that set raw-card headers; they do
	// not describe this body.
	h.Del("ETag")
	h.Del("Cache-Control")
	var werr error
	if req.Method == http.MethodHead {
		werr = c.NoContent(status)
	} else {
		werr = c.JSON(status, ErrorResponse{Error: body})
	}
	if werr != nil {
		a.log.Warn("api: writing error response", "err", werr, "method", req.Method, "path", req.URL.Path)
	}
}

func (a *API) classify(err error, req *http.Request) (int, Error) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.status, ae.body
	}
	if a.crossSite != nil && errors.Is(err, a.crossSite) {
		return http.StatusForbidden, Error{Code: CodeCrossSite, Message: "cross-site requests may not change the registry"}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		if inner, ok := he.Internal.(*echo.HTTPError); ok {
			he = inner
		}
		if he.Code >= 400 && he.Code < 500 {
			return he.Code, Error{Code: codeForStatus(he.Code), Message: httpErrorMessage(he, req)}
		}
		if he.Code == http.StatusServiceUnavailable {
			return he.Code, Error{Code: CodeUnavailable, Message: "service unavailable, try again later"}
		}
	}
	// Our own fault: the detail (SQL, paths, stack) goes to the log only.
	a.log.Error("api: internal error", "err", err, "method", req.Method, "path", req.URL.Path)
	return http.StatusInternalServerError, Error{Code: CodeInternal, Message: "internal error"}
}

func codeForStatus(status int) string {
	if code, ok := statusCodes[status]; ok {
		return code
	}
	return CodeClientError
}

func httpErrorMessage(he *echo.HTTPError, req *http.Request) string {
	switch he.Code {
	case http.StatusNotFound:
		if he == echo.ErrNotFound {
			return fmt.Sprintf("no endpoint %s", req.URL.Path)
		}
	case http.StatusMethodNotAllowed:
		return fmt.Sprintf("method %s not allowed on %s", req.Method, req.URL.Path)
	}
	if m, ok := he.Message.(string); ok && m != "" {
		return m
	}
	return http.StatusText(he.Code)
}

// problemError maps a crawler Problem onto an answer: its kind is the
// code, its advice (which never shows a resolved address) the message.
// input is the URL the user gave.
func problemError(p crawler.Problem, input string) *apiError {
	e := newError(http.StatusUnprocessableEntity, p.Kind(), "%s", p.Advice())
	switch p.Kind() {
	case crawler.KindInvalidCard:
		e.body.ParseCode = p.ParseCode
		e.body.Path = p.Path
	case crawler.KindInvalidURL:
		e.body.Parameter = "url"
	case crawler.KindBlockedAddress:
		e.body.Class = p.Class
		e.body.URL = cmp.Or(p.URL, input)
	default:
		e.body.Class = p.Class
		e.body.URL = cmp.Or(p.URL, input)
		e.body.HTTPStatus = p.HTTPStatus
	}
	return e
}
