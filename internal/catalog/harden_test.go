package catalog_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

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
	res, err := big.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: "https://big.example.com/.well-known/agent-card.json",
		Card: mustParse(t, string(raw)), Source: catalog.SourceImport})
	if err != nil {
		t.Fatal(err)
	}
	small, err := catalog.Open(ctx, catalog.Config{DSN: dsn, CardLimits: card.Limits{MaxBytes: len(raw) / 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	ag, err := small.Agent(ctx, catalog.ScopeAll, res.Agent.ID)
	if err != nil {
		t.Fatalf("reading a card stored under a larger limit: %v", err)
	}
	if ag.Card == nil || ag.Card.Name != res.Agent.Card.Name {
		t.Errorf("agent %+v", ag)
	}
}

// TestConcurrentHealthChangesDoNotExhaustThePool: each health change
// reloads index documents over three result sets at once; registrations
// record their check concurrently (16 seeds at a time), which with
// SQLite's 8 connections used to leave every writer waiting for a
// connection held by another.
func TestConcurrentHealthChangesDoNotExhaustThePool(t *testing.T) {
	s := catalogtest.SQLite(t)
	raw, err := os.ReadFile("../card/testdata/v10_proto.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WarmIndex(t.Context()); err != nil {
		t.Fatal(err)
	}
	const n = 16
	ids := make([]string, n)
	for i := range n {
		res, err := s.Upsert(t.Context(), testActor, catalog.UpsertInput{
			CardURL: fmt.Sprintf("https://a%d.example.com/.well-known/agent-card.json", i),
			Card:    mustParse(t, string(raw)), Source: catalog.SourceURL})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = res.Agent.ID
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	errs := make(chan error, n)
	for _, id := range ids {
		go func() {
			_, err := s.RecordFetches(ctx, testActor, []catalog.FetchOutcome{{AgentID: id, At: time.Now(), Status: 200,
				Health: catalog.HealthUp, NextCheckAt: time.Now().Add(time.Hour)}})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("recording a check: %v", err)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("writers waited on each other until the deadline")
	}
}
