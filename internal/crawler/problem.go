package crawler

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// Problem is a failed fetch or a rejected card as users may see it: the
// failure class and a message naming the class and the host the user gave.
// It never carries a resolved address, a socket address, the resolver's
// address or a Go type name; err.Error() may carry all of those and goes
// to logs only. The crawler stores Problem messages in the fetch history,
// and the API answers with them.
type Problem struct {
	// Class is one of the Class* failure classes.
	Class   string
	Message string
	// URL is the card URL that failed: the user's input or the candidate
	// derived from it, never a redirect target.
	URL string
	// HTTPStatus is the status of the response that arrived, else 0.
	HTTPStatus int
	// ParseCode and Path locate a card.Parse refusal (ClassNotACard).
	ParseCode string
	Path      string
}

// ProblemOf turns an error of Fetch, Refresh or Register into a Problem.
// ok is false for an error that is none of the agent's doing (the
// store's, the registry's own faults).
func ProblemOf(err error) (p Problem, ok bool) {
	var (
		perr *card.ParseError
		fe   *FetchError
	)
	switch {
	case errors.As(err, &perr):
		return Problem{Class: ClassNotACard, ParseCode: perr.Code, Path: perr.Path,
			Message: fmt.Sprintf("the card is not a readable agent card (%s at %s): %s", perr.Code, perr.Path, perr.Message)}, true
	case errors.As(err, &fe):
		return Problem{Class: fe.Class, URL: fe.URL, HTTPStatus: fe.Status, Message: fe.message()}, true
	case errors.Is(err, ErrInvalidURL):
		return Problem{Class: ClassInvalidURL, Message: invalidURLMessage(err)}, true
	}
	return Problem{}, false
}

// message is the FetchError's user-facing text; see Problem.
func (e *FetchError) message() string {
	host := hostOf(e.URL)
	switch e.Class {
	case ClassInvalidURL:
		if errors.Is(e.Err, ErrInvalidURL) {
			return invalidURLMessage(e.Err)
		}
	case ClassNotJSON:
		// ErrNotJSON texts are ours: the media type or first byte the
		// server sent.
		return fmt.Sprintf("%s: %v", host, e.Err)
	case ClassHTTP401, ClassHTTP403, ClassHTTP404, ClassHTTP410, ClassHTTP429, ClassHTTP4xx, ClassHTTP5xx:
		return fmt.Sprintf("%s answered HTTP %d", host, e.Status)
	case ClassRedirect:
		if e.Status != 0 {
			return fmt.Sprintf("%s answered HTTP %d without a redirect the registry can follow", host, e.Status)
		}
	}
	return safehttp.Describe(host, e.Err)
}

// invalidURLMessage keeps the text after the ErrInvalidURL prefix: ours,
// about the user's own input.
func invalidURLMessage(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ErrInvalidURL.Error()); i >= 0 {
		msg = msg[i:]
	}
	return msg
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "the agent's host"
	}
	return u.Host
}
