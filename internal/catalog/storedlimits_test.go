package catalog_test

import (
	"os"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// TestStoredCardOutlivesLowerLimits: a card stored under a larger
// --max-card-bytes still reads after the limit is lowered (issue 10
// finding 3): reads never re-apply the intake cap.
func TestStoredCardOutlivesLowerLimits(t *testing.T) {
	raw, err := os.ReadFile("../card/testdata/v10_proto.json")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	dsn := catalogtest.SQLiteDSN(t)
	big := catalogtest.Open(t, dsn)
	res, err := big.Upsert(ctx, catalog.UpsertInput{CardURL: "https://big.example.com/.well-known/agent-card.json",
		Card: mustParse(t, string(raw)), Source: catalog.SourceImport})
	if err != nil {
		t.Fatal(err)
	}
	small, err := catalog.Open(ctx, catalog.Config{DSN: dsn, CardLimits: card.Limits{MaxBytes: len(raw) / 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	ag, err := small.Agent(ctx, res.Agent.ID)
	if err != nil {
		t.Fatalf("reading a card stored under a larger limit: %v", err)
	}
	if ag.Card == nil || ag.Card.Name != res.Agent.Card.Name {
		t.Errorf("agent %+v", ag)
	}
}
