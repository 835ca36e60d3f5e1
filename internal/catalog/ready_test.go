package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

func TestSchemaVersion(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		if err := s.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		have, want, err := s.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// 00004 (Go) and 00008 (sessions) are among the embedded ones.
		if have != want || want < 8 {
			t.Fatalf("SchemaVersion after Migrate = %d, %d; want equal, at least 8", have, want)
		}
	})
}

func TestSchemaVersionBehind(t *testing.T) {
	ctx := context.Background()
	s, err := catalog.Open(ctx, catalog.Config{DSN: catalogtest.SQLiteDSN(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.MigrateUpTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	have, want, err := s.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if have != 3 || want <= have {
		t.Fatalf("SchemaVersion of a catalog at 3 = %d, %d", have, want)
	}
}

func TestCrawlQueue(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		a := upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card)
		upsert(t, s, "https://translate.example.org/.well-known/agent-card.json", v10Card)
		now := time.Now().Add(time.Second)
		q, err := s.CrawlQueue(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if q.Due != 2 || q.OldestDue.IsZero() || q.OldestDue.After(now) {
			t.Fatalf("CrawlQueue = %+v; want 2 due, oldest before %v", q, now)
		}
		// A leased agent is someone's work already; a later check is not due.
		if _, err := s.ClaimDue(ctx, now, 1, "r1/x", time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordFetches(ctx, catalog.System("test"), []catalog.FetchOutcome{{AgentID: a.Agent.ID, At: now, Status: 304,
			NotModified: true, Health: catalog.HealthUp, NextCheckAt: now.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		q, err = s.CrawlQueue(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if q.Due > 1 {
			t.Fatalf("CrawlQueue after a claim and a check = %+v; want at most 1 due", q)
		}
		if q, err = s.CrawlQueue(ctx, now.Add(2*time.Hour)); err != nil || q.Due != 2 {
			t.Fatalf("CrawlQueue two hours on = %+v, %v; want 2 due", q, err)
		}
		if got := s.DBStats().MaxOpenConnections; got <= 0 {
			t.Fatalf("DBStats().MaxOpenConnections = %d", got)
		}
	})
}
