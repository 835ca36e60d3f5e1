package catalog_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/synth"
)

// BenchmarkClaimDueWithRemoved measures one crawl claim of 64 due agents
// (then their leases handed back) in a catalog of 10,000 due agents, of
// which the most overdue ones are removed: the claim skips each of them
// with a lookup of its pk. One op is one claim.
func BenchmarkClaimDueWithRemoved(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, removed := range []int{0, 1000} {
			b.Run(fmt.Sprintf("%s/removed=%d", backend, removed), func(b *testing.B) {
				s := benchStore(b, backend)
				ctx := context.Background()
				ids := loadDue(b, s, 10_000)
				for _, id := range ids[:removed] {
					if err := s.RemoveAgent(ctx, catalog.System("bench"), id); err != nil {
						b.Fatal(err)
					}
				}
				now := time.Now().Add(time.Hour)
				for b.Loop() {
					got, err := s.ClaimDue(ctx, now, 64, "bench/1", time.Minute)
					if err != nil || len(got) != 64 {
						b.Fatalf("claimed %d (%v)", len(got), err)
					}
					if _, err := s.ReleaseLeases(ctx, "bench/", ""); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkAgentRemoval measures the check the API makes before serving a
// route about one agent. One op is one check.
func BenchmarkAgentRemoval(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			s := benchStore(b, backend)
			ctx := context.Background()
			ids := loadDue(b, s, 10_000)
			for i := 0; b.Loop(); i++ {
				if _, err := s.AgentRemoval(ctx, ids[i%len(ids)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// loadDue stores n synthetic agents due oldest first in insertion order,
// and returns their ids in that order.
func loadDue(b *testing.B, s *catalog.Store, n int) []string {
	b.Helper()
	g := synth.New(1)
	ctx := context.Background()
	start := time.Now().Add(-time.Duration(n) * time.Second)
	ids := make([]string, 0, n)
	var batch []catalog.UpsertInput
	for i := range n {
		c, err := card.Parse(g.Card(i), card.DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		batch = append(batch, catalog.UpsertInput{CardURL: g.CardURL(i), Card: c, NextCheckAt: start.Add(time.Duration(i) * time.Second)})
		if len(batch) == 500 || i == n-1 {
			res, err := s.UpsertBatch(ctx, testActor, batch)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range res {
				ids = append(ids, r.Agent.ID)
			}
			batch = batch[:0]
		}
	}
	return ids
}
