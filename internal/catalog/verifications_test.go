package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/synth"
)

// A batch of reports is stored as the same reports one call each would
// store: reports, verdicts, kids, name keys, each agent's events in order
// and the live index.
// The batch names one agent twice, an older version, an unknown agent,
// content findings and a signing-key change; it is stored in one
// statement per table, the calls one report at a time.
func TestRecordVerificationsBatchAsOneByOne(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			load := func() (*catalog.Store, []string) {
				s := catalogtest.Open(t, dsn(t))
				gen := synth.New(3)
				var batch []catalog.UpsertInput
				for i := range 8 {
					batch = append(batch, catalog.UpsertInput{CardURL: gen.CardURL(i), Card: mustParse(t, string(gen.Card(i)))})
				}
				res, err := s.UpsertBatch(ctx, testActor, batch)
				if err != nil {
					t.Fatal(err)
				}
				// A second version, whose report is compared with the first's.
				if _, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: gen.CardURL(5),
					Card: mustParse(t, string(synth.New(4).Card(5)))}); err != nil {
					t.Fatal(err)
				}
				if err := s.WarmIndex(ctx); err != nil {
					t.Fatal(err)
				}
				ids := make([]string, len(res))
				for i, r := range res {
					ids[i] = r.Agent.ID
				}
				return s, ids
			}
			now := time.Now().UTC().Truncate(time.Second)
			// Reports name agents by their index in the store's load.
			type rep struct {
				agent, version int
				in             catalog.VerificationInput
			}
			unsigned := func(codes ...string) catalog.VerificationInput {
				return catalog.VerificationInput{Status: catalog.SignatureUnsigned, VerifiedAt: now, RecheckAt: now.Add(time.Hour),
					AuditCodes: codes, Severities: []string{"warning"}}
			}
			signed := catalog.VerificationInput{Status: catalog.SignatureVerified, VerifiedAt: now, RecheckAt: now.Add(time.Hour),
				KeysExpireAt: now.Add(time.Minute), KIDs: []string{"k2", "k1", "k2"}, Trust: "pinned", PublisherVerified: true}
			keyChanged := signed
			keyChanged.AuditCodes, keyChanged.Severities = []string{"signing_key_changed"}, []string{"warning"}
			reps := []rep{
				{0, 1, unsigned("no_security")},
				{1, 1, unsigned("content_hidden_unicode", "no_security")},
				{0, 1, unsigned("content_prompt_injection")},
				{2, 1, signed},
				{3, 2, unsigned("no_security")}, // no version 2: kept for that version only
				{-1, 1, unsigned()},             // unknown agent
				{5, 1, signed},
				{5, 2, keyChanged},
				{6, 1, unsigned()},
				{0, 1, signed},
			}
			for i := range reps {
				reps[i].in.Version = reps[i].version
				reps[i].in.Report = json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
				reps[i].in.NameKeys = []catalog.NameKey{{Key: fmt.Sprintf("name:agent%d", reps[i].agent), Text: "A"},
					{Key: "provider:shared", Text: fmt.Sprint(i)}, {Key: "provider:shared", Text: "dup"}}
			}
			inputs := func(ids []string) []catalog.VerificationInput {
				out := make([]catalog.VerificationInput, len(reps))
				for i, r := range reps {
					out[i] = r.in
					out[i].AgentID = "00000000-0000-7000-8000-000000000000"
					if r.agent >= 0 {
						out[i].AgentID = ids[r.agent]
					}
				}
				return out
			}
			batched, bIDs := load()
			if err := batched.RecordVerifications(ctx, testActor, inputs(bIDs)); err != nil {
				t.Fatal(err)
			}
			single, sIDs := load()
			for _, in := range inputs(sIDs) {
				if err := single.RecordVerifications(ctx, testActor, []catalog.VerificationInput{in}); err != nil {
					t.Fatal(err)
				}
			}
			got, want := storedVerifications(t, batched, bIDs), storedVerifications(t, single, sIDs)
			if got != want {
				t.Errorf("batch stored\n%s\none by one\n%s", got, want)
			}
		})
	}
}

// storedVerifications writes what the store holds of its agents' reports,
// naming agents by their index in ids.
func storedVerifications(t *testing.T, s *catalog.Store, ids []string) string {
	t.Helper()
	ctx := context.Background()
	index := func(id string) string {
		if i := slices.Index(ids, id); i >= 0 {
			return fmt.Sprint(i)
		}
		return "?" + id
	}
	var b strings.Builder
	for i, id := range ids {
		a, err := s.Agent(ctx, catalog.ScopeAll, id)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "agent %d: %s v%d\n", i, a.SignatureStatus, a.CurrentVersion)
		for v := 1; v <= 2; v++ {
			r, err := s.VersionReport(ctx, id, v)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "  report v%d: %s\n", v, r)
		}
		ver, err := s.Verification(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if ver != nil {
			fmt.Fprintf(&b, "  current: v%d %s keys %v recheck %v stale %v\n", ver.Version, ver.Status,
				ver.KeysExpireAt, ver.RecheckAt, ver.Stale)
		}
		ms, err := s.AgentsByNameKey(ctx, []string{fmt.Sprintf("name:agent%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			fmt.Fprintf(&b, "  name key %s: %s %s\n", m.Key, index(m.AgentID), m.Text)
		}
	}
	ms, err := s.AgentsByNameKey(ctx, []string{"provider:shared"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		fmt.Fprintf(&b, "provider key: %s %s\n", index(m.AgentID), m.Text)
	}
	events, err := s.Events(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// Events keep their order per agent (webhooks deliver in that
	// order), not across agents.
	slices.SortStableFunc(events, func(x, y catalog.Event) int { return strings.Compare(index(x.AgentID), index(y.AgentID)) })
	for _, e := range events {
		if e.Kind != catalog.ChangeCreated && e.Kind != catalog.ChangeUpdated {
			fmt.Fprintf(&b, "event %s %s v%d %s\n", e.Kind, index(e.AgentID), e.Version, e.Detail)
		}
	}
	// The live index, changed in place by the writes.
	now := time.Now()
	p, err := s.Search(ctx, catalog.Query{Scope: catalog.ScopeAll, Limit: 100,
		AnyOf: []catalog.FilterGroup{catalog.KeyChangedSince(now.Add(-time.Hour), now)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range p.Items {
		fmt.Fprintf(&b, "key changed today: %s\n", index(it.ID))
	}
	p, err = s.Search(ctx, catalog.Query{Scope: catalog.ScopeAll, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "facets: %v\n", p.Facets)
	return b.String()
}

// The verifier is due never-verified agents first, in the order they were
// catalogued, then agents whose recheck time has come, earliest first;
// removed agents and ones whose recheck is ahead are not due. Each limit
// cuts that one order, whether it falls among the never-verified agents
// or past them.
func TestDueVerificationsOrder(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := catalogtest.Open(t, dsn(t))
			gen := synth.New(5)
			var batch []catalog.UpsertInput
			for i := range 12 {
				batch = append(batch, catalog.UpsertInput{CardURL: gen.CardURL(i), Card: mustParse(t, string(gen.Card(i)))})
			}
			res, err := s.UpsertBatch(ctx, testActor, batch)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]string, len(res))
			for i, r := range res {
				ids[i] = r.Agent.ID
			}
			now := time.Now().UTC().Truncate(time.Second)
			recheck := map[int]time.Duration{1: time.Hour, 3: time.Hour, 4: -time.Hour, 6: time.Hour, 8: -2 * time.Hour}
			var ins []catalog.VerificationInput
			for i, after := range recheck {
				ins = append(ins, catalog.VerificationInput{AgentID: ids[i], Version: 1, Status: catalog.SignatureUnsigned,
					VerifiedAt: now, RecheckAt: now.Add(after), Report: json.RawMessage(`{}`)})
			}
			if err := s.RecordVerifications(ctx, testActor, ins); err != nil {
				t.Fatal(err)
			}
			if err := s.RemoveAgent(ctx, admin, ids[9]); err != nil {
				t.Fatal(err)
			}
			order := []int{0, 2, 5, 7, 10, 11, 8, 4}
			for _, limit := range []int{1, 3, 6, 7, 100} {
				var want []string
				for _, i := range order[:min(limit, len(order))] {
					want = append(want, ids[i])
				}
				due, err := s.DueVerifications(ctx, now, limit)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, d := range due {
					got = append(got, d.AgentID)
					if d.Version != 1 || len(d.Raw) == 0 {
						t.Errorf("limit %d: agent %s due at version %d with %d bytes of card", limit, d.AgentID, d.Version, len(d.Raw))
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("limit %d: due %v, want %v", limit, got, want)
				}
			}
		})
	}
}
