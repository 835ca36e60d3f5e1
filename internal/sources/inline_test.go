package sources_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/sources"
)

func cardWith(name, iface string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"name":%q,"description":"d","version":"1",
"supportedInterfaces":[{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`, name, iface))
}

// TestInlineCards: an inline card (data, no url) is a pointer to the card
// its agent's origin serves. On the manifest's own origin, that card is
// fetched and catalogued when it is the same agent; an inline card of
// another origin, of another agent than the origin serves, or that is no
// card is skipped, saying which, and nothing inline is stored.
func TestInlineCards(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := t.Context()
		f := newFleet(t)
		f.set("/.well-known/agent-card.json", string(cardWith("Served", f.srv.URL+"/a2a")))
		type inlineEntry struct {
			Identifier string          `json:"identifier"`
			Type       string          `json:"type"`
			Data       json.RawMessage `json:"data,omitempty"`
		}
		m, _ := json.Marshal(map[string]any{"entries": []inlineEntry{
			{"urn:air:127.0.0.1:t:own", sources.TypeA2ACard, cardWith("Inline", f.srv.URL+"/a2a/")},
			{"urn:air:127.0.0.1:t:elsewhere", sources.TypeA2ACard, cardWith("Far", "https://elsewhere.example/a2a")},
			{"urn:air:127.0.0.1:t:other", sources.TypeA2ACard, cardWith("Other", f.srv.URL+"/other")},
			{"urn:air:127.0.0.1:t:empty", sources.TypeA2ACard, nil},
			{"urn:air:127.0.0.1:t:nocard", sources.TypeA2ACard, json.RawMessage(`{"foo":1}`)},
		}})
		f.set("/m.json", string(m))
		svc := newService(t, s, sources.Config{})
		src, err := svc.Add(ctx, person, sources.Request{URL: f.srv.URL + "/m.json"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Refresh(ctx, src.ID); err != nil {
			t.Fatal(err)
		}
		// Read again (a longer body is a new ETag): the agent is unchanged.
		f.set("/m.json", string(m)+" ")
		if _, err := svc.Refresh(ctx, src.ID); err != nil {
			t.Fatal(err)
		}
		_, entries, err := svc.Get(ctx, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]catalog.SourceEntry{}
		for _, e := range entries {
			got[e.Identifier] = e
		}
		for id, want := range map[string][2]string{
			"urn:air:127.0.0.1:t:own":       {catalog.EntryUnchanged, ""},
			"urn:air:127.0.0.1:t:elsewhere": {catalog.EntrySkipped, sources.ReasonInlineCard},
			"urn:air:127.0.0.1:t:other":     {catalog.EntrySkipped, sources.ReasonInlineMismatch},
			"urn:air:127.0.0.1:t:empty":     {catalog.EntrySkipped, sources.ReasonInvalidEntry},
			"urn:air:127.0.0.1:t:nocard":    {catalog.EntrySkipped, sources.ReasonInlineCard},
		} {
			if e := got[id]; e.Outcome != want[0] || e.Reason != want[1] || (e.Outcome == catalog.EntrySkipped && e.Message == "") {
				t.Errorf("%s: %s %s %q, want %v", id, e.Outcome, e.Reason, e.Message, want)
			}
		}
		own := got["urn:air:127.0.0.1:t:own"]
		a, err := s.Agent(ctx, catalog.ScopeAll, own.AgentID)
		if err != nil {
			t.Fatal(err)
		}
		if a.CardURL != f.srv.URL+"/.well-known/agent-card.json" || a.Card.Name != "Served" {
			t.Errorf("the inline card's agent is %s named %q, want the served card", a.CardURL, a.Card.Name)
		}
		prov, err := s.AgentProvenance(ctx, own.AgentID)
		if err != nil || len(prov) != 1 || prov[0].Relation != catalog.RelationPublishedFrom || prov[0].EntryID != "urn:air:127.0.0.1:t:own" {
			t.Errorf("provenance %+v, %v", prov, err)
		}
		if n := searchProvenance(t, s, catalog.RelationPublishedFrom); n != 1 {
			t.Errorf("%d agents catalogued, want 1 (nothing inline is stored)", n)
		}
	})
}
