package card

import (
	"errors"
	"fmt"
)

// ErrInvalid is the sentinel every *ParseError unwraps to: the bytes are not
// a card we can read at all (as opposed to a card with lint findings).
var ErrInvalid = errors.New("invalid agent card")

// Stable codes of ParseError. They are part of the API (stored with fetch
// outcomes, shown in the console); never rename one.
const (
	// CodeTooLarge: the card is larger than Limits.MaxBytes.
	CodeTooLarge = "too_large"
	// CodeInvalidUTF8: a string is not valid UTF-8 (RFC 8259 §8.1).
	// encoding/json would silently substitute U+FFFD, so the bytes a signer
	// saw and the text we index would differ.
	CodeInvalidUTF8 = "invalid_utf8"
	// CodeInvalidJSON: not a single well-formed JSON value.
	CodeInvalidJSON = "invalid_json"
	// CodeNotObject: well-formed JSON whose top level is not an object.
	CodeNotObject = "not_object"
	// CodeTooDeep: nesting deeper than Limits.MaxDepth.
	CodeTooDeep = "too_deep"
	// CodeDuplicateKey: an object repeats a key. RFC 8259 §4 leaves the
	// meaning to the parser, and parsers disagree (first wins, last wins),
	// which lets a signed card say one thing to the verifier and another to
	// a client; such a card is refused.
	CodeDuplicateKey = "duplicate_key"
	// CodeLimitExceeded: a list or string is longer than its Limits entry.
	CodeLimitExceeded = "limit_exceeded"
	// CodeNotACard: a JSON object that gives a caller nothing to call or
	// choose: no endpoint (an object in supportedInterfaces or
	// additionalInterfaces, or a url) and no skill object. A name next to an
	// A2A-sounding key (`capabilities` listing a product's features or an
	// MCP server's tools) does not make a card. A nameless object needs two
	// card fields besides, which tells a broken card from another format
	// that happens to use the word "url". /.well-known/agent.json is
	// another format on many sites; indexing such files would list
	// non-agents.
	CodeNotACard = "not_a_card"
	// CodeMissingName: a card (it has an endpoint or a skill) without a
	// name: `name` absent, null, blank or not a string, maybe written under
	// another key (`display_name`). Every version of the spec requires it
	// (v0.3 §5.5 AgentCard.name, v1.0 AgentCard.name), and it is what every
	// list, search result and review queue shows of an agent; a
	// placeholder would be a title the agent never gave and the same one
	// for every nameless agent, so such a card is refused and its
	// publisher told which field to add.
	CodeMissingName = "missing_name"
)

// ParseError is a fatal problem with a card's bytes. Path is a JSON path
// ("$.skills[3].tags") or "$" for the whole document.
type ParseError struct {
	Code    string
	Path    string
	Message string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", ErrInvalid, e.Message, e.Code)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ParseError) Unwrap() error { return ErrInvalid }

func parseErr(code, path, format string, args ...any) *ParseError {
	return &ParseError{Code: code, Path: path, Message: fmt.Sprintf(format, args...)}
}
