// Package sse writes server-sent events (WHATWG HTML §9.2, "Server-sent
// events"): the framing every door that streams uses, whatever its events
// carry (the API's JSON, the console's HTML fragments).
package sse

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// ContentType is the media type of an event stream.
const ContentType = "text/event-stream"

// Accepts tells whether the client asked for server-sent events
// (Accept: text/event-stream).
func Accepts(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && mt == ContentType {
			return true
		}
	}
	return false
}

// Stream writes the events of one response.
type Stream struct {
	w  io.Writer
	rc *http.ResponseController
	id int
}

// Start answers 200 with an event stream that may last up to maxDuration:
// the server's write timeout is sized for ordinary answers, so it is
// moved past the stream's end.
func Start(w http.ResponseWriter, maxDuration time.Duration) *Stream {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(maxDuration + 30*time.Second))
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-store")
	// Tells nginx not to buffer the stream.
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	return &Stream{w: w, rc: rc}
}

// SendJSON writes one event whose data is v as JSON.
func (s *Stream) SendJSON(event string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"code":"internal","message":"event could not be encoded"}`)
	}
	s.Send(event, string(b))
}

// Send writes one event and flushes it. Each line of data gets its own
// data field, which the reader joins with newlines again (§9.2.6); a
// carriage return would end a line early, so it is dropped.
func (s *Stream) Send(event, data string) {
	s.id++
	var b strings.Builder
	fmt.Fprintf(&b, "event: %s\nid: %d\n", event, s.id)
	for _, line := range strings.Split(strings.ReplaceAll(data, "\r", ""), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	_, _ = io.WriteString(s.w, b.String())
	_ = s.rc.Flush()
}
