package web

import (
	"encoding/json"
	"strings"

	"github.com/a2aregistry/registry/internal/proxy"
	"github.com/a2aregistry/registry/internal/web/view"
)

// The proxy relays events and results in the v1.0 JSON shape whatever
// the agent spoke (proxy.Event.Data), so one reading of that shape serves
// live events and stored transcripts alike. Everything in it is the
// agent's and is shown as text.

// wirePart is a v1.0 Part (§4.1.6): exactly one of text, raw, data, url.
type wirePart struct {
	Text      *string         `json:"text"`
	Raw       []byte          `json:"raw"`
	Data      json.RawMessage `json:"data"`
	URL       string          `json:"url"`
	Filename  string          `json:"filename"`
	MediaType string          `json:"mediaType"`
}

type wireMessage struct {
	Parts []wirePart `json:"parts"`
}

type wireArtifact struct {
	ArtifactID string     `json:"artifactId"`
	Name       string     `json:"name"`
	Parts      []wirePart `json:"parts"`
}

// wireObject is any of Task, Message, TaskStatusUpdateEvent and
// TaskArtifactUpdateEvent: their fields do not collide.
type wireObject struct {
	Status *struct {
		State   string       `json:"state"`
		Message *wireMessage `json:"message"`
	} `json:"status"`
	Parts     []wirePart     `json:"parts"`
	Artifact  *wireArtifact  `json:"artifact"`
	Artifacts []wireArtifact `json:"artifacts"`
}

// taskState is the state of a stored task, "" when there is none.
func taskState(task json.RawMessage) string {
	var o wireObject
	if task == nil || json.Unmarshal(task, &o) != nil || o.Status == nil {
		return ""
	}
	return o.Status.State
}

// eventView shows one relayed event: the text of its status message,
// artifact chunk or message.
func eventView(seq int, kind, state string, data json.RawMessage) view.Event {
	ev := view.Event{Seq: seq, Kind: kind, State: state}
	var o wireObject
	if json.Unmarshal(data, &o) != nil {
		return ev
	}
	if o.Status != nil && o.Status.Message != nil {
		ev.Items = append(ev.Items, items(o.Status.Message.Parts, "")...)
	}
	if o.Artifact != nil {
		ev.Items = append(ev.Items, items(o.Artifact.Parts, artifactName(*o.Artifact))...)
	}
	ev.Items = append(ev.Items, items(o.Parts, "")...)
	return ev
}

// resultItems shows a run's latest result: the task's artifacts and
// status message, or the agent's message.
func resultItems(data json.RawMessage) []view.Item {
	var o wireObject
	if json.Unmarshal(data, &o) != nil {
		return nil
	}
	var out []view.Item
	if o.Status != nil && o.Status.Message != nil {
		out = append(out, items(o.Status.Message.Parts, "")...)
	}
	for _, a := range o.Artifacts {
		out = append(out, joinText(items(a.Parts, artifactName(a)))...)
	}
	return append(out, items(o.Parts, "")...)
}

// joinText joins an artifact's consecutive text parts into one: a
// streamed artifact arrives in chunks (TaskArtifactUpdateEvent with
// append, A2A v1.0 §4.2.2), each kept as a part, and the tester reads
// the text the agent wrote, not where its chunks ended.
func joinText(its []view.Item) []view.Item {
	var out []view.Item
	for _, it := range its {
		if n := len(out); n > 0 && it.Kind == "text" && out[n-1].Kind == "text" && out[n-1].MediaType == it.MediaType {
			out[n-1].Text += it.Text
			continue
		}
		out = append(out, it)
	}
	return out
}

func artifactName(a wireArtifact) string {
	if a.Name != "" {
		return a.Name
	}
	return a.ArtifactID
}

func items(parts []wirePart, artifact string) []view.Item {
	var out []view.Item
	for _, p := range parts {
		it := view.Item{Artifact: artifact, Filename: p.Filename, MediaType: p.MediaType}
		switch {
		case p.Text != nil:
			it.Kind, it.Text = "text", *p.Text
		case p.Data != nil:
			it.Kind, it.Text = "data", string(p.Data)
		case p.Raw != nil:
			// File bytes are not shown: an agent's HTML or SVG must not
			// render in the console. Name, type and size say what came.
			it.Kind, it.Size = "file", len(p.Raw)
		case p.URL != "":
			it.Kind, it.Text = "url", p.URL
		default:
			continue
		}
		out = append(out, it)
	}
	return out
}

// turnView shows one stored operation.
func turnView(t proxy.Turn) view.Turn {
	v := view.Turn{Op: t.Op, StartedAt: t.StartedAt, CredentialKind: t.CredentialKind}
	if in := t.Interface; in != nil {
		v.Interface = strings.Join([]string{in.URL, in.Binding, in.Speaks}, " · ")
	}
	if t.Message != nil {
		v.Sent = resultItems(t.Message)
	}
	for _, e := range t.Events {
		v.Events = append(v.Events, eventView(e.Seq, e.Kind, e.State, e.Data))
	}
	for _, vi := range t.Violations {
		v.Violations = append(v.Violations, vi.Code+": "+vi.Detail)
	}
	if t.Error != nil {
		v.ErrorCode, v.Error = t.Error.Code, t.Error.Message
	}
	return v
}
