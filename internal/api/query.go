package api

import (
	"errors"

	"github.com/a2aregistry/registry/internal/catalog"
)

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
