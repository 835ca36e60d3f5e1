package ard

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// Error codes of the ARD error body (spec/ard.md Appendix B), plus the
// canonical codes of the statuses Appendix B does not list.
const (
	CodeInvalidArgument   = "INVALID_ARGUMENT"
	CodeUnauthenticated   = "UNAUTHENTICATED"
	CodePermissionDenied  = "PERMISSION_DENIED"
	CodeNotFound          = "NOT_FOUND"
	CodeRateLimitExceeded = "RATE_LIMIT_EXCEEDED"
	CodeInternal          = "INTERNAL_ERROR"
	CodeUnavailable       = "UNAVAILABLE"
	CodeUnimplemented     = "UNIMPLEMENTED"
)

// ErrorBody is every error the ARD API answers.
type ErrorBody struct {
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
}

// ardError is an error with its status and body.
type ardError struct {
	status int
	body   ErrorBody
}

func (e *ardError) Error() string { return e.body.Message }

func newError(status int, code, format string, args ...any) *ardError {
	return &ardError{status: status, body: ErrorBody{ErrorCode: code, Message: fmt.Sprintf(format, args...)}}
}

func invalid(format string, args ...any) *ardError {
	return newError(http.StatusBadRequest, CodeInvalidArgument, format, args...)
}

func errNotFound(format string, args ...any) *ardError {
	return newError(http.StatusNotFound, CodeNotFound, format, args...)
}

// codeOf is the ARD code of an HTTP status others (echo, the
// Authorizer) answered.
func codeOf(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return CodeInvalidArgument
	case http.StatusUnauthorized:
		return CodeUnauthenticated
	case http.StatusForbidden:
		return CodePermissionDenied
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return CodeUnimplemented
	case http.StatusTooManyRequests:
		return CodeRateLimitExceeded
	case http.StatusServiceUnavailable:
		return CodeUnavailable
	}
	return CodeInternal
}

// errorHandler renders errors of requests under BasePath as ErrorBody and
// passes the others to next. Our own faults are logged and answered
// without their detail.
func errorHandler(next echo.HTTPErrorHandler, log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		p := c.Request().URL.Path
		if p != BasePath && !strings.HasPrefix(p, BasePath+"/") {
			next(err, c)
			return
		}
		if c.Response().Committed {
			return
		}
		var (
			ae *ardError
			he *echo.HTTPError
		)
		switch {
		case errors.As(err, &ae):
		case errors.As(err, &he):
			msg := http.StatusText(he.Code)
			if s, ok := he.Message.(string); ok && s != "" && he.Code < 500 {
				msg = s
			}
			ae = newError(he.Code, codeOf(he.Code), "%s", msg)
		default:
			log.Error("ARD request failed", "method", c.Request().Method, "path", p, "err", err)
			ae = newError(http.StatusInternalServerError, CodeInternal, "internal error")
		}
		if ae.status >= 500 && ae.body.ErrorCode == CodeInternal && he != nil {
			log.Error("ARD request failed", "method", c.Request().Method, "path", p, "err", err)
		}
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(ae.status)
			return
		}
		_ = c.JSON(ae.status, ae.body)
	}
}
