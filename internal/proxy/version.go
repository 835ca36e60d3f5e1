package proxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Version violations: the agent mishandled the A2A-Version header the
// client sent (v1.0 §3.6.2: a server answers in the version asked for, or
// refuses it with VersionNotSupported when it does not serve it).
const (
	// ViolationVersionIgnored: a request sent with A2A-Version: 1.0 was
	// answered in the v0.3 shape (`kind` discriminators, lower-case
	// states and roles), as a server that ignores the header does.
	ViolationVersionIgnored = "version_ignored"
	// ViolationVersionRejected: the agent refused, as not supported, the
	// protocol version its card declares for the interface.
	ViolationVersionRejected = "version_rejected"
)

// sniffLimit is how much of each response body a v1.0 HTTP exchange keeps
// to tell which shape the agent answered in: the first event suffices.
const sniffLimit = 8 << 10

// v03Shape matches what only a v0.3 payload holds, outside JSON strings
// (a quote inside a string is escaped, so text an agent returns cannot
// match): the `kind` discriminator of results and events, and lower-case
// task states. v1.0 dropped `kind` and spells states TASK_STATE_….
var v03Shape = regexp.MustCompile(`"kind"\s*:\s*"(task|message|status-update|artifact-update)"|"state"\s*:\s*"(submitted|working|input-required|auth-required|completed|canceled|failed|rejected)"`)

// sniffer keeps the start of the response bodies of one connection.
type sniffer struct {
	mu  sync.Mutex
	buf []byte
}

func (s *sniffer) write(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if room := sniffLimit - len(s.buf); room > 0 {
		s.buf = append(s.buf, p[:min(room, len(p))]...)
	}
}

func (s *sniffer) v03Marker() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(v03Shape.Find(s.buf))
}

// sniffTransport copies the start of each response body into a sniffer
// as the SDK reads it.
type sniffTransport struct {
	base http.RoundTripper
	s    *sniffer
}

func (t *sniffTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = &sniffedBody{ReadCloser: resp.Body, s: t.s}
	return resp, nil
}

type sniffedBody struct {
	io.ReadCloser
	s *sniffer
}

func (b *sniffedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.s.write(p[:n])
	}
	return n, err
}

// versionViolation tells how the agent at ep mishandled the version the
// client asked for, if it did: refused the version its card declares, or
// (HTTP bindings, v1.0) answered in the v0.3 shape. The shape is judged
// only when the v1.0 client could decode no answer (answered is false):
// an answer it did decode was v1.0, whatever a data part holds.
func versionViolation(ep Endpoint, err error, answered bool, s *sniffer) *Violation {
	if errors.Is(err, a2a.ErrVersionNotSupported) {
		return &Violation{Code: ViolationVersionRejected, Detail: fmt.Sprintf(
			"the agent refused protocol version %s (A2A-Version: %s), which its card declares for %s", ep.Speaks, ep.Speaks, ep.URL)}
	}
	if s == nil || answered {
		return nil
	}
	if m := s.v03Marker(); m != "" {
		return &Violation{Code: ViolationVersionIgnored, Detail: fmt.Sprintf(
			"the agent answered a request sent with A2A-Version: %s in the v0.3 shape (%s): it ignores the header", ep.Speaks, m)}
	}
	return nil
}
