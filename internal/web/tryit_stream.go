package web

import (
	"bytes"
	"context"

	"github.com/a-h/templ"
	"github.com/a2aregistry/registry/internal/sse"
)

// sendFragment writes one event of the run's stream whose data is the
// HTML comp renders, escaped as every page is.
func sendFragment(ctx context.Context, stream *sse.Stream, event string, comp templ.Component) {
	var b bytes.Buffer
	if err := comp.Render(ctx, &b); err != nil {
		return
	}
	stream.Send(event, b.String())
}
