package catalog_test

import (
	"context"
	"errors"
	"reflect"
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
		if err := s.UpdateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		// A second update from the same revision lost the race.
		if err := s.UpdateRun(ctx, run); !errors.Is(err, catalog.ErrConflict) {
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
		check.ID, check.Kind = "c1", catalog.RunKindCheck
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
		if err := s.UpdateRun(ctx, run); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("UpdateRun of pruned run = %v, want ErrNotFound", err)
		}
	})
}
