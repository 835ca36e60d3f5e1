package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2aregistry/registry/internal/safehttp"
)

// detail words an SDK error for what a run stores and shows — a check's
// detail, a fallback attempt, a turn's error — to anyone who can read the
// agent. A connection failure says what failed with the interface's host
// (safehttp.Describe), never the socket address, the resolved address or
// the *url.Error text; an answer that does not decode says which field and
// what JSON it held, never the Go type the SDK decodes into. Anything else
// is the agent's words (its JSON-RPC or gRPC error) or the SDK's, checked
// last for the Go-isms the SDK's wrapping lets through.
func detail(err error, rawURL string) string {
	host := hostOf(rawURL)
	var (
		ue  *url.Error
		oe  *net.OpError
		ute *json.UnmarshalTypeError
		se  *json.SyntaxError
	)
	switch {
	case errors.As(err, &ute):
		at := ute.Field
		if at == "" {
			at = "the top level"
		} else {
			at = fmt.Sprintf("%q", at)
		}
		return fmt.Sprintf("the agent's answer could not be read: %s holds %s where A2A expects %s", at, jsonWords(ute.Value), kindWords(ute.Type))
	case errors.As(err, &se):
		return fmt.Sprintf("the agent's answer is not valid JSON (at byte %d)", se.Offset)
	case errors.As(err, &ue), errors.As(err, &oe),
		errors.Is(err, safehttp.ErrBlockedAddress), errors.Is(err, safehttp.ErrReservedName), errors.Is(err, safehttp.ErrSelf):
		return safehttp.Describe(host, err)
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.OK && st.Code() != codes.Unknown {
		if st.Code() == codes.Unavailable && goism.MatchString(st.Message()) {
			// grpc-go flattens the dial error into the status text.
			return fmt.Sprintf("could not connect to %s, or the connection broke before a complete answer (gRPC %s)", host, st.Code())
		}
		return scrubGoisms(fmt.Sprintf("gRPC %s: %s", st.Code(), st.Message()), host)
	}
	return scrubGoisms(err.Error(), host)
}

// goism matches what only Go's own error texts say: decoding into Go
// types, %T output, and dial errors carrying socket addresses.
var goism = regexp.MustCompile(`Go (struct field|value of type)|json: cannot unmarshal|invalid character '|` +
	`\*[a-z0-9]+\.[A-Z]\w*|\bdial (tcp|udp)\b|transport: Error while dialing|` +
	`\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d+\b|%!`)

// scrubGoisms keeps msg when it is free of Go-isms, and otherwise says
// what kind of failure it was, without them: the SDK wrapped an error
// detail cannot take apart ("failed to decode response: %v").
func scrubGoisms(msg, host string) string {
	if !goism.MatchString(msg) {
		return msg
	}
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "dial") || strings.Contains(lower, "connection refused") || strings.Contains(lower, "connect:"):
		return fmt.Sprintf("could not connect to %s, or the connection broke before a complete answer", host)
	case strings.Contains(lower, "unmarshal") || strings.Contains(lower, "decode") || strings.Contains(lower, "invalid character"):
		return fmt.Sprintf("%s answered with something that is not a well-formed A2A response", host)
	}
	return fmt.Sprintf("%s failed in a way the registry cannot describe", host)
}

// jsonWords names the JSON of an UnmarshalTypeError's Value ("number",
// "string", "array", "object", "bool", or a number's text).
func jsonWords(v string) string {
	switch {
	case v == "array", v == "object":
		return "an " + v
	case v == "string":
		return "a string"
	case v == "bool":
		return "a boolean"
	case v == "null":
		return "null"
	case strings.HasPrefix(v, "number"):
		return "a number"
	}
	return "a value"
}

// kindWords names, in JSON's terms, what a Go type decodes from.
func kindWords(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another type"
}

// hostOf is the host of an interface URL as written (gRPC targets may be
// a bare host:port).
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	if h, _, err := net.SplitHostPort(raw); err == nil && h != "" {
		return raw
	}
	return "the agent"
}

// MaxDetailBytes bounds an error or detail string a run or check stores:
// the agent's own error message is its words, of any length, and is
// stored with every turn and shown to everyone who reads the run.
const MaxDetailBytes = 2 << 10

// capDetail cuts s to MaxDetailBytes on a rune boundary, marked. Secrets
// are scrubbed before it: a cut secret would no longer match.
func capDetail(s string) string {
	if len(s) <= MaxDetailBytes {
		return s
	}
	const mark = " […]"
	cut := MaxDetailBytes - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
