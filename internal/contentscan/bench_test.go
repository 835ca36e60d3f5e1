package contentscan

import (
	"context"
	"fmt"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/synth"
)

// BenchmarkScan is one scan of a card with 8 skills of English prose and
// examples, as the verifier runs it per card version, with the name
// lookup answered from memory.
func BenchmarkScan(b *testing.B) {
	var skills []any
	for i := range 8 {
		skills = append(skills, map[string]any{
			"id": fmt.Sprintf("skill-%d", i), "name": fmt.Sprintf("Skill %d", i),
			"description": "Looks up invoices by number, customer or date and returns totals, due dates and line items. " +
				"See https://agent.example.com/docs for the fields.",
			"tags":     []any{"finance", "invoices", "lookup"},
			"examples": []any{"Find invoice 2024-118", "What does ACME owe us this quarter?", "List unpaid invoices older than 30 days"},
		})
	}
	c := buildCard(b, map[string]any{"name": "Invoice Desk", "description": "Answers questions about invoices.", "skills": skills})
	s := Scanner{Names: newFakeNames()}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Scan(ctx, c, ownOrigins); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNameKey(b *testing.B) {
	prototypes() // the table is parsed once per process, not per call
	b.ReportAllocs()
	for b.Loop() {
		NameKey("P\u0430yPal Payments Agent")
	}
}

// BenchmarkScanSynth scans the benchmark catalog's synthetic cards, the
// mix the mixed benchmark's verifier sees, in turn.
func BenchmarkScanSynth(b *testing.B) {
	g := synth.New(1)
	cards := make([]*card.Card, 1000)
	for i := range cards {
		c, err := card.Parse(g.Card(i), card.DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		cards[i] = c
	}
	s := Scanner{Names: newFakeNames()}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Scan(ctx, cards[i%len(cards)], ownOrigins); err != nil {
			b.Fatal(err)
		}
	}
}
