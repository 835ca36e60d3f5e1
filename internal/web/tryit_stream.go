package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// acceptsEventStream tells whether the page's script asked for the run as
// server-sent events.
func acceptsEventStream(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get(echo.HeaderAccept), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && mt == "text/event-stream" {
			return true
		}
	}
	return false
}

// fragmentStream writes server-sent events (WHATWG HTML §9.2) whose data
// is HTML the console rendered, escaped as every page is.
type fragmentStream struct {
	w  *echo.Response
	id int
}

func startFragmentStream(c echo.Context, maxRun time.Duration) *fragmentStream {
	// The server's write timeout is sized for pages; a stream lasts up to
	// the run limit.
	_ = http.NewResponseController(c.Response()).SetWriteDeadline(time.Now().Add(maxRun + 30*time.Second))
	hd := c.Response().Header()
	hd.Set(echo.HeaderContentType, "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	c.Response().WriteHeader(http.StatusOK)
	c.Response().Flush()
	return &fragmentStream{w: c.Response()}
}

func (s *fragmentStream) send(ctx context.Context, event string, comp templ.Component) {
	var b bytes.Buffer
	if err := comp.Render(ctx, &b); err != nil {
		return
	}
	s.sendText(event, b.String())
}

// sendText writes one event; each line of data gets its own data field,
// which the reader joins with newlines again.
func (s *fragmentStream) sendText(event, data string) {
	s.id++
	var b strings.Builder
	fmt.Fprintf(&b, "event: %s\nid: %d\n", event, s.id)
	for _, line := range strings.Split(strings.ReplaceAll(data, "\r", ""), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	_, _ = io.WriteString(s.w, b.String())
	s.w.Flush()
}
