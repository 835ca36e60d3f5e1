package catalog_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

func TestRunLifecycle(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		agent := upsert(t, s, "https://translate.example.org/.well-known/agent-card.json", v10Card).Agent
		t0 := time.Date(2026, 3, 1, 9, 0, 0, 123456000, time.UTC)
		run := catalog.Run{ID: "r1", AgentID: agent.ID, Kind: catalog.RunKindRun, Subject: "ann", State: "running",
			Transcript: []byte(`{"turns":[]}`), CreatedAt: t0, UpdatedAt: t0}
		if err := s.CreateRun(ctx, catalog.System("test"), run); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateRun(ctx, catalog.System("test"), run); !errors.Is(err, catalog.ErrConflict) {
			t.Errorf("second CreateRun = %v, want ErrConflict", err)
		}
		orphan := run
		orphan.ID, orphan.AgentID = "r2", "no-such-agent"
		if err := s.CreateRun(ctx, catalog.System("test"), orphan); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("CreateRun of unknown agent = %v, want ErrNotFound", err)
		}

		run.State, run.TaskID, run.ContextID, run.InterfaceURL = "TASK_STATE_COMPLETED", "t1", "c1", "https://translate.example.org/rpc"
		run.Binding, run.ProtocolVersion, run.Transcript, run.UpdatedAt = "JSONRPC", "1.0", []byte(`{"turns":[{"n":1}]}`), t0.Add(time.Minute)
		if err := s.UpdateRun(ctx, catalog.System("test"), run, ""); err != nil {
			t.Fatal(err)
		}
		// A second update from the same revision lost the race.
		if err := s.UpdateRun(ctx, catalog.System("test"), run, ""); !errors.Is(err, catalog.ErrConflict) {
			t.Errorf("stale UpdateRun = %v, want ErrConflict", err)
		}
		run.Revision++
		got, err := s.Run(ctx, catalog.ScopeAll, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, run) {
			t.Errorf("Run = %+v\nwant %+v", got, run)
		}
		later := run
		later.ID, later.CreatedAt, later.UpdatedAt = "r3", t0.Add(time.Hour), t0.Add(time.Hour)
		if err := s.CreateRun(ctx, catalog.System("test"), later); err != nil {
			t.Fatal(err)
		}
		check := later
		check.ID, check.Kind, check.State = "c1", catalog.RunKindCheck, catalog.WorksSome
		if err := s.CreateRun(ctx, catalog.System("test"), check); err != nil {
			t.Fatal(err)
		}
		list, err := s.AgentRuns(ctx, catalog.ScopeAll, agent.ID, catalog.RunKindRun, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0].ID != "r3" || list[1].ID != "r1" {
			t.Errorf("AgentRuns = %+v, want r3 then r1", list)
		}
		checks, err := s.AgentRuns(ctx, catalog.ScopeAll, agent.ID, catalog.RunKindCheck, 1)
		if err != nil || len(checks) != 1 || checks[0].ID != "c1" || checks[0].Kind != catalog.RunKindCheck {
			t.Errorf("checks = %+v, %v; want c1", checks, err)
		}

		n, err := s.PruneRuns(ctx, t0.Add(30*time.Minute))
		if err != nil || n != 1 {
			t.Errorf("PruneRuns = %d, %v; want 1", n, err)
		}
		if _, err := s.Run(ctx, catalog.ScopeAll, "r1"); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("pruned run: %v, want ErrNotFound", err)
		}
		if err := s.UpdateRun(ctx, catalog.System("test"), run, ""); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("UpdateRun of pruned run = %v, want ErrNotFound", err)
		}
	})
}

// A check sets the agent's works facet in this store's index at once and
// in another replica's after Sync; pruning every check makes the agent
// unchecked again.
func TestCheckSetsWorksFacet(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			a, b := catalogtest.Open(t, d), catalogtest.Open(t, d)
			ctx := context.Background()
			for _, s := range []*catalog.Store{a, b} {
				if err := s.WarmIndex(ctx); err != nil {
					t.Fatal(err)
				}
			}
			agents := seed(t, a)
			translator, translatorName := agents["translator"].Agent.ID, agents["translator"].Agent.Card.Name
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			works := func(s *catalog.Store, value string) []string {
				t.Helper()
				p, err := s.Search(ctx, catalog.Query{Filters: map[string][]string{catalog.FieldWorks: {value}}})
				if err != nil {
					t.Fatal(err)
				}
				return ids(p)
			}
			if got := works(a, catalog.WorksUnchecked); len(got) != 3 {
				t.Fatalf("unchecked before any check = %v, want all three agents", got)
			}
			check := func(id, state string, at time.Time) error {
				return a.CreateRun(ctx, catalog.System("test"), catalog.Run{ID: id, AgentID: translator, Kind: catalog.RunKindCheck,
					Subject: "ann", State: state, Transcript: []byte(`{}`), CreatedAt: at, UpdatedAt: at})
			}
			t0 := time.Now().Add(-time.Hour).UTC()
			if err := check("c1", "TASK_STATE_COMPLETED", t0); !errors.Is(err, catalog.ErrInvalidQuery) {
				t.Errorf("check with a task state = %v, want ErrInvalidQuery", err)
			}
			if err := check("c1", catalog.WorksSome, t0); err != nil {
				t.Fatal(err)
			}
			if got := works(a, catalog.WorksSome); !slices.Equal(got, []string{translatorName}) {
				t.Errorf("works=some on the writer = %v, want [%s]", got, translatorName)
			}
			p, err := a.Search(ctx, catalog.Query{})
			if err != nil {
				t.Fatal(err)
			}
			wantFacet := []catalog.FacetCount{{Value: catalog.WorksUnchecked, Count: 2}, {Value: catalog.WorksSome, Count: 1}}
			if !reflect.DeepEqual(p.Facets[catalog.FieldWorks], wantFacet) {
				t.Errorf("works facet = %+v, want %+v", p.Facets[catalog.FieldWorks], wantFacet)
			}
			if got := works(b, catalog.WorksSome); len(got) != 0 {
				t.Errorf("replica saw the check before Sync: %v", got)
			}
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if got := works(b, catalog.WorksSome); !slices.Equal(got, []string{translatorName}) {
				t.Errorf("works=some on the replica after Sync = %v, want [%s]", got, translatorName)
			}

			// The latest check wins; a new card version keeps it (a check is
			// of the agent, and the next one is a tester's call).
			if err := check("c2", catalog.WorksAll, t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			upsert(t, a, "https://translate.example.org/.well-known/agent-card.json", strings.Replace(v10Card, `"1.0.0"`, `"1.0.1"`, 1))
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			for name, s := range map[string]*catalog.Store{"writer": a, "replica": b} {
				if got := works(s, catalog.WorksAll); !slices.Equal(got, []string{translatorName}) {
					t.Errorf("%s: works=all = %v, want [%s]", name, got, translatorName)
				}
				if got := works(s, catalog.WorksSome); len(got) != 0 {
					t.Errorf("%s: works=some after a newer check = %v", name, got)
				}
			}

			if _, err := a.PruneRuns(ctx, time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			for name, s := range map[string]*catalog.Store{"writer": a, "replica": b} {
				if got := works(s, catalog.WorksUnchecked); len(got) != 3 {
					t.Errorf("%s: unchecked after pruning every check = %v, want all three", name, got)
				}
			}
		})
	}
}
