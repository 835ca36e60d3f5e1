package catalog_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// TestPublisherFacets: the publisher (the card URL's registrable domain)
// and publisher_verified (set with the current version's report, reset by
// a new version) filter and count alike on both databases, in the writer's
// index, in a replica's after Sync and in a fresh build.
func TestPublisherFacets(t *testing.T) {
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", catalogtest.SQLiteDSN}, {"postgres", catalogtest.PostgresDSN}} {
		t.Run(db.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := db.dsn(t)
			s := catalogtest.Open(t, dsn)
			replica := catalogtest.Open(t, dsn)
			signed := upsert(t, s, "https://agents.acme.co.uk/.well-known/agent-card.json", v10Card)
			upsert(t, s, "https://billing.acme.co.uk/.well-known/agent-card.json", v03Card)
			upsert(t, s, "https://weather.example.com/.well-known/agent.json", v02Card)
			if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: signed.Agent.ID, Version: 1,
				Status: catalog.SignatureVerified, Report: []byte(`{}`), VerifiedAt: time.Now(), RecheckAt: time.Now().Add(time.Hour),
				PublisherVerified: true}}); err != nil {
				t.Fatal(err)
			}
			if err := replica.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			fresh := catalogtest.Open(t, dsn)
			check := func(t *testing.T, st *catalog.Store, verified int) {
				t.Helper()
				page, err := st.Search(ctx, catalog.Query{Filters: map[string][]string{catalog.FieldPublisher: {"ACME.co.uk"}}})
				if err != nil {
					t.Fatal(err)
				}
				if page.Total != 2 {
					t.Errorf("publisher=acme.co.uk: %d agents, want 2", page.Total)
				}
				if got := facet(page, catalog.FieldPublisherVerified, "true"); got != verified {
					t.Errorf("publisher_verified=true counted %d, want %d", got, verified)
				}
				if got := facet(page, catalog.FieldPublisherVerified, "false"); got != 2-verified {
					t.Errorf("publisher_verified=false counted %d, want %d", got, 2-verified)
				}
				for _, it := range page.Items {
					if it.PublisherVerified != (verified == 1 && it.ID == signed.Agent.ID) {
						t.Errorf("%s: summary says publisher verified %v", it.CardURL, it.PublisherVerified)
					}
				}
				all, err := st.Search(ctx, catalog.Query{})
				if err != nil {
					t.Fatal(err)
				}
				if facet(all, catalog.FieldPublisher, "acme.co.uk") != 2 || facet(all, catalog.FieldPublisher, "example.com") != 1 {
					t.Errorf("publisher facet = %v", all.Facets[catalog.FieldPublisher])
				}
				only, err := st.Search(ctx, catalog.Query{Filters: map[string][]string{catalog.FieldPublisherVerified: {"true"}}})
				if err != nil {
					t.Fatal(err)
				}
				if only.Total != verified {
					t.Errorf("publisher_verified=true: %d agents, want %d", only.Total, verified)
				}
			}
			for name, st := range map[string]*catalog.Store{"writer": s, "replica": replica, "fresh build": fresh} {
				t.Run(name, func(t *testing.T) { check(t, st, 1) })
			}

			// A new version is unverified until its own report says otherwise.
			upsert(t, s, "https://agents.acme.co.uk/.well-known/agent-card.json", v10Card[:len(v10Card)-1]+`,"iconUrl":"https://agents.acme.co.uk/i.png"}`)
			if err := replica.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			for name, st := range map[string]*catalog.Store{"writer": s, "replica": replica, "rebuilt": catalogtest.Open(t, dsn)} {
				t.Run("new version/"+name, func(t *testing.T) { check(t, st, 0) })
			}
		})
	}
}

func facet(p catalog.Page, field, value string) int {
	i := slices.IndexFunc(p.Facets[field], func(c catalog.FacetCount) bool { return c.Value == value })
	if i < 0 {
		return 0
	}
	return p.Facets[field][i].Count
}
