package catalog_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/synth"
)

// BenchmarkUpsert measures storing one new agent per operation, each in its
// own transaction, as the crawler and the register endpoint do.
func BenchmarkUpsert(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			s := benchStore(b, backend)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				raw := strings.Replace(v03Card, "Invoice Extractor", fmt.Sprintf("Invoice Extractor %d", i), 1)
				c := mustParse(b, raw)
				if _, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: fmt.Sprintf("https://a%d.example/", i), Card: c}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUpsertBatch measures bulk loading: 100 new agents per
// transaction, as imports and the benchmark loader do. One op is one agent.
func BenchmarkUpsertBatch(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			s := benchStore(b, backend)
			ctx := context.Background()
			batch := make([]catalog.UpsertInput, 0, 100)
			flush := func() {
				if _, err := s.UpsertBatch(ctx, testActor, batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
			for i := 0; b.Loop(); i++ {
				raw := strings.Replace(v03Card, "Invoice Extractor", fmt.Sprintf("Invoice Extractor %d", i), 1)
				batch = append(batch, catalog.UpsertInput{CardURL: fmt.Sprintf("https://a%d.example/", i), Card: mustParse(b, raw)})
				if len(batch) == cap(batch) {
					flush()
				}
			}
			if len(batch) > 0 {
				flush()
			}
		})
	}
}

// BenchmarkIngestSynth measures parse + store of synthetic cards in batches
// of 200, one op per card.
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
			if _, err := s.UpsertBatch(ctx, testActor, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

func benchStore(b *testing.B, backend string) *catalog.Store {
	if backend == "postgres" {
		return catalogtest.Postgres(b)
	}
	return catalogtest.SQLite(b)
}
