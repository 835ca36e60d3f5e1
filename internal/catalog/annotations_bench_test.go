package catalog

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/synth"
)

// BenchmarkWarmIndexAnnotated is BenchmarkWarmIndex with one agent in
// five annotated (owner team, classification, three labels): the cost of
// the annotations join and their facets at start-up.
func BenchmarkWarmIndexAnnotated(b *testing.B) {
	path := filepath.Join(b.TempDir(), "catalog.db")
	ctx := context.Background()
	loader := openBenchSQLite(b, path)
	gen := synth.New(11)
	const n = 20_000
	for from := 0; from < n; from += 1000 {
		var batch []UpsertInput
		for i := from; i < from+1000; i++ {
			c, err := card.Parse(gen.Card(i), card.DefaultLimits())
			if err != nil {
				b.Fatal(err)
			}
			batch = append(batch, UpsertInput{CardURL: gen.CardURL(i), Card: c})
		}
		if _, err := loader.UpsertBatch(ctx, System("test"), batch); err != nil {
			b.Fatal(err)
		}
	}
	err := loader.transact(ctx, func(tx *txn) error {
		for i := 0; i < n; i += 5 {
			a := Annotations{OwnerTeam: fmt.Sprintf("team %d", i%40), Classification: []string{"internal", "confidential"}[i%2],
				Labels: map[string]string{"env": []string{"prod", "dev", "staging"}[i%3], "tier": fmt.Sprint(i % 4), "cost-center": fmt.Sprint(i % 100)}}
			if err := writeAnnotations(tx.DB, cleanText(gen.CardURL(i)), a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s := openBenchSQLite(b, path)
		if err := s.WarmIndex(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

// BenchmarkSetAnnotations measures one annotation change of an agent with
// the index built: the transaction (row, seq, audit) and the in-place
// index change. Labels alternate so that every op writes.
func BenchmarkSetAnnotations(b *testing.B) {
	path := filepath.Join(b.TempDir(), "catalog.db")
	ctx := context.Background()
	s := openBenchSQLite(b, path)
	gen := synth.New(11)
	c, err := card.Parse(gen.Card(0), card.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	res, err := s.Upsert(ctx, System("test"), UpsertInput{CardURL: gen.CardURL(0), Card: c})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.WarmIndex(ctx); err != nil {
		b.Fatal(err)
	}
	actor := User("bench").For(Request{Role: "editor"})
	for i := 0; b.Loop(); i++ {
		if _, err := s.SetAnnotations(ctx, actor, ScopeAll, res.Agent.ID, Annotations{OwnerTeam: "Payments",
			Labels: map[string]string{"env": fmt.Sprint(i % 2)}}); err != nil {
			b.Fatal(err)
		}
	}
}
