package catalog_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/synth"
)

// After any mix of new agents, new versions, health changes, removals
// (410) and deletions through one store, its index answers exactly as an
// index built afresh from the database by another store.
func TestIndexMatchesFreshBuild(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			s := catalogtest.Open(t, d)
			mixWrites(t, s)
			compareWithFreshBuild(t, s, catalogtest.Open(t, d))
		})
	}
}

// mixWrites stores 300 synthetic agents in s, then makes 400 random
// writes to them: new versions, verdicts, checks (410 included),
// annotations and removals.
func mixWrites(t *testing.T, s *catalog.Store) {
	t.Helper()
	ctx := context.Background()
	gen := synth.New(21)
	r := rand.New(rand.NewPCG(21, 21))
	parse := func(raw []byte) *card.Card {
		c, err := card.Parse(raw, card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	const n = 300
	var batch []catalog.UpsertInput
	for i := range n {
		batch = append(batch, catalog.UpsertInput{CardURL: gen.CardURL(i), Card: parse(gen.Card(i))})
	}
	res, err := s.UpsertBatch(ctx, testActor, batch)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	for i, r := range res {
		ids[i] = r.Agent.ID
	}
	deleted := map[int]bool{}
	now := time.Now()
	for op := range 400 {
		i := r.IntN(n)
		if deleted[i] {
			continue
		}
		switch k := r.IntN(12); {
		case k < 4: // a new version: another card's content, or a revised description
			raw := gen.Card(n + r.IntN(n))
			if r.IntN(2) == 0 {
				raw = bytes.Replace(gen.Card(i), []byte(`"description":"`), fmt.Appendf(nil, `"description":"(revision %d) `, op), 1)
			}
			if _, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: gen.CardURL(i), Card: parse(raw)}); err != nil {
				t.Fatal(err)
			}
		case k < 6: // a verdict on the current version: status, trust and audit facets
			a, err := s.Agent(ctx, catalog.ScopeAll, ids[i])
			if err != nil {
				t.Fatal(err)
			}
			status, trust := catalog.SignatureUnsigned, ""
			var codes []string
			if r.IntN(2) == 0 {
				status, trust, codes = catalog.SignatureVerified, "pinned", []string{"no_tls", fmt.Sprintf("code_%d", r.IntN(3))}
			}
			if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: ids[i],
				Version: a.CurrentVersion, Status: status, Trust: trust, AuditCodes: codes, Report: []byte(`{}`),
				VerifiedAt: now, RecheckAt: now.Add(time.Hour)}}); err != nil {
				t.Fatal(err)
			}
		case k < 8: // a check: health changes, sometimes gone for good
			o := catalog.FetchOutcome{AgentID: ids[i], At: now, Status: 200, Health: catalog.HealthUp, NextCheckAt: now.Add(time.Hour)}
			switch r.IntN(3) {
			case 0:
				o.Status, o.Class, o.Health, o.ConsecutiveFailures = 503, "http_5xx", catalog.HealthDown, 1
			case 1:
				o.Status, o.Health, o.Removed = 410, catalog.HealthRemoved, true
			}
			if _, err := s.RecordFetches(ctx, testActor, []catalog.FetchOutcome{o}); err != nil {
				t.Fatal(err)
			}
		case k < 10: // annotations: owner team, classification and label facets in place
			ann := catalog.Annotations{OwnerTeam: fmt.Sprintf("team %d", r.IntN(3)),
				Labels: map[string]string{"env": []string{"prod", "dev"}[r.IntN(2)]}}
			if r.IntN(3) == 0 {
				ann = catalog.Annotations{Classification: "internal"}
			}
			if _, err := s.SetAnnotations(ctx, testActor, catalog.ScopeAll, ids[i], ann); err != nil {
				t.Fatal(err)
			}
		default:
			if err := s.RemoveAgent(ctx, catalog.System("test"), ids[i]); err != nil {
				t.Fatal(err)
			}
			deleted[i] = true
		}
	}
}

// compareWithFreshBuild: queries of every kind answer the same, items,
// scores and facets, from s's index and from fresh's, built afresh from
// the database.
func compareWithFreshBuild(t *testing.T, s, fresh *catalog.Store) {
	t.Helper()
	ctx := context.Background()
	queries := []catalog.Query{
		{},
		{Text: "data"},
		{Text: "json api"},
		{Text: "revision"},
		{Text: "summ"},
		{Text: "tra", Filters: map[string][]string{"binding": {"JSONRPC"}}},
		{Filters: map[string][]string{"input_mode": {"image/*"}}},
		{Filters: map[string][]string{"health": {catalog.HealthRemoved}}},
		{Filters: map[string][]string{"health": {catalog.HealthDown}}, Text: "agent"},
		{Filters: map[string][]string{"signature": {catalog.SignatureUnchecked}}},
		{Filters: map[string][]string{"signature": {catalog.SignatureVerified}}, Text: "data"},
		{Filters: map[string][]string{"signature_trust": {"pinned"}}},
		{Filters: map[string][]string{"audit": {"code_1"}}},
		{Filters: map[string][]string{"label": {"env:prod"}}},
		{Filters: map[string][]string{"label": {"env"}, "owner_team": {"team 1"}}, Text: "data"},
		{Filters: map[string][]string{"classification": {"internal"}}},
	}
	for _, q := range queries {
		q.Limit = 50
		got, err := s.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fresh.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("query %+v: %d matches", q, want.Total)
		if got.Total != want.Total || len(got.Items) != len(want.Items) {
			t.Fatalf("query %+v: total %d (%d items), fresh build %d (%d items)", q, got.Total, len(got.Items), want.Total, len(want.Items))
		}
		for i := range got.Items {
			g, w := got.Items[i], want.Items[i]
			if g.ID != w.ID || math.Abs(g.Score-w.Score) > 1e-9*math.Max(1, w.Score) {
				t.Fatalf("query %+v: item %d = %s (%.12g), fresh build %s (%.12g)", q, i, g.ID, g.Score, w.ID, w.Score)
			}
		}
		if !reflect.DeepEqual(got.Facets, want.Facets) {
			t.Fatalf("query %+v: facets differ from the fresh build:\n%v\n%v", q, got.Facets, want.Facets)
		}
	}
}
