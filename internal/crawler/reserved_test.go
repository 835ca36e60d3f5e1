package crawler_test

import (
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/examples"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/safehttp/safehttptest"
)

// TestCrawlReservedName: an agent whose card URL is on a reserved name
// (here a shipped example card, at its provider's .example host) is
// checked without any lookup, and its check is stored with its own class
// and a message a user understands.
func TestCrawlReservedName(t *testing.T) {
	raw, err := fs.ReadFile(examples.Cards, "cards/support-agent.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Parse(raw, card.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		const cardURL = "https://support.shop.example/.well-known/agent-card.json"
		up, err := s.Upsert(t.Context(), testActor, catalog.UpsertInput{CardURL: cardURL, Card: c, Source: catalog.SourceURL, ReceivedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		res := safehttptest.NewResolver(t, nil)
		client := safehttp.New(safehttp.Config{Resolver: res.Net()})
		cr := crawler.New(crawler.Config{}, s, crawler.NewFetcher(client, 0), nil)
		target, err := s.CrawlTarget(t.Context(), up.Agent.ID)
		if err != nil {
			t.Fatal(err)
		}
		o := cr.Refresh(t.Context(), target)
		if _, err := s.RecordFetches(t.Context(), testActor, []catalog.FetchOutcome{o}); err != nil {
			t.Fatal(err)
		}
		view, err := s.AgentView(t.Context(), catalog.ScopeAll, up.Agent.ID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		le := view.Health.LastError
		if le == nil || le.Class != crawler.ClassReservedName {
			t.Fatalf("last error %+v, want class %s", le, crawler.ClassReservedName)
		}
		if !strings.Contains(le.Message, "support.shop.example") || !strings.Contains(le.Message, "reserved for examples") {
			t.Errorf("message %q: want the host and why it is not looked up", le.Message)
		}
		if asked := res.Asked(); len(asked) != 0 {
			t.Errorf("resolver asked for %v", asked)
		}
	})
}
