package catalog_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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

// BenchmarkRecordFetches measures what storing a crawl's new card versions
// costs the catalog, as the crawler's writer calls it: batches of 200
// checks of 10,000 synthetic agents, each answering with a new revision of
// its card (the description gains a revision number), with the search
// index built and updated as serve's is. Health is already known, as in a
// catalog crawled before. One op is one stored version; parsing the cards
// is left out.
func BenchmarkRecordFetches(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			const n, batch = 10_000, 200
			s := benchStore(b, backend)
			ctx := context.Background()
			g := synth.New(1)
			raws := make([][]byte, n)
			ids := make([]string, 0, n)
			ins := make([]catalog.UpsertInput, 0, batch)
			for i := range n {
				raws[i] = g.Card(i)
				c, err := card.Parse(raws[i], card.DefaultLimits())
				if err != nil {
					b.Fatal(err)
				}
				ins = append(ins, catalog.UpsertInput{CardURL: g.CardURL(i), Card: c})
				if len(ins) == batch {
					res, err := s.UpsertBatch(ctx, testActor, ins)
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range res {
						ids = append(ids, r.Agent.ID)
					}
					ins = ins[:0]
				}
			}
			if err := s.WarmIndex(ctx); err != nil {
				b.Fatal(err)
			}
			rev := 0
			outcomes := func(from int) []catalog.FetchOutcome {
				rev++
				outs := make([]catalog.FetchOutcome, batch)
				now := time.Now()
				for j := range outs {
					i := (from + j) % n
					raw := bytes.Replace(raws[i], []byte(`"description":"`), fmt.Appendf(nil, `"description":"(revision %d) `, rev), 1)
					c, err := card.Parse(raw, card.DefaultLimits())
					if err != nil {
						b.Fatal(err)
					}
					outs[j] = catalog.FetchOutcome{AgentID: ids[i], At: now, URL: g.CardURL(i), Status: 200,
						Latency: time.Millisecond, ETag: fmt.Sprintf(`"%d-%d"`, i, rev), Card: c,
						Health: catalog.HealthUp, NextCheckAt: now.Add(time.Hour)}
				}
				return outs
			}
			// Every agent checked once: health known, as in steady state.
			for from := 0; from < n; from += batch {
				if _, err := s.RecordFetches(ctx, testActor, outcomes(from)); err != nil {
					b.Fatal(err)
				}
			}
			from := 0
			for b.Loop() {
				b.StopTimer()
				outs := outcomes(from)
				from += batch
				b.StartTimer()
				if _, err := s.RecordFetches(ctx, testActor, outs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*batch), "µs/version")
		})
	}
}
