package catalog_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// The writers that lock several agents rows take them in one order, so
// replicas on one PostgreSQL catalog never deadlock (SQLSTATE 40P01): a
// verifier storing reports and a crawler storing checks of the same
// agents, the verifier's batch in the opposite order of the crawler's,
// every report and check changing the agents rows and the change feed.
// A batch of 600 agents is locked in more than one read.
func TestWritersDoNotDeadlock(t *testing.T) {
	for _, c := range []struct{ agents, rounds int }{{40, 40}, {600, 12}} {
		t.Run(fmt.Sprint(c.agents, "-agents"), func(t *testing.T) {
			ctx := context.Background()
			dsn := catalogtest.PostgresDSN(t)
			verifier, crawler := catalogtest.Open(t, dsn), catalogtest.Open(t, dsn)
			var batch []catalog.UpsertInput
			for i := range c.agents {
				raw := strings.Replace(v03Card, "Invoice Extractor", fmt.Sprintf("Invoice %d", i), 1)
				batch = append(batch, catalog.UpsertInput{CardURL: fmt.Sprintf("https://a%d.example/", i), Card: mustParse(t, raw)})
			}
			res, err := verifier.UpsertBatch(ctx, testActor, batch)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]string, len(res))
			for i, r := range res {
				ids[i] = r.Agent.ID
			}
			var wg sync.WaitGroup
			wg.Go(func() {
				reversed := slices.Clone(ids)
				slices.Reverse(reversed)
				for n := range c.rounds {
					status := []string{catalog.SignatureUnsigned, catalog.SignatureInvalid}[n%2]
					now := time.Now().UTC()
					var ins []catalog.VerificationInput
					for _, id := range reversed {
						ins = append(ins, catalog.VerificationInput{AgentID: id, Version: 1, Status: status, Report: []byte(`{}`),
							VerifiedAt: now, RecheckAt: now.Add(time.Hour)})
					}
					if err := verifier.RecordVerifications(ctx, testActor, ins); err != nil {
						t.Errorf("verifier, round %d: %v", n, err)
						return
					}
				}
			})
			wg.Go(func() {
				for n := range c.rounds {
					health := []string{catalog.HealthDown, catalog.HealthUp}[n%2]
					now := time.Now().UTC()
					var outs []catalog.FetchOutcome
					for _, id := range ids {
						outs = append(outs, catalog.FetchOutcome{AgentID: id, At: now, Status: 304, NotModified: true,
							Health: health, NextCheckAt: now.Add(time.Hour)})
					}
					if _, err := crawler.RecordFetches(ctx, testActor, outs); err != nil {
						t.Errorf("crawler, round %d: %v", n, err)
						return
					}
				}
			})
			wg.Wait()
		})
	}
}
