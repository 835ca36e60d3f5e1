package catalog

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/synth"
)

// BenchmarkSearchExplain measures what explaining every hit of a page
// adds to a search: questions of 3 to 10 words (synth's natural-language
// class) over 20,000 synthetic agents in SQLite, a page of 20 as the
// console shows, without and with Query.Explain, and one explanation
// asked alone (Store.Explain, the console's "why this result").
func BenchmarkSearchExplain(b *testing.B) {
	ctx := context.Background()
	s := openBenchSQLite(b, filepath.Join(b.TempDir(), "catalog.db"))
	gen := synth.New(11)
	for from := 0; from < 20_000; from += 1000 {
		var batch []UpsertInput
		for i := from; i < from+1000; i++ {
			c, err := card.Parse(gen.Card(i), card.DefaultLimits())
			if err != nil {
				b.Fatal(err)
			}
			batch = append(batch, UpsertInput{CardURL: gen.CardURL(i), Card: c})
		}
		if _, err := s.UpsertBatch(ctx, System("test"), batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.WarmIndex(ctx); err != nil {
		b.Fatal(err)
	}
	var questions []string
	for _, c := range gen.Vocabulary().SearchClasses() {
		if strings.HasPrefix(c.Name, "natural language") {
			for _, q := range c.Searches {
				questions = append(questions, q.Get("q"))
			}
		}
	}
	firstHits := make([]string, len(questions))
	for i, q := range questions {
		p, err := s.Search(ctx, Query{Text: q, Limit: 20, Scope: ScopeAll})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Items) > 0 {
			firstHits[i] = p.Items[0].ID
		}
	}
	for _, explain := range []bool{false, true} {
		name := "page"
		if explain {
			name = "page-explained"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := s.Search(ctx, Query{Text: questions[i%len(questions)], Limit: 20, Scope: ScopeAll, Explain: explain}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("one-hit", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			j := i % len(questions)
			if firstHits[j] == "" {
				continue
			}
			if _, err := s.Explain(ctx, ScopeAll, firstHits[j], questions[j]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
