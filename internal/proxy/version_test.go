package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// versionPeer is an agent that declares v1.0 and answers every request
// that carries A2A-Version: 1.0 with status and body, whatever it asks;
// a request without the header fails the test, which would prove nothing.
func versionPeer(t *testing.T, binding string, status int, contentType, body string) card.Interface {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("A2A-Version"); got != "1.0" {
			t.Errorf("request with A2A-Version %q, want 1.0", got)
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		id := string(req.ID)
		if id == "" {
			id = "null"
		}
		fmt.Fprintf(w, body, id)
	}))
	t.Cleanup(srv.Close)
	return card.Interface{URL: srv.URL, Binding: binding, ProtocolVersion: "1.0"}
}

// TestVersionViolations: a v1.0 agent that answers in the v0.3 shape (it
// ignores A2A-Version) or refuses the version its card declares has it
// listed among the exchange's violations; one that answers in v1.0 has
// none, even when its data parts look like v0.3.
func TestVersionViolations(t *testing.T) {
	const (
		v03Task    = `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"}}`
		v03Message = `{"kind":"message","messageId":"m1","role":"agent","parts":[{"kind":"text","text":"hi"}]}`
		v03Update  = `{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"working"},"final":false}`
		v10Task    = `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"data":{"kind":"task","state":"completed"}}]}]}}`
		rpc        = `{"jsonrpc":"2.0","id":%%s,"result":%s}`
		sse        = "data: {\"jsonrpc\":\"2.0\",\"id\":%%s,\"result\":%s}\n\n"
		rpcRefusal = `{"jsonrpc":"2.0","id":%s,"error":{"code":-32009,"message":"Version not supported"}}`
		// AIP-193 status with the A2A ErrorInfo reason, as a2a-go's REST
		// server writes it.
		restRefusal = `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"version not supported","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org"}]}}%.0s`
	)
	tests := []struct {
		name        string
		binding     string
		stream      bool
		status      int
		contentType string
		body        string
		want        []string
		wantResult  bool
	}{
		{"json-rpc answered as v0.3 task", card.BindingJSONRPC, false, 200, "application/json", fmt.Sprintf(rpc, v03Task), []string{ViolationVersionIgnored}, false},
		{"json-rpc answered as v0.3 message", card.BindingJSONRPC, false, 200, "application/json", fmt.Sprintf(rpc, v03Message), []string{ViolationVersionIgnored}, false},
		{"json-rpc stream of v0.3 events", card.BindingJSONRPC, true, 200, "text/event-stream", fmt.Sprintf(sse, v03Update), []string{ViolationVersionIgnored}, false},
		{"http+json answered as v0.3 task", card.BindingHTTPJSON, false, 200, "application/json", v03Task + "%.0s", []string{ViolationVersionIgnored}, false},
		{"json-rpc refuses its declared version", card.BindingJSONRPC, false, 200, "application/json", rpcRefusal, []string{ViolationVersionRejected}, false},
		{"http+json refuses its declared version", card.BindingHTTPJSON, false, 400, "application/json", restRefusal, []string{ViolationVersionRejected}, false},
		{"v1.0 answer whose data looks like v0.3", card.BindingJSONRPC, false, 200, "application/json", fmt.Sprintf(rpc, v10Task), nil, true},
	}
	p := New(Options{Client: proxytest.Loopback()})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := versionPeer(t, tt.binding, tt.status, tt.contentType, tt.body)
			x, err := p.Send(t.Context(), Call{Card: proxytest.Card(true, in)}, proxytest.Text("hi"), tt.stream, nil)
			if (err == nil) != tt.wantResult {
				t.Errorf("error = %v, want a result: %v", err, tt.wantResult)
			}
			var got []string
			for _, v := range x.Violations {
				got = append(got, v.Code)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations %v (%+v), want %v", got, x.Violations, tt.want)
			}
		})
	}
}
