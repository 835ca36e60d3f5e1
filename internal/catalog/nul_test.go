package catalog_test

import (
	"context"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// JSON allows "\u0000" in strings; PostgreSQL text does not. Such a card
// must still be stored, its raw bytes intact, and be found.
func TestNULInCardText(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		raw := strings.NewReplacer(`"Invoice Extractor"`, `"Invoice\u0000Extractor"`, `"ocr"`, `"o\u0000cr"`).Replace(v03Card)
		res, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: "https://x.example/", Card: mustParse(t, raw)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.RawCard(ctx, catalog.ScopeAll, res.Agent.ID)
		if err != nil || string(got) != raw {
			t.Fatalf("raw card changed: %v", err)
		}
		p, err := s.Search(ctx, catalog.Query{Text: "extractor"})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 1 {
			t.Fatalf("search found %d agents", p.Total)
		}
	})
}
