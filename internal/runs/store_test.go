package runs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/proxy"
)

// streamedTurn is a turn whose events are a task, a progress note
// (superseded, so not part of the result), an artifact of text and its
// completion, as the proxy records them, and the result they fold to.
func streamedTurn(t *testing.T, id, progress, text string) (proxy.Turn, json.RawMessage) {
	t.Helper()
	task := &a2a.Task{ID: a2a.TaskID(id), ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	working := &a2a.TaskStatusUpdateEvent{TaskID: task.ID, ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
		Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(progress))}}
	art := &a2a.TaskArtifactUpdateEvent{TaskID: task.ID, ContextID: "ctx", Artifact: &a2a.Artifact{ID: "a1", Parts: a2a.ContentParts{a2a.NewTextPart(text)}}}
	done := &a2a.TaskStatusUpdateEvent{TaskID: task.ID, ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	var evs []proxy.TurnEvent
	for i, ev := range []struct {
		kind string
		v    any
	}{{proxy.KindTask, task}, {proxy.KindStatusUpdate, working}, {proxy.KindArtifactUpdate, art}, {proxy.KindStatusUpdate, done}} {
		b, err := json.Marshal(ev.v)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, proxy.TurnEvent{Seq: i + 1, Kind: ev.kind, Data: b})
	}
	result, _ := proxy.FoldEvents(evs)
	if result == nil || !strings.Contains(string(result), text) || !strings.Contains(string(result), "COMPLETED") {
		t.Fatalf("the events fold to %s", result)
	}
	msg, _ := json.Marshal(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("question "+id)))
	return proxy.Turn{Op: proxy.OpSend, Message: msg, Events: evs}, result
}

// TestBoundTranscriptStoresResultOnce: within the bound the result lives
// in its turn's events alone; past it, older turns' data goes first and
// the result stays where it is; when its own events must go, it is kept
// on its own, never lost before everything else, and the stored form
// never exceeds the bound.
func TestBoundTranscriptStoresResultOnce(t *testing.T) {
	old, _ := streamedTurn(t, "t-old", "working", strings.Repeat("o", 40_000))
	latest, result := streamedTurn(t, "t-new", strings.Repeat("p", 25_000), strings.Repeat("n", 30_000))
	tr := proxy.Transcript{Format: proxy.TranscriptFormat, Turns: []proxy.Turn{old, latest}, Task: result}
	for _, tt := range []struct {
		name        string
		max         int
		truncated   bool
		byReference bool // the result stored in its events, not on its own
		kept        bool
	}{
		{"fits", 1 << 20, false, true, true},
		{"older data goes", 80_000, true, true, true},
		{"the result's events go too", 45_000, true, false, true},
		{"the result goes last", 20_000, true, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := boundTranscript(tr, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > tt.max {
				t.Errorf("stored %d bytes, bound %d", len(b), tt.max)
			}
			var top map[string]json.RawMessage
			if err := json.Unmarshal(b, &top); err != nil {
				t.Fatal(err)
			}
			_, inline := top["task"]
			if inline != (tt.kept && !tt.byReference) || (string(top["result_turn"]) == "1") != tt.byReference {
				t.Errorf("task stored on its own %v, result_turn %s; want by reference %v", inline, top["result_turn"], tt.byReference)
			}
			want := 0
			if tt.kept {
				want = 1
			}
			if n := strings.Count(string(b), strings.Repeat("n", 30_000)); n != want {
				t.Errorf("the result's text is stored %d times, want %d", n, want)
			}
			back, err := TranscriptOf(catalog.Run{ID: "r", Transcript: b})
			if err != nil || (string(back.Task) == string(result)) != tt.kept || back.Truncated != tt.truncated {
				t.Errorf("read back: result kept %v, truncated %v (%v); want kept %v, truncated %v",
					string(back.Task) == string(result), back.Truncated, err, tt.kept, tt.truncated)
			}
		})
	}
	if tr.Turns[0].Events[0].Data == nil || string(tr.Turns[0].Events[0].Data) == "null" || tr.Task == nil {
		t.Error("bounding changed the caller's transcript")
	}
}

// TestBoundTranscriptManyTurns: a conversation of hundreds of turns,
// each with as many violations as an operation records, is stored within
// the bound, its latest turn kept.
func TestBoundTranscriptManyTurns(t *testing.T) {
	viol := make([]proxy.TurnViolation, proxy.MaxViolations)
	for i := range viol {
		viol[i] = proxy.TurnViolation{Code: proxy.ViolationMalformedPart, Seq: i + 1, Detail: strings.Repeat("v", 100)}
	}
	var tr proxy.Transcript
	// Their errors alone outgrow the bound: whole turns must go.
	for i := range 600 {
		tr.Turns = append(tr.Turns, proxy.Turn{Op: proxy.OpSend, TaskID: fmt.Sprintf("turn-%d", i), Events: []proxy.TurnEvent{}, Violations: viol,
			Error: &proxy.TurnError{Code: proxy.CodeAgentError, Message: strings.Repeat("e", proxy.MaxDetailBytes)}})
	}
	b, err := boundTranscript(tr, MaxTranscriptBytes)
	if err != nil {
		t.Fatal(err)
	}
	back, err := TranscriptOf(catalog.Run{ID: "r", Transcript: b})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxTranscriptBytes || !back.Truncated || len(back.Turns) == 0 || back.Turns[len(back.Turns)-1].TaskID != "turn-599" {
		t.Errorf("stored %d bytes (bound %d), truncated %v, %d turns", len(b), MaxTranscriptBytes, back.Truncated, len(back.Turns))
	}
}

// TestBoundCheck: a check record whose interfaces each carry many
// violations is stored within the bound, each interface's detail kept.
func TestBoundCheck(t *testing.T) {
	viol := make([]proxy.TurnViolation, proxy.MaxViolations)
	for i := range viol {
		viol[i] = proxy.TurnViolation{Code: proxy.ViolationMalformedPart, Detail: strings.Repeat("v", proxy.MaxDetailBytes)}
	}
	rec := proxy.CheckRecord{Format: proxy.TranscriptFormat, Works: catalog.WorksNone}
	for i := range 64 {
		rec.Interfaces = append(rec.Interfaces, proxy.CheckedInterface{URL: fmt.Sprintf("https://h%d.example/a2a", i),
			Cause: proxy.CauseMalformed, Detail: strings.Repeat("d", proxy.MaxDetailBytes), Violations: viol})
	}
	b, err := boundCheck(&rec, MaxTranscriptBytes)
	if err != nil {
		t.Fatal(err)
	}
	var back proxy.CheckRecord
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxTranscriptBytes || !back.Truncated || len(back.Interfaces) != 64 || back.Interfaces[63].Detail == "" {
		t.Errorf("stored %d bytes (bound %d), truncated %v, %d interfaces", len(b), MaxTranscriptBytes, back.Truncated, len(back.Interfaces))
	}
	small := proxy.CheckRecord{Format: proxy.TranscriptFormat, Interfaces: []proxy.CheckedInterface{{URL: "https://h.example/a2a", Violations: viol}}}
	if b, err := boundCheck(&small, MaxTranscriptBytes); err != nil || small.Truncated || len(small.Interfaces[0].Violations) != proxy.MaxViolations || len(b) == 0 {
		t.Errorf("a small record was cut: truncated %v, %d violations (%v)", small.Truncated, len(small.Interfaces[0].Violations), err)
	}
}
