package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// auditLog reads the whole audit log, newest first.
func auditLog(t *testing.T, s *catalog.Store) []catalog.AuditEntry {
	t.Helper()
	p, err := s.AuditLog(context.Background(), "", 500)
	if err != nil {
		t.Fatalf("AuditLog: %v", err)
	}
	return p.Entries
}

// Each write a user makes adds exactly one audit row naming who, what and
// which target, with the request it came from.
func TestAuditEachWriteOneRow(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		agent := upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card).Agent
		keyID := ""
		ann := catalog.User("sub-ann").For(catalog.Request{Email: "ann@example.com", DisplayName: "Ann",
			Role: "admin", ID: "req-1", ClientAddr: "192.0.2.7"})
		tests := []struct {
			name        string
			write       func() (targetID string, err error)
			action      string
			targetKind  string
			detailField string
		}{
			{"register", func() (string, error) {
				r, err := s.Upsert(ctx, ann, catalog.UpsertInput{CardURL: "https://weather.example.com/.well-known/agent.json", Card: mustParse(t, v02Card)})
				return r.Agent.ID, err
			}, catalog.ActionRegister, catalog.TargetAgent, "card_url"},
			{"refresh", func() (string, error) {
				_, err := s.RecordFetches(ctx, ann, []catalog.FetchOutcome{{AgentID: agent.ID, At: time.Now(), Status: 304,
					NotModified: true, Health: catalog.HealthUp, NextCheckAt: time.Now().Add(time.Hour)}})
				return agent.ID, err
			}, catalog.ActionRefresh, catalog.TargetAgent, "status"},
			{"pause", func() (string, error) { return agent.ID, s.SetPaused(ctx, ann, agent.ID, true) },
				catalog.ActionPause, catalog.TargetAgent, ""},
			{"resume", func() (string, error) { return agent.ID, s.SetPaused(ctx, ann, agent.ID, false) },
				catalog.ActionResume, catalog.TargetAgent, ""},
			{"add key", func() (string, error) {
				k, err := s.AddTrustedKey(ctx, ann, catalog.TrustedKey{KID: "k1", JWK: json.RawMessage(`{"kty":"OKP"}`),
					Thumbprint: "tp1", Origins: []string{"https://invoices.example.com"}})
				keyID = k.ID
				return k.ID, err
			}, catalog.ActionKeyAdd, catalog.TargetTrustedKey, "kid"},
			{"revoke key", func() (string, error) {
				_, err := s.RevokeTrustedKey(ctx, ann, keyID, time.Now())
				return keyID, err
			}, catalog.ActionKeyRevoke, catalog.TargetTrustedKey, "kid"},
			{"run", func() (string, error) {
				now := time.Now()
				return agent.ID, s.CreateRun(ctx, ann, catalog.Run{ID: "run-1", AgentID: agent.ID, State: "running", CreatedAt: now, UpdatedAt: now})
			}, catalog.ActionRun, catalog.TargetAgent, "run_id"},
			{"remove", func() (string, error) { return agent.ID, s.RemoveAgent(ctx, ann, agent.ID) },
				catalog.ActionRemove, catalog.TargetAgent, "card_url"},
		}
		for _, tt := range tests {
			before := len(auditLog(t, s))
			target, err := tt.write()
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			log := auditLog(t, s)
			if len(log) != before+1 {
				t.Fatalf("%s: audit log grew by %d rows, want 1", tt.name, len(log)-before)
			}
			e := log[0]
			want := catalog.AuditEntry{ID: e.ID, At: e.At, ActorKind: catalog.ActorUser, Subject: "sub-ann", DisplayName: "Ann",
				Email: "ann@example.com", Role: "admin", Action: tt.action, TargetKind: tt.targetKind, TargetID: target,
				Detail: e.Detail, RequestID: "req-1", ClientAddr: "192.0.2.7"}
			if !equalEntry(e, want) {
				t.Errorf("%s: entry = %+v\nwant %+v", tt.name, e, want)
			}
			var detail map[string]any
			if err := json.Unmarshal(e.Detail, &detail); err != nil {
				t.Errorf("%s: detail %s: %v", tt.name, e.Detail, err)
			}
			if _, ok := detail[tt.detailField]; tt.detailField != "" && !ok {
				t.Errorf("%s: detail %s lacks %q", tt.name, e.Detail, tt.detailField)
			}
			if time.Since(e.At) > time.Minute || e.At.Location() != time.UTC {
				t.Errorf("%s: at = %v, want a UTC time of now", tt.name, e.At)
			}
		}
	})
}

func equalEntry(a, b catalog.AuditEntry) bool {
	a.Detail, b.Detail = nil, nil
	return a.ID == b.ID && a.At.Equal(b.At) && a.ActorKind == b.ActorKind && a.Subject == b.Subject &&
		a.DisplayName == b.DisplayName && a.Email == b.Email && a.Role == b.Role && a.Action == b.Action &&
		a.TargetKind == b.TargetKind && a.TargetID == b.TargetID && a.RequestID == b.RequestID && a.ClientAddr == b.ClientAddr
}

// A write that fails leaves no audit row; background writes of the
// crawler and verifier leave none either, while the registry acting for a
// request (development mode's local admin) does.
func TestAuditFailedAndBackgroundWrites(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		agent := upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card).Agent
		ann := catalog.User("sub-ann")
		key := catalog.TrustedKey{KID: "k1", JWK: json.RawMessage(`{"kty":"OKP"}`), Thumbprint: "tp1", Origins: []string{"https://a.example"}}
		if _, err := s.AddTrustedKey(ctx, catalog.System("cli"), key); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		run := catalog.Run{ID: "run-1", AgentID: agent.ID, State: "running", CreatedAt: now, UpdatedAt: now}
		if err := s.CreateRun(ctx, catalog.System("cli"), run); err != nil {
			t.Fatal(err)
		}
		failing := []struct {
			name  string
			write func() error
			want  error
		}{
			{"pause unknown agent", func() error { return s.SetPaused(ctx, ann, "nope", true) }, catalog.ErrNotFound},
			{"remove unknown agent", func() error { return s.RemoveAgent(ctx, ann, "nope") }, catalog.ErrNotFound},
			{"revoke unknown key", func() error { _, err := s.RevokeTrustedKey(ctx, ann, "nope", now); return err }, catalog.ErrNotFound},
			{"add duplicate key", func() error { _, err := s.AddTrustedKey(ctx, ann, key); return err }, catalog.ErrConflict},
			{"run with a used id", func() error { return s.CreateRun(ctx, ann, run) }, catalog.ErrConflict},
			{"run of unknown agent", func() error {
				r := run
				r.ID, r.AgentID = "run-2", "nope"
				return s.CreateRun(ctx, ann, r)
			}, catalog.ErrNotFound},
			{"upsert without card", func() error {
				_, err := s.Upsert(ctx, ann, catalog.UpsertInput{CardURL: "https://b.example/"})
				return err
			}, catalog.ErrInvalidQuery},
		}
		for _, tt := range failing {
			if err := tt.write(); !errors.Is(err, tt.want) {
				t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
			}
		}
		// Background writes: nobody asked for them.
		if _, err := s.RecordFetches(ctx, catalog.System("crawler"), []catalog.FetchOutcome{{AgentID: agent.ID, At: now,
			Status: 304, NotModified: true, Health: catalog.HealthUp, NextCheckAt: now.Add(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Upsert(ctx, catalog.System("crawler"), catalog.UpsertInput{CardURL: "https://c.example/", Card: mustParse(t, v10Card)}); err != nil {
			t.Fatal(err)
		}
		if log := auditLog(t, s); len(log) != 0 {
			t.Fatalf("audit log = %+v, want empty", log)
		}
		local := catalog.System("local-admin").For(catalog.Request{Role: "admin", ID: "req-9"})
		if err := s.SetPaused(ctx, local, agent.ID, true); err != nil {
			t.Fatal(err)
		}
		log := auditLog(t, s)
		if len(log) != 1 || log[0].ActorKind != catalog.ActorSystem || log[0].Subject != "local-admin" || log[0].RequestID != "req-9" {
			t.Fatalf("audit log = %+v, want the local admin's pause", log)
		}
	})
}

// The log pages newest first by cursor, and a forged cursor is refused.
func TestAuditLogPages(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		agent := upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card).Agent
		for i := range 5 {
			if err := s.SetPaused(ctx, catalog.User("sub-ann"), agent.ID, i%2 == 0); err != nil {
				t.Fatal(err)
			}
		}
		var actions []string
		cursor := ""
		for pages := 0; ; pages++ {
			p, err := s.AuditLog(ctx, cursor, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range p.Entries {
				actions = append(actions, e.Action)
			}
			if p.Next == "" {
				if pages != 2 {
					t.Errorf("pages = %d, want 3", pages+1)
				}
				break
			}
			cursor = p.Next
		}
		want := "agent.pause agent.resume agent.pause agent.resume agent.pause"
		if got := strings.Join(actions, " "); got != want {
			t.Errorf("actions newest first = %s, want %s", got, want)
		}
		for _, bad := range []string{"x", "-1", "0"} {
			if _, err := s.AuditLog(ctx, bad, 2); !errors.Is(err, catalog.ErrInvalidQuery) {
				t.Errorf("cursor %q: err = %v, want ErrInvalidQuery", bad, err)
			}
		}
	})
}

// Failing hosts group agents by host, most recent failure first, with
// the class of that failure; an agent whose last check succeeded is not
// failing.
func TestFailingHosts(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		a := upsert(t, s, "https://hub.example/a/.well-known/agent-card.json", v03Card).Agent.ID
		b := upsert(t, s, "https://hub.example/b/.well-known/agent-card.json", v02Card).Agent.ID
		c := upsert(t, s, "https://solo.example/.well-known/agent-card.json", v10Card).Agent.ID
		d := upsert(t, s, "https://fine.example/.well-known/agent-card.json", v10Card).Agent.ID
		t0 := time.Now().UTC().Truncate(time.Second)
		fail := func(id string, at time.Time, class string) catalog.FetchOutcome {
			return catalog.FetchOutcome{AgentID: id, At: at, Class: class, Message: "m", ConsecutiveFailures: 1,
				Health: catalog.HealthDown, NextCheckAt: at.Add(time.Hour)}
		}
		if _, err := s.RecordFetches(ctx, catalog.System("crawler"), []catalog.FetchOutcome{
			fail(a, t0.Add(-3*time.Minute), "timeout"), fail(b, t0.Add(-time.Minute), "http_5xx"),
			fail(c, t0.Add(-2*time.Minute), "dns"),
			{AgentID: d, At: t0, Status: 200, NotModified: true, Health: catalog.HealthUp, NextCheckAt: t0.Add(time.Hour)},
		}); err != nil {
			t.Fatal(err)
		}
		got, err := s.FailingHosts(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := []catalog.FailingHost{
			{Host: "hub.example", Agents: 2, LastErrorClass: "http_5xx", LastErrorAt: t0.Add(-time.Minute)},
			{Host: "solo.example", Agents: 1, LastErrorClass: "dns", LastErrorAt: t0.Add(-2 * time.Minute)},
		}
		if len(got) != len(want) {
			t.Fatalf("failing hosts = %+v, want %+v", got, want)
		}
		for i := range want {
			if got[i].Host != want[i].Host || got[i].Agents != want[i].Agents || got[i].LastErrorClass != want[i].LastErrorClass ||
				!got[i].LastErrorAt.Equal(want[i].LastErrorAt) {
				t.Errorf("failing host %d = %+v, want %+v", i, got[i], want[i])
			}
		}
		if one, err := s.FailingHosts(ctx, 1); err != nil || len(one) != 1 {
			t.Errorf("limit 1: %+v, %v", one, err)
		}
	})
}

// The audit row is part of the write's transaction: when it cannot be
// written, the change is rolled back with it.
func TestAuditFailureRollsBackTheWrite(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		agent := upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card).Agent
		if err := s.ExecForTest(ctx, "DROP TABLE audit_log"); err != nil {
			t.Fatal(err)
		}
		ann := catalog.User("sub-ann")
		now := time.Now()
		writes := map[string]func() error{
			"pause":  func() error { return s.SetPaused(ctx, ann, agent.ID, true) },
			"remove": func() error { return s.RemoveAgent(ctx, ann, agent.ID) },
			"register": func() error {
				_, err := s.Upsert(ctx, ann, catalog.UpsertInput{CardURL: "https://weather.example.com/.well-known/agent.json", Card: mustParse(t, v02Card)})
				return err
			},
			"add key": func() error {
				_, err := s.AddTrustedKey(ctx, ann, catalog.TrustedKey{KID: "k1", JWK: json.RawMessage(`{}`), Thumbprint: "tp", Origins: []string{"*"}})
				return err
			},
			"refresh": func() error {
				_, err := s.RecordFetches(ctx, ann, []catalog.FetchOutcome{{AgentID: agent.ID, At: now, Status: 304,
					NotModified: true, Health: catalog.HealthUp, NextCheckAt: now.Add(time.Hour)}})
				return err
			},
			"run": func() error {
				return s.CreateRun(ctx, ann, catalog.Run{ID: "r1", AgentID: agent.ID, State: "running", CreatedAt: now, UpdatedAt: now})
			},
		}
		for name, write := range writes {
			if err := write(); err == nil {
				t.Errorf("%s succeeded without its audit row", name)
			}
		}
		v, err := s.AgentView(ctx, catalog.ScopeAll, agent.ID, now)
		if err != nil {
			t.Fatalf("the agent is gone although its removal failed: %v", err)
		}
		if v.Health.Paused || v.Health.LastCheckAt != nil {
			t.Errorf("health %+v: the pause or the check stayed although its audit row failed", v.Health)
		}
		if n, err := s.Count(ctx); err != nil || n != 1 {
			t.Errorf("agents = %d (%v), want 1: the registration stayed", n, err)
		}
		if keys, err := s.TrustedKeys(ctx); err != nil || len(keys) != 0 {
			t.Errorf("keys = %v (%v), want none", keys, err)
		}
		if _, err := s.Run(ctx, catalog.ScopeAll, "r1"); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("run r1: %v, want ErrNotFound", err)
		}
	})
}

// A batch of registrations is one row per card, in one transaction.
func TestAuditBatchOneRowPerCard(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		res, err := s.UpsertBatch(ctx, catalog.User("sub-ann"), []catalog.UpsertInput{
			{CardURL: "https://a.example/.well-known/agent-card.json", Card: mustParse(t, v03Card)},
			{CardURL: "https://b.example/.well-known/agent-card.json", Card: mustParse(t, v10Card)},
		})
		if err != nil {
			t.Fatal(err)
		}
		log := auditLog(t, s)
		if len(log) != 2 {
			t.Fatalf("audit log = %+v, want two rows", log)
		}
		got := map[string]bool{log[0].TargetID: true, log[1].TargetID: true}
		if !got[res[0].Agent.ID] || !got[res[1].Agent.ID] || log[0].Action != catalog.ActionRegister || log[1].Action != catalog.ActionRegister {
			t.Errorf("audit log = %+v, want a registration of each", log)
		}
	})
}

// A removal reaches mirrors through the change feed, as a card that
// answered 410 Gone does.
func TestDeleteAgentInChangeFeed(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		agent := upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card).Agent
		if err := s.RemoveAgent(ctx, catalog.User("sub-ann"), agent.ID); err != nil {
			t.Fatal(err)
		}
		changes, err := s.Changes(ctx, catalog.ScopeAll, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		last := changes[len(changes)-1]
		if last.Kind != catalog.ChangeRemoved || last.AgentID != agent.ID || last.CardURL != agent.CardURL || last.Version != agent.CurrentVersion {
			t.Errorf("last change = %+v, want the removal of %s", last, agent.ID)
		}
	})
}
