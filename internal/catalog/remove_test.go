package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// admin is a signed-in admin acting through a request, so audited.
var admin = catalog.User("sub-root").For(catalog.Request{DisplayName: "Root Admin", Role: "admin", ID: "req-1"})

// A removed agent keeps its row and history but leaves search, the crawl,
// verification and every write but a new registration.
func TestRemoveAgentKeepsHistory(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		seed(t, s)
		v1 := upsert(t, s, invoiceURL, v03Card)
		v2 := upsert(t, s, invoiceURL, strings.Replace(v03Card, `"2.1.0"`, `"2.2.0"`, 1))
		id := v1.Agent.ID
		if v2.Agent.ID != id || v2.Agent.CurrentVersion != 2 {
			t.Fatalf("second version: %+v", v2.Agent)
		}
		before, err := s.Changes(ctx, catalog.ScopeAll, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}

		if err := s.RemoveAgent(ctx, admin, id); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveAgent(ctx, admin, id); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("removing twice: %v, want ErrNotFound", err)
		}

		// History: the row, versions and raw bytes stay, marked removed.
		v, err := s.AgentView(ctx, catalog.ScopeAll, id, time.Now())
		if err != nil {
			t.Fatalf("AgentView of a removed agent: %v", err)
		}
		if v.Agent.Removed == nil || v.Agent.Removed.By != "Root Admin" || v.Agent.Removed.At.IsZero() || len(v.Versions) != 2 {
			t.Errorf("removed agent view: removed %+v, %d versions", v.Agent.Removed, len(v.Versions))
		}
		if v.Health.NextCheckAt != nil {
			t.Errorf("a removed agent's health report shows a next check at %v", v.Health.NextCheckAt)
		}
		if r, err := s.AgentRemoval(ctx, id); err != nil || r == nil || r.By != "Root Admin" {
			t.Errorf("AgentRemoval = %+v, %v", r, err)
		}
		if raw, err := s.Version(ctx, catalog.ScopeAll, id, 1); err != nil || string(raw.Raw) != v03Card {
			t.Errorf("version 1 of the removed agent: %v", err)
		}
		if _, err := s.AgentRemoval(ctx, "nope"); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("AgentRemoval of an unknown id: %v", err)
		}

		checkRemovedHidden(t, s, id)

		// Search: gone, the others stay.
		p, err := s.Search(ctx, catalog.Query{Text: "invoice"})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 0 {
			t.Errorf("search finds the removed agent: %v", ids(p))
		}
		if p, err := s.Search(ctx, catalog.Query{}); err != nil || p.Total != 2 {
			t.Errorf("search lists %d agents (%v), want the 2 others", p.Total, err)
		}

		checkRemovedLeftAlone(t, s, id)

		// The change feed and the admin's list record it.
		after, err := s.Changes(ctx, catalog.ScopeAll, before[len(before)-1].Seq, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != 1 || after[0].Kind != catalog.ChangeRemoved || after[0].AgentID != id || after[0].Version != 2 {
			t.Errorf("change feed after removal = %+v, want one removed entry", after)
		}
		l, err := s.RemovedAgents(ctx, "", 10)
		if err != nil || len(l.Agents) != 1 || l.Agents[0].ID != id || l.Agents[0].Name != "Invoice Extractor" ||
			l.Agents[0].CurrentVersion != 2 || l.Next != "" {
			t.Errorf("RemovedAgents = %+v (%v)", l, err)
		}
	})
}

// checkRemovedHidden: every scope but the one that sees everything
// (admins) reads removed agent id as missing, in every read; the change
// feed tells them only that it is gone.
func checkRemovedHidden(t *testing.T, s *catalog.Store, id string) {
	t.Helper()
	ctx := context.Background()
	for _, sc := range []catalog.Scope{{}, {Review: true}, {Review: true, Groups: []string{"finance"}}} {
		if _, err := s.Agent(ctx, sc, id); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("Agent(%+v) of a removed agent: %v, want ErrNotFound", sc, err)
		}
		if _, err := s.AgentView(ctx, sc, id, time.Now()); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("AgentView(%+v) of a removed agent: %v, want ErrNotFound", sc, err)
		}
		if _, err := s.Versions(ctx, sc, id); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("Versions(%+v) of a removed agent: %v, want ErrNotFound", sc, err)
		}
		if _, err := s.RawCard(ctx, sc, id); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("RawCard(%+v) of a removed agent: %v, want ErrNotFound", sc, err)
		}
		feed, err := s.Changes(ctx, sc, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, c := range feed {
			if c.AgentID == id {
				kinds = append(kinds, c.Kind)
			}
		}
		if !slices.Equal(kinds, []string{catalog.ChangeRemoved}) {
			t.Errorf("change feed for %+v shows the removed agent as %v, want only its removal", sc, kinds)
		}
	}
}

// checkRemovedLeftAlone: the crawler and the verifier never claim removed
// agent id, and no write of theirs lands on it.
func checkRemovedLeftAlone(t *testing.T, s *catalog.Store, id string) {
	t.Helper()
	ctx := context.Background()
	claimed, err := s.ClaimDue(ctx, time.Now().Add(time.Hour), 100, "test", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range claimed {
		if c.AgentID == id {
			t.Error("the crawler claimed the removed agent")
		}
	}
	if q, err := s.CrawlQueue(ctx, time.Now().Add(time.Hour)); err != nil || q.Due != 0 {
		t.Errorf("crawl queue counts %d due (%v); the others are leased, the removed one must not count", q.Due, err)
	}
	due, err := s.DueVerifications(ctx, time.Now().Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range due {
		if d.AgentID == id {
			t.Error("the verifier is due to check the removed agent")
		}
	}
	if _, err := s.CrawlTarget(ctx, id); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("CrawlTarget of the removed agent: %v, want ErrNotFound", err)
	}
	if err := s.SetPaused(ctx, admin, id, true); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("pausing the removed agent: %v, want ErrNotFound", err)
	}
	// A check under way when the agent was removed changes nothing.
	changed := mustParse(t, strings.Replace(v03Card, `"2.1.0"`, `"9.9.9"`, 1))
	if _, err := s.RecordFetches(ctx, catalog.System("crawler"), []catalog.FetchOutcome{{AgentID: id, At: time.Now(),
		Status: 200, Card: changed, Health: catalog.HealthUp, NextCheckAt: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Upsert(ctx, catalog.System("crawler"), catalog.UpsertInput{CardURL: invoiceURL, Card: changed,
		Source: catalog.SourceCrawl}); err != nil {
		t.Fatal(err)
	}
	if v, err := s.AgentView(ctx, catalog.ScopeAll, id, time.Now()); err != nil || v.Agent.Removed == nil || len(v.Versions) != 2 {
		t.Errorf("after the crawler's late writes: removed %+v, %d versions (%v); want still removed with 2", v.Agent.Removed, len(v.Versions), err)
	}
	if p, _ := s.Search(ctx, catalog.Query{Text: "invoice"}); p.Total != 0 {
		t.Error("a late crawler write put the removed agent back in search")
	}
}

// Registering the card URL of a removed agent again restores it: same id,
// history kept, a new version only if the bytes changed, back in search
// and the crawl, the restore in the change feed and the audit log.
func TestReRegisterRestores(t *testing.T) {
	tests := []struct {
		name        string
		raw         string
		source      string
		wantVersion int
	}{
		{"same bytes, by URL", v03Card, catalog.SourceURL, 1},
		{"changed bytes, by URL", strings.Replace(v03Card, `"2.1.0"`, `"3.0.0"`, 1), catalog.SourceURL, 2},
		{"same bytes, by import", v03Card, catalog.SourceImport, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
				ctx := context.Background()
				orig := upsert(t, s, invoiceURL, v03Card)
				id := orig.Agent.ID
				if err := s.RemoveAgent(ctx, admin, id); err != nil {
					t.Fatal(err)
				}
				res, err := s.Upsert(ctx, admin, catalog.UpsertInput{CardURL: invoiceURL, Card: mustParse(t, tt.raw), Source: tt.source})
				if err != nil {
					t.Fatal(err)
				}
				if res.Agent.ID != id || !res.Restored || res.Created || res.Agent.Removed != nil ||
					res.Agent.CurrentVersion != tt.wantVersion || res.NewVersion != (tt.wantVersion == 2) {
					t.Fatalf("restore result: id %s (want %s), restored %v, created %v, new version %v, version %d (want %d)",
						res.Agent.ID, id, res.Restored, res.Created, res.NewVersion, res.Agent.CurrentVersion, tt.wantVersion)
				}
				v, err := s.AgentView(ctx, catalog.ScopeAll, id, time.Now())
				if err != nil || v.Agent.Removed != nil || len(v.Versions) != tt.wantVersion {
					t.Errorf("restored agent: removed %+v, %d versions (%v)", v.Agent.Removed, len(v.Versions), err)
				}
				if p, err := s.Search(ctx, catalog.Query{Text: "invoice"}); err != nil || p.Total != 1 || p.Items[0].ID != id {
					t.Errorf("search after restore: %v (%v)", ids(p), err)
				}
				claimed, err := s.ClaimDue(ctx, time.Now().Add(time.Hour), 10, "test", time.Minute)
				if err != nil || len(claimed) != 1 || claimed[0].AgentID != id {
					t.Errorf("crawl after restore claimed %+v (%v)", claimed, err)
				}
				if l, err := s.RemovedAgents(ctx, "", 10); err != nil || len(l.Agents) != 0 {
					t.Errorf("removed agents after restore: %+v (%v)", l.Agents, err)
				}
				feed, err := s.Changes(ctx, catalog.ScopeAll, 0, 100)
				if err != nil {
					t.Fatal(err)
				}
				var kinds []string
				for _, c := range feed {
					kinds = append(kinds, c.Kind)
				}
				want := "created removed restored"
				if tt.wantVersion == 2 {
					want += " updated"
				}
				if strings.Join(kinds, " ") != want {
					t.Errorf("change feed kinds %v, want %s", kinds, want)
				}
				log, err := s.AuditLog(ctx, "", 10)
				if err != nil {
					t.Fatal(err)
				}
				var actions []string
				for _, e := range log.Entries {
					actions = append(actions, e.Action)
				}
				// Newest first: the register that restored, the restore, the removal.
				if strings.Join(actions, " ") != "agent.register agent.restore agent.remove" {
					t.Errorf("audit actions %v", actions)
				}
				upsert(t, s, "https://other.example/.well-known/agent-card.json", v02Card)
				if err := s.SetPaused(ctx, admin, upsert(t, s, "https://other.example/x", v10Card).Agent.ID, true); err != nil {
					t.Fatal(err)
				}
				own, err := s.AgentAudit(ctx, id, 2)
				if err != nil || len(own) != 2 || own[0].Action != catalog.ActionRegister || own[1].Action != catalog.ActionRestore {
					t.Errorf("AgentAudit(2) = %+v (%v), want the agent's own two newest entries", own, err)
				}
			})
		})
	}
}

// The list of removed agents pages by removal time.
func TestRemovedAgentsPages(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		all := seed(t, s)
		for _, k := range []string{"weather", "invoice", "translator"} {
			if err := s.RemoveAgent(ctx, admin, all[k].Agent.ID); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		cursor := ""
		for range 4 {
			p, err := s.RemovedAgents(ctx, cursor, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range p.Agents {
				got = append(got, a.ID)
			}
			if cursor = p.Next; cursor == "" {
				break
			}
		}
		want := []string{all["translator"].Agent.ID, all["invoice"].Agent.ID, all["weather"].Agent.ID}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("pages list %v, want most recent first %v", got, want)
		}
		if _, err := s.RemovedAgents(ctx, "12.x", 2); !errors.Is(err, catalog.ErrInvalidQuery) {
			t.Errorf("bad cursor: %v, want ErrInvalidQuery", err)
		}
	})
}

// A removal racing a card write of the same agent (a registration, a
// crawler check) leaves the index agreeing with the row, whichever
// commits first: listed and found, or removed and not found.
func TestRemoveRacesWrites(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		for i := range 20 {
			u := fmt.Sprintf("https://race%d.example/.well-known/agent-card.json", i)
			id := upsert(t, s, u, v03Card).Agent.ID
			source := catalog.SourceURL
			if i%2 == 1 {
				source = catalog.SourceCrawl
			}
			changed := mustParse(t, strings.Replace(v03Card, `"2.1.0"`, fmt.Sprintf(`"3.%d.0"`, i), 1))
			var wg sync.WaitGroup
			wg.Go(func() {
				if err := s.RemoveAgent(ctx, admin, id); err != nil {
					t.Error(err)
				}
			})
			wg.Go(func() {
				if _, err := s.Upsert(ctx, admin, catalog.UpsertInput{CardURL: u, Card: changed, Source: source}); err != nil {
					t.Error(err)
				}
			})
			wg.Wait()
			r, err := s.AgentRemoval(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Search(ctx, catalog.Query{Filters: map[string][]string{catalog.FieldProvider: {"Acme Finance"}}, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			found := slices.ContainsFunc(p.Items, func(x catalog.Summary) bool { return x.ID == id })
			if found == (r != nil) {
				t.Fatalf("race %d (%s write): removed %v but found in search %v", i, source, r != nil, found)
			}
		}
	})
}
