package catalog_test

import (
	"context"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/synth"
)

func BenchmarkIngestSynth(b *testing.B) {
	s := catalogtest.SQLite(b)
	g := synth.New(1)
	ctx := context.Background()
	var batch []catalog.UpsertInput
	for i := 0; b.Loop(); i++ {
		c, err := card.Parse(g.Card(i), card.DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		batch = append(batch, catalog.UpsertInput{CardURL: g.CardURL(i), Card: c})
		if len(batch) == 200 {
			if _, err := s.UpsertBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}
