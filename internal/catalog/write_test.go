package catalog_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/synth"
)

// Every write names who makes it; one that cannot is refused before it
// changes anything.
func TestWritesNeedAnActor(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		c := mustParse(t, v03Card)
		writes := map[string]func(catalog.Actor) error{
			"upsert": func(a catalog.Actor) error {
				_, err := s.Upsert(ctx, a, catalog.UpsertInput{CardURL: "https://a.example/", Card: c})
				return err
			},
			"record fetches": func(a catalog.Actor) error {
				_, err := s.RecordFetches(ctx, a, []catalog.FetchOutcome{{AgentID: "x", NextCheckAt: time.Now()}})
				return err
			},
			"record verifications": func(a catalog.Actor) error {
				return s.RecordVerifications(ctx, a, nil)
			},
			"set paused": func(a catalog.Actor) error { return s.SetPaused(ctx, a, "x", true) },
			"add trusted key": func(a catalog.Actor) error {
				_, err := s.AddTrustedKey(ctx, a, catalog.TrustedKey{KID: "k", JWK: json.RawMessage(`{}`), Thumbprint: "t", Origins: []string{"*"}})
				return err
			},
			"revoke trusted key": func(a catalog.Actor) error {
				_, err := s.RevokeTrustedKey(ctx, a, "x", time.Now())
				return err
			},
		}
		for _, actor := range []catalog.Actor{{}, {Kind: catalog.ActorUser}, {Kind: "robot", Name: "r2"}, catalog.User("  ")} {
			for name, write := range writes {
				if err := write(actor); !errors.Is(err, catalog.ErrInvalidQuery) {
					t.Errorf("%s as %+v: err = %v, want ErrInvalidQuery", name, actor, err)
				}
			}
		}
		if n, err := s.Count(ctx); err != nil || n != 0 {
			t.Fatalf("refused writes stored %d agents (%v)", n, err)
		}
		if keys, err := s.TrustedKeys(ctx); err != nil || len(keys) != 0 {
			t.Fatalf("refused writes stored keys %v (%v)", keys, err)
		}
		if _, err := s.Upsert(ctx, catalog.User("alice"), catalog.UpsertInput{CardURL: "https://a.example/", Card: c}); err != nil {
			t.Fatalf("a user's write: %v", err)
		}
	})
}

// Two checks of one agent in one batch apply in order, as two batches
// would: the bulk crawl-state update must not merge them.
func TestRecordFetchesSameAgentTwiceInOneBatch(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		id := upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card).Agent.ID
		other := upsert(t, s, "https://weather.example.com/.well-known/agent.json", v02Card).Agent.ID
		base := time.Now().UTC().Truncate(time.Second)
		changed := mustParse(t, strings.Replace(v03Card, "2.1.0", "3.0.0", 1))
		third := upsert(t, s, "https://translate.example.org/.well-known/agent-card.json", v10Card).Agent.ID
		// Four rows: one bulk statement's worth (see execChunks).
		res, err := s.RecordFetches(ctx, testActor, []catalog.FetchOutcome{
			{AgentID: id, At: base, Status: 200, Card: changed, ETag: `"a"`, LastModified: "Mon", Health: catalog.HealthUp,
				NextCheckAt: base.Add(time.Hour)},
			{AgentID: id, At: base.Add(time.Minute), Status: 503, Class: "http_5xx", Message: "busy", Health: catalog.HealthStale,
				ConsecutiveFailures: 1, NextCheckAt: base.Add(2 * time.Hour)},
			{AgentID: other, At: base, Status: 304, NotModified: true, Health: catalog.HealthUp, NextCheckAt: base.Add(time.Hour)},
			{AgentID: third, At: base, Status: 304, NotModified: true, Health: catalog.HealthUp, NextCheckAt: base.Add(time.Hour)},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res[0].NewVersion || res[1].NewVersion {
			t.Fatalf("results %+v", res)
		}
		tgt, err := s.CrawlTarget(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		// The failure keeps the validators of the success before it.
		if tgt.ETag != `"a"` || tgt.LastModified != "Mon" || tgt.ConsecutiveFailures != 1 || tgt.Health != catalog.HealthStale ||
			!tgt.NextCheckAt.Equal(base.Add(2*time.Hour)) || !tgt.LastSuccessAt.Equal(base) {
			t.Fatalf("crawl target %+v", tgt)
		}
		h, err := s.AgentHealth(ctx, id, base.Add(2*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if h.LastError == nil || h.LastError.Class != "http_5xx" || h.LastError.Status != 503 || h.Uptime24h == nil || *h.Uptime24h != 0.5 {
			t.Fatalf("health %+v (last error %+v)", h, h.LastError)
		}
		if tgt, err := s.CrawlTarget(ctx, other); err != nil || tgt.Health != catalog.HealthUp || tgt.ConsecutiveFailures != 0 {
			t.Fatalf("other agent: %+v, %v", tgt, err)
		}
	})
}

// After a crawl batch (new versions, health changes with and without new
// bytes) and verification reports, the live index answers exactly as one
// built afresh from the database: writers and the build derive the same
// documents.
func TestIndexAfterWritesMatchesRebuild(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			live := catalogtest.Open(t, d)
			ctx := context.Background()
			gen, next := synth.New(5), synth.New(6)
			var batch []catalog.UpsertInput
			for i := range 60 {
				batch = append(batch, catalog.UpsertInput{CardURL: gen.CardURL(i), Card: mustParse(t, string(gen.Card(i)))})
			}
			stored, err := live.UpsertBatch(ctx, testActor, batch)
			if err != nil {
				t.Fatal(err)
			}
			if err := live.WarmIndex(ctx); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC()
			var outs []catalog.FetchOutcome
			for i, r := range stored {
				o := catalog.FetchOutcome{AgentID: r.Agent.ID, At: now, Status: 200, Health: catalog.HealthUp, NextCheckAt: now.Add(time.Hour)}
				switch i % 3 {
				case 0:
					o.Card = mustParse(t, string(next.Card(i)))
				case 1:
					o.Status, o.Class, o.Health, o.ConsecutiveFailures = 0, "timeout", catalog.HealthDown, 1
				}
				outs = append(outs, o)
			}
			if _, err := live.RecordFetches(ctx, testActor, outs); err != nil {
				t.Fatal(err)
			}
			var reports []catalog.VerificationInput
			for i, r := range stored[:10] {
				reports = append(reports, catalog.VerificationInput{AgentID: r.Agent.ID, Version: r.Agent.CurrentVersion + i%2,
					Status: catalog.SignatureUnsigned, Report: json.RawMessage(`{}`), VerifiedAt: now, RecheckAt: now.Add(time.Hour),
					AuditCodes: []string{"no_security", fmt.Sprintf("code_%d", i%3)}})
			}
			if err := live.RecordVerifications(ctx, testActor, reports); err != nil {
				t.Fatal(err)
			}
			rebuilt := catalogtest.Open(t, d)
			queries := []catalog.Query{
				{Limit: 100},
				{Limit: 100, Filters: map[string][]string{catalog.FieldHealth: {catalog.HealthDown}}},
				{Limit: 100, Filters: map[string][]string{catalog.FieldAudit: {"no_security"}}},
				{Limit: 100, Filters: map[string][]string{catalog.FieldSignature: {catalog.SignatureUnchecked}}},
				{Limit: 100, Filters: map[string][]string{catalog.FieldInputMode: {"image/*"}}},
				{Limit: 100, Filters: map[string][]string{catalog.FieldInputMode: {"text/*"}, catalog.FieldOutputMode: {"application/json"}}},
				{Limit: 100, Text: "data"},
			}
			for _, q := range queries {
				want, err := rebuilt.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				got, err := live.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := pageKey(got), pageKey(want); g != w {
					t.Errorf("query %+v:\nlive    %s\nrebuilt %s", q, g, w)
				}
			}
		})
	}
}

// pageKey writes what a page answers: total, ids in order with scores,
// and every facet.
func pageKey(p catalog.Page) string {
	var b strings.Builder
	fmt.Fprintf(&b, "total=%d items=", p.Total)
	for _, it := range p.Items {
		fmt.Fprintf(&b, "%s:%s:%.6f,", it.ID, it.Health, it.Score)
	}
	fields := make([]string, 0, len(p.Facets))
	for f := range p.Facets {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	for _, f := range fields {
		fmt.Fprintf(&b, " %s=%v", f, p.Facets[f])
	}
	return b.String()
}

func TestAgentView(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		id := upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card).Agent.ID
		at := time.Now().UTC().Truncate(time.Second)
		changed := mustParse(t, strings.Replace(v03Card, "2.1.0", "3.0.0", 1))
		if _, err := s.RecordFetches(ctx, testActor, []catalog.FetchOutcome{
			{AgentID: id, At: at.Add(-72 * time.Hour), Class: "timeout", Health: catalog.HealthDown, NextCheckAt: at},
			{AgentID: id, At: at, Status: 200, Card: changed, Health: catalog.HealthUp, NextCheckAt: at.Add(time.Hour)},
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: id, Version: 2,
			Status: catalog.SignatureUnsigned, Report: json.RawMessage(`{"v":2}`), VerifiedAt: at, RecheckAt: at.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		v, err := s.AgentView(ctx, catalog.ScopeAll, id, at.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if v.Agent.ID != id || v.Agent.CurrentVersion != 2 || v.Agent.Card.Version != "3.0.0" || v.Agent.SignatureStatus != catalog.SignatureUnsigned {
			t.Errorf("agent %+v", v.Agent)
		}
		if len(v.Versions) != 2 || v.Versions[0].Number != 2 || v.Versions[1].Number != 1 {
			t.Errorf("versions %+v", v.Versions)
		}
		// The failure three days ago counts in the week only.
		if v.Health.State != catalog.HealthUp || v.Health.Uptime24h == nil || *v.Health.Uptime24h != 1 ||
			v.Health.Uptime7d == nil || *v.Health.Uptime7d != 0.5 {
			t.Errorf("health %+v", v.Health)
		}
		if v.Verification == nil || v.Verification.Version != 2 || string(v.Verification.Report) != `{"v":2}` {
			t.Errorf("verification %+v", v.Verification)
		}
		if _, err := s.AgentView(ctx, catalog.ScopeAll, "nope", at); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("unknown agent: err = %v", err)
		}
	})
}

// On SQLite the view's read transaction must not take the write lock: a
// page view would otherwise wait behind every crawler batch (or fail after
// the busy timeout).
func TestAgentViewBesideAWriter(t *testing.T) {
	dsn := catalogtest.SQLiteDSN(t)
	s := catalogtest.Open(t, dsn)
	id := upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card).Agent.ID
	path := strings.TrimPrefix(dsn, "sqlite:")
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	writer, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Rollback()
	if _, err := writer.ExecContext(ctx, "UPDATE agents SET name = 'renamed'"); err != nil {
		t.Fatal(err)
	}
	// The writer holds the lock until the test ends; a view that queued
	// behind it would fail after the one-second deadline.
	vctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	v, err := s.AgentView(vctx, catalog.ScopeAll, id, time.Now())
	if err != nil {
		t.Fatalf("view beside a writer: %v", err)
	}
	if v.Agent.Card.Name == "renamed" {
		t.Error("the view read uncommitted data")
	}
}

// A new version keeps the stored derived rows (skills, interfaces, schemes,
// findings) only when they are the ones it derives: after versions that
// change only the description, versions with other skills, and versions
// going back to earlier skills, an index built afresh from those rows
// answers as the live one, and every agent has the skill rows of its
// current card.
func TestDerivedRowsFollowEveryVersion(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			live := catalogtest.Open(t, d)
			ctx := context.Background()
			gen, other := synth.New(5), synth.New(7)
			const n = 24
			raws := make([][]byte, n)
			var batch []catalog.UpsertInput
			for i := range n {
				raws[i] = gen.Card(i)
				batch = append(batch, catalog.UpsertInput{CardURL: gen.CardURL(i), Card: mustParse(t, string(raws[i]))})
			}
			stored, err := live.UpsertBatch(ctx, testActor, batch)
			if err != nil {
				t.Fatal(err)
			}
			if err := live.WarmIndex(ctx); err != nil {
				t.Fatal(err)
			}
			edit := func(raw []byte, round int) []byte {
				return bytes.Replace(raw, []byte(`"description":"`), fmt.Appendf(nil, `"description":"(edit %d) `, round), 1)
			}
			for round := range 4 {
				now := time.Now().UTC()
				var outs []catalog.FetchOutcome
				for i, r := range stored {
					switch (round + i) % 3 {
					case 0: // the description only
						raws[i] = edit(raws[i], round)
					case 1: // other skills, interfaces, schemes
						raws[i] = other.Card(i + 100*round)
					case 2: // back to the first card's rows, in new bytes
						raws[i] = edit(gen.Card(i), round)
					}
					outs = append(outs, catalog.FetchOutcome{AgentID: r.Agent.ID, At: now, Status: 200, Health: catalog.HealthUp,
						NextCheckAt: now.Add(time.Hour), Card: mustParse(t, string(raws[i]))})
				}
				res, err := live.RecordFetches(ctx, testActor, outs)
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range res {
					if !r.NewVersion {
						t.Fatalf("round %d, agent %d: no new version", round, i)
					}
				}
			}
			if name == "sqlite" {
				// Every agent's row holds the digest of the rows it has, so
				// that the next description-only edit can keep them.
				db, err := sql.Open("sqlite3", "file:"+strings.TrimPrefix(d, "sqlite:"))
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				var unknown int
				if err := db.QueryRow("SELECT COUNT(*) FROM agents WHERE derived_sha256 = ''").Scan(&unknown); err != nil {
					t.Fatal(err)
				}
				if unknown > 0 {
					t.Errorf("%d agents without a derived-rows digest", unknown)
				}
			}
			rebuilt := catalogtest.Open(t, d)
			queries := []catalog.Query{{Limit: 100}}
			vocab := gen.Vocabulary()
			for _, w := range append(slices.Clone(vocab.CommonWords[:min(12, len(vocab.CommonWords))]), vocab.Tags[:8]...) {
				queries = append(queries, catalog.Query{Limit: 100, Text: w.Value})
			}
			for i := range n {
				c := mustParse(t, string(raws[i]))
				for _, sk := range c.Skills {
					queries = append(queries, catalog.Query{Limit: 100, Text: sk.Name})
				}
			}
			for _, q := range queries {
				want, err := rebuilt.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				got, err := live.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := pageKey(got), pageKey(want); g != w {
					t.Errorf("query %q:\nlive    %s\nrebuilt %s", q.Text, g, w)
				}
			}
		})
	}
}
