package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// A seed whose agent an admin removed is not known: the seed file
// registers it again, which restores it (docs/crawling.md, "Three ways in").
func TestSeedOfRemovedAgentIsNotKnown(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		ctx := context.Background()
		const seed = "https://seeded.example/.well-known/agent-card.json"
		c, err := card.Parse([]byte(`{"name":"Seeded","description":"d","url":"https://seeded.example/a2a","version":"1",
			"protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`),
			card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		res, err := store.Upsert(ctx, seedActor, catalog.UpsertInput{CardURL: seed, Card: c})
		if err != nil {
			t.Fatal(err)
		}
		if !newSeedRegistrar(store, nil, 1, slog.New(slog.DiscardHandler)).known(ctx, seed) {
			t.Fatal("a listed agent's seed is not known")
		}
		if err := store.RemoveAgent(ctx, catalog.System("test"), res.Agent.ID); err != nil {
			t.Fatal(err)
		}
		if newSeedRegistrar(store, nil, 1, slog.New(slog.DiscardHandler)).known(ctx, seed) {
			t.Error("a removed agent's seed is known: the seed file would never restore it")
		}
	})
}
