package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// A streamed request (message/stream, SendStreamingMessage,
// tasks/resubscribe) must be answered with an event stream
// (text/event-stream; A2A v1.0 §3.2.3, v0.3 §7.2). The SDK reads any 200
// body as one, so a JSON-RPC error sent as plain JSON, an HTML error page
// or a body with no events reads as a stream that ended silently, and the
// run stayed as it was with no error. streamGuard makes such an answer an
// error that says what the agent sent.

// notStreamLimit is how much of a body that is not an event stream is
// read to say what it was: a JSON-RPC error object fits.
const notStreamLimit = 16 << 10

// errNoEvents: the agent's stream ended before any event (v1.0 §3.1.2: the
// first event is a Task or a Message).
var errNoEvents = errors.New("the agent ended the stream without sending any event")

// notStreamError is the agent's answer to a streamed request that was not
// an event stream.
type notStreamError struct {
	// rpcCode and rpcMessage are the JSON-RPC error the body held, if any
	// (JSON-RPC 2.0 §5.1).
	rpcCode    int
	rpcMessage string
	hasRPC     bool
	mediaType  string
}

func (e *notStreamError) Error() string {
	if e.hasRPC {
		return fmt.Sprintf("the agent answered with JSON-RPC error %d: %s", e.rpcCode, e.rpcMessage)
	}
	mt := e.mediaType
	if mt == "" {
		mt = "untyped"
	}
	return fmt.Sprintf("the agent answered a streamed request with a %s body, not an event stream (text/event-stream)", mt)
}

// streamGuard checks the answers to streamed requests.
type streamGuard struct {
	base http.RoundTripper
}

func (t *streamGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(req.Header.Get("Accept"), "text/event-stream") {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		return resp, nil
	}
	// The SDK sees a body that fails on its first read: its error
	// (wrapped with %w by the SDK's event reader) reaches classify.
	// Failing the round trip instead would read as a connection failure.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, notStreamLimit))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(&failingReader{err: describeNotStream(mt, body)})
	return resp, nil
}

type failingReader struct{ err error }

func (r *failingReader) Read([]byte) (int, error) { return 0, r.err }

// describeNotStream says what a body that is not an event stream holds:
// a JSON-RPC error's code and message (the agent's words to the caller),
// else only its media type. The body itself is never quoted: an error
// page or a proxy's text can hold anything (a stack trace, an upstream's
// answer, what the request carried), and details are stored and shown
// to everyone who can read the agent.
func describeNotStream(mediaType string, body []byte) *notStreamError {
	e := &notStreamError{mediaType: mediaType}
	var env struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		e.hasRPC, e.rpcCode, e.rpcMessage = true, env.Error.Code, env.Error.Message
	}
	return e
}
