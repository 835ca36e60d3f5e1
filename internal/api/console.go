package api

import (
	"errors"

	"github.com/a2aregistry/registry/internal/catalog"
)

// This file exports what the console shares with the API, so both judge
// searches and registrations alike.

// QueryError is a search query the API refuses, in words for people.
type QueryError struct {
	// Parameter names the offending query parameter.
	Parameter string
	Message   string
}

func (e *QueryError) Error() string { return e.Message }

// ParseSearch reads a search query string (GET /agents) as the API does,
// so the console and the API accept exactly the same searches. Its errors
// are *QueryError.
func ParseSearch(rawQuery string) (catalog.Query, error) {
	q, err := parseSearch(rawQuery)
	var e *apiError
	if errors.As(err, &e) {
		return q, &QueryError{Parameter: e.body.Parameter, Message: e.body.Message}
	}
	return q, err
}

// DescribeRegisterError says why registering input failed as the API
// would (code, message, class), so the console reports the same causes.
// ok is false when the failure is the registry's own fault rather than
// something about the agent or its URL.
func DescribeRegisterError(input string, err error) (e Error, ok bool) {
	var ae *apiError
	if errors.As(registerFailure(input, err), &ae) {
		return ae.body, true
	}
	return Error{}, false
}
