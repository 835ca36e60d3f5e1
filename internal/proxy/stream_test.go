package proxy

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// TestStreamedAnswerErrors: an agent that answers a streamed message with
// a JSON-RPC error, a body that is not an event stream, or a stream with
// no events fails the send with ErrAgent and says what it sent; the run
// never reads as a silent success.
func TestStreamedAnswerErrors(t *testing.T) {
	const rpcError = `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"quota exhausted"}}`
	tests := []struct {
		name        string
		contentType string
		body        string
		want        []string
		never       string
	}{
		{"JSON-RPC error as plain JSON", "application/json", rpcError, []string{"JSON-RPC error -32000", "quota exhausted"}, ""},
		// The SDK reads only string ids in events.
		{"JSON-RPC error in an event", "text/event-stream", "data: " + strings.Replace(rpcError, `"id":1`, `"id":"1"`, 1) + "\n\n", []string{"quota exhausted"}, ""},
		{"HTML page", "text/html; charset=utf-8", "<html><body>Bad gateway</body></html>", []string{"text/html body, not an event stream"}, "Bad gateway"},
		{"untyped body", "", "oops", []string{"untyped body"}, "oops"},
		{"stream with no events", "text/event-stream", ": keep-alive\n\n", []string{"without sending any event"}, ""},
		{"empty stream", "text/event-stream", "", []string{"without sending any event"}, ""},
	}
	p := New(Options{Client: proxytest.Loopback()})
	for _, version := range []string{"1.0", "0.3"} {
		for _, binding := range []string{card.BindingJSONRPC, card.BindingHTTPJSON} {
			for _, tt := range tests {
				if binding == card.BindingHTTPJSON && strings.Contains(tt.name, "JSON-RPC") {
					continue
				}
				t.Run(version+"/"+binding+"/"+tt.name, func(t *testing.T) {
					srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if tt.contentType != "" {
							w.Header().Set("Content-Type", tt.contentType)
						} else {
							w.Header()["Content-Type"] = nil
						}
						_, _ = w.Write([]byte(tt.body))
					}))
					t.Cleanup(srv.Close)
					in := card.Interface{URL: srv.URL, Binding: binding, ProtocolVersion: version}
					x, err := p.Send(t.Context(), Call{Card: proxytest.Card(true, in)}, proxytest.Text("hi"), true, nil)
					var pe *Error
					if !errors.As(err, &pe) || !errors.Is(err, ErrAgent) {
						t.Fatalf("Send = %v, want an agent error", err)
					}
					for _, w := range tt.want {
						if !strings.Contains(pe.Message, w) {
							t.Errorf("message %q lacks %q", pe.Message, w)
						}
					}
					// A body that is not A2A is described, never quoted.
					if tt.never != "" && strings.Contains(pe.Message, tt.never) {
						t.Errorf("message %q quotes the body", pe.Message)
					}
					if x == nil || x.Task != nil || x.Message != nil || len(x.Attempts) != 0 {
						t.Errorf("exchange = %+v, want no answer and no fallback", x)
					}
				})
			}
		}
	}
}
