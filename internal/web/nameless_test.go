package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// TestNamelessStoredAgentHasATitle: registering refuses nameless cards
// (card.CodeMissingName), but one stored before that rule still reads, and
// its search result links with words, not an empty anchor.
func TestNamelessStoredAgentHasATitle(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	raw := []byte(`{"display_name":"Old Nameless","description":"stored under older rules","url":"https://nameless.example/a2a",` +
		`"skills":[{"id":"zyzzyva","name":"Zyzzyva lookup","description":"d","tags":["t"]}]}`)
	c, err := card.Parse(raw, card.Limits{Stored: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.store.Upsert(context.Background(), catalog.System("test"), catalog.UpsertInput{
		CardURL: "https://nameless.example/.well-known/agent-card.json", Card: c, Source: catalog.SourceURL, ReceivedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	rec := f.get(t, "/?q=zyzzyva", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	body := rec.Body.String()
	link := `href="/agents/` + res.Agent.ID + `"`
	i := strings.Index(body, link)
	if i < 0 {
		t.Fatalf("no link to the agent in %s", body)
	}
	if rest := body[i+len(link):]; !strings.Contains(rest[:strings.Index(rest, "</a>")], res.Agent.ID) {
		t.Errorf("the result's link has no title: %q", rest[:strings.Index(rest, "</a>")])
	}
}
