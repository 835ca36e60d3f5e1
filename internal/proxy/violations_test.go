package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// rogueStream serves a v1.0 JSON-RPC stream of the given results, in
// order, whatever is asked.
func rogueStream(t *testing.T, results ...string) card.Interface {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, res := range results {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", req.ID, res)
		}
	}))
	t.Cleanup(srv.Close)
	return card.Interface{URL: srv.URL, Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"}
}

func TestViolations(t *testing.T) {
	const (
		task      = `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"}}}`
		working   = `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`
		completed = `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`
		bogus     = `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_BOGUS"}}}`
		other     = `{"statusUpdate":{"taskId":"t2","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`
		noID      = `{"artifactUpdate":{"contextId":"c1","artifact":{"artifactId":"a","parts":[{"text":"x"}]}}}`
	)
	p := New(Options{Client: proxytest.Loopback()})
	tests := []struct {
		name    string
		results []string
		want    []string
	}{
		{"honest", []string{task, working, completed}, nil},
		{"update before task", []string{working, completed}, []string{ViolationUpdateBeforeTask}},
		{"event after terminal", []string{task, completed, working}, []string{ViolationEventAfterTerminal}},
		{"unknown state", []string{task, bogus, completed}, []string{ViolationUnknownState}},
		{"task changed", []string{task, other, completed}, []string{ViolationTaskChanged}},
		{"missing task id", []string{task, noID, completed}, []string{ViolationMissingTaskID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := p.Send(t.Context(), Call{Card: proxytest.Card(true, rogueStream(t, tt.results...))}, proxytest.Text("hi"), true, nil)
			if err != nil {
				t.Fatal(err)
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

// TestLongIDsRefused: an agent naming a task or context id longer than
// MaxIDBytes ends the operation as its error before the event is
// recorded, so no run stores or sends back such an id.
func TestLongIDsRefused(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	at := strings.Repeat("t", MaxIDBytes)
	over := strings.Repeat("t", MaxIDBytes+1)
	for _, tt := range []struct {
		name, task, ctx string
		ok              bool
	}{
		{"at the bound", at, at, true},
		{"task id over", over, "c1", false},
		{"context id over", "t1", over, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			task := fmt.Sprintf(`{"task":{"id":%q,"contextId":%q,"status":{"state":"TASK_STATE_COMPLETED"}}}`, tt.task, tt.ctx)
			x, err := p.Send(t.Context(), Call{Card: proxytest.Card(true, rogueStream(t, task))}, proxytest.Text("hi"), true, nil)
			if tt.ok {
				if err != nil || x.Task == nil || string(x.Task.ID) != tt.task {
					t.Errorf("Send = %v, task %v", err, x.Task)
				}
				return
			}
			if !errors.Is(err, ErrAgent) || x.Task != nil || len(x.Events) != 0 || len(err.Error()) > MaxDetailBytes {
				t.Errorf("Send = %v with task %v and %d events; want ErrAgent, nothing recorded", err, x.Task, len(x.Events))
			}
		})
	}
}

// TestViolationsCapped: an agent that breaks a rule in every part of its
// answer gets at most MaxViolations recorded.
func TestViolationsCapped(t *testing.T) {
	parts := strings.TrimSuffix(strings.Repeat(`null,`, 5*MaxViolations), ",")
	task := `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[` + parts + `]}]}}`
	x, err := New(Options{Client: proxytest.Loopback()}).Send(t.Context(), Call{Card: proxytest.Card(true, rogueStream(t, task))}, proxytest.Text("hi"), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Violations) != MaxViolations || x.Violations[0].Code != ViolationMalformedPart {
		t.Errorf("%d violations (first %+v), want %d malformed parts", len(x.Violations), x.Violations[0], MaxViolations)
	}
}
