package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

const invoiceURL = "https://invoices.example.com/.well-known/agent-card.json"

// searchIDs runs a filter-only search and returns the ids found.
func searchIDs(t *testing.T, s *catalog.Store, filters map[string][]string) []string {
	t.Helper()
	p, err := s.Search(context.Background(), catalog.Query{Filters: filters})
	if err != nil {
		t.Fatalf("search %v: %v", filters, err)
	}
	return ids(p)
}

func facetValues(t *testing.T, s *catalog.Store, field string) []string {
	t.Helper()
	p, err := s.Search(context.Background(), catalog.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range p.Facets[field] {
		out = append(out, f.Value)
	}
	slices.Sort(out)
	return out
}

// Annotations are set, replaced, kept by a new card version and by a
// removal and registration again, and searched by label, owner team and
// classification; each change is one audit row saying what changed.
func TestAnnotations(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		agents := seed(t, s)
		inv := agents["invoice"].Agent
		if err := s.WarmIndex(ctx); err != nil {
			t.Fatal(err)
		}
		editor := catalog.User("sub-ed").For(catalog.Request{DisplayName: "Ed", Role: "editor"})
		got, err := s.SetAnnotations(ctx, editor, catalog.ScopeAll, inv.ID, catalog.Annotations{
			OwnerTeam: "  Payments Platform ", Contact: "payments@example.com", Classification: "confidential",
			Labels: map[string]string{"env": "prod", "cost-center": "4711"}, Notes: "Owned since the 2025 reorg.\nAsk Ed."})
		if err != nil {
			t.Fatal(err)
		}
		if got.OwnerTeam != "Payments Platform" || got.ChangedBy != "sub-ed" || got.ChangedAt.IsZero() {
			t.Fatalf("stored annotations = %+v", got)
		}
		view := func() catalog.Annotations {
			t.Helper()
			v, err := s.AgentView(ctx, catalog.ScopeAll, inv.ID, got.ChangedAt)
			if err != nil {
				t.Fatal(err)
			}
			return v.Annotations
		}
		if v := view(); !reflect.DeepEqual(v, got) {
			t.Fatalf("AgentView annotations = %+v, want %+v", v, got)
		}
		only := []string{"Invoice Extractor"} // ids() lists names
		checkAnnotationFilters(t, s, only)

		// Replacing drops what is not given again.
		got, err = s.SetAnnotations(ctx, editor, catalog.ScopeAll, inv.ID, catalog.Annotations{OwnerTeam: "Payments Platform",
			Labels: map[string]string{"env": "staging"}})
		if err != nil {
			t.Fatal(err)
		}
		if ids := searchIDs(t, s, map[string][]string{"label": {"env:prod"}}); len(ids) != 0 {
			t.Errorf("replaced label still matches: %v", ids)
		}
		if ids := searchIDs(t, s, map[string][]string{"classification": {"confidential"}}); len(ids) != 0 {
			t.Errorf("cleared classification still matches: %v", ids)
		}
		if ids := searchIDs(t, s, map[string][]string{"label": {"env:staging"}}); !slices.Equal(ids, only) {
			t.Errorf("new label: %v", ids)
		}

		checkAnnotateAudit(t, s, inv.ID)
		// The same annotations again write nothing.
		if _, err := s.SetAnnotations(ctx, editor, catalog.ScopeAll, inv.ID, got); err != nil {
			t.Fatal(err)
		}
		if n := len(auditLog(t, s)); n != 2 {
			t.Errorf("setting unchanged annotations added audit rows: %d", n)
		}

		// A new card version keeps them.
		upsert(t, s, invoiceURL, strings.Replace(v03Card, "Reads invoices", "Reads all invoices", 1))
		if v := view(); !reflect.DeepEqual(v, got) {
			t.Errorf("after a new version: %+v, want %+v", v, got)
		}
		if ids := searchIDs(t, s, map[string][]string{"label": {"env:staging"}}); !slices.Equal(ids, only) {
			t.Errorf("after a new version, label matches %v", ids)
		}

		// Removal and registration again: the same agent and annotations.
		if err := s.RemoveAgent(ctx, testActor, inv.ID); err != nil {
			t.Fatal(err)
		}
		again := upsert(t, s, invoiceURL, v03Card).Agent
		if ids := searchIDs(t, s, map[string][]string{"owner_team": {"Payments Platform"}}); !slices.Equal(ids, only) {
			t.Errorf("after registering again, owner team matches %v", ids)
		}
		v, err := s.AgentView(ctx, catalog.ScopeAll, again.ID, got.ChangedAt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v.Annotations, got) {
			t.Errorf("after registering again: %+v, want %+v", v.Annotations, got)
		}

		// Clearing removes every facet.
		cleared, err := s.SetAnnotations(ctx, editor, catalog.ScopeAll, again.ID, catalog.Annotations{})
		if err != nil {
			t.Fatal(err)
		}
		if !cleared.IsZero() || !cleared.ChangedAt.IsZero() {
			t.Errorf("cleared = %+v", cleared)
		}
		if fv := facetValues(t, s, "label"); len(fv) != 0 {
			t.Errorf("label facet after clearing = %v", fv)
		}

		if _, err := s.SetAnnotations(ctx, editor, catalog.ScopeAll, "no-such-agent", got); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("unknown agent: err = %v, want ErrNotFound", err)
		}
	})
}

// checkAnnotationFilters: the first annotations set on the invoice agent
// (only) are found by every spelling of their label, owner team and
// classification filters, and nothing else is.
func checkAnnotationFilters(t *testing.T, s *catalog.Store, only []string) {
	t.Helper()
	ctx := context.Background()
	for _, f := range []map[string][]string{
		{"label": {"env:prod"}}, {"label": {"ENV:Prod"}}, {"label": {"env"}}, {"label": {"cost-center:4711"}},
		{"owner_team": {"payments platform"}}, {"classification": {"confidential"}},
	} {
		if ids := searchIDs(t, s, f); !slices.Equal(ids, only) {
			t.Errorf("filter %v: %v, want %v", f, ids, only)
		}
	}
	for _, f := range []map[string][]string{{"label": {"env:dev"}}, {"label": {"env:prod", "nope:x"}}} {
		if ids := searchIDs(t, s, f); len(ids) != 0 {
			t.Errorf("filter %v matched %v", f, ids)
		}
	}
	if fv := facetValues(t, s, "label"); !slices.Equal(fv, []string{"cost-center:4711", "env:prod"}) {
		t.Errorf("label facet = %v", fv)
	}
	if _, err := s.Search(ctx, catalog.Query{Filters: map[string][]string{"label": {"Bad Key:x"}}}); !errors.Is(err, catalog.ErrInvalidQuery) {
		t.Errorf("label filter with a bad key: err = %v, want ErrInvalidQuery", err)
	}
}

// checkAnnotateAudit: the two annotation changes of agent id are two audit
// rows, the first naming what changed but not the notes' text.
func checkAnnotateAudit(t *testing.T, s *catalog.Store, id string) {
	t.Helper()
	entries := auditLog(t, s)
	if len(entries) != 2 || entries[0].Action != catalog.ActionAnnotate || entries[0].TargetID != id || entries[0].Subject != "sub-ed" {
		t.Fatalf("audit log = %+v, want two %s rows", entries, catalog.ActionAnnotate)
	}
	var detail map[string]any
	if err := json.Unmarshal(entries[0].Detail, &detail); err != nil {
		t.Fatal(err)
	}
	if _, ok := detail["owner_team"]; ok {
		t.Errorf("unchanged owner team in the audit detail: %s", entries[0].Detail)
	}
	for _, k := range []string{"contact", "classification", "notes", "labels", "card_url"} {
		if _, ok := detail[k]; !ok {
			t.Errorf("audit detail lacks %s: %s", k, entries[0].Detail)
		}
	}
	if strings.Contains(string(entries[0].Detail), "reorg") {
		t.Errorf("audit detail holds the notes' text: %s", entries[0].Detail)
	}
}

// Refused input names its field and stores nothing.
func TestAnnotationsRefused(t *testing.T) {
	many := map[string]string{}
	for i := range catalog.MaxLabels + 1 {
		many[string(rune('a'+i%26))+strings.Repeat("x", i/26+1)] = "v"
	}
	tests := []struct {
		name  string
		in    catalog.Annotations
		field string
	}{
		{"upper-case key", catalog.Annotations{Labels: map[string]string{"Env": "prod"}}, "labels"},
		{"key with space", catalog.Annotations{Labels: map[string]string{"my env": "prod"}}, "labels"},
		{"key ending in dash", catalog.Annotations{Labels: map[string]string{"env-": "prod"}}, "labels"},
		{"long key", catalog.Annotations{Labels: map[string]string{strings.Repeat("k", 64): "v"}}, "labels"},
		{"empty value", catalog.Annotations{Labels: map[string]string{"env": " "}}, "labels"},
		{"value with markup", catalog.Annotations{Labels: map[string]string{"env": "<b>"}}, "labels"},
		{"long value", catalog.Annotations{Labels: map[string]string{"env": strings.Repeat("v", 129)}}, "labels"},
		{"too many labels", catalog.Annotations{Labels: many}, "labels"},
		{"owner team with newline", catalog.Annotations{OwnerTeam: "a\nb"}, "owner_team"},
		{"owner team with bidi override", catalog.Annotations{OwnerTeam: "team\u202e"}, "owner_team"},
		{"long contact", catalog.Annotations{Contact: strings.Repeat("c", 257)}, "contact"},
		{"classification with quote", catalog.Annotations{Classification: `secret"`}, "classification"},
		{"notes with NUL", catalog.Annotations{Notes: "a\x00b"}, "notes"},
		{"long notes", catalog.Annotations{Notes: strings.Repeat("n", catalog.MaxNotesLen+1)}, "notes"},
	}
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		id := upsert(t, s, invoiceURL, v03Card).Agent.ID
		for _, tc := range tests {
			_, err := s.SetAnnotations(ctx, testActor, catalog.ScopeAll, id, tc.in)
			var ae *catalog.AnnotationError
			if !errors.As(err, &ae) || ae.Field != tc.field || !errors.Is(err, catalog.ErrInvalidAnnotations) {
				t.Errorf("%s: err = %v, want an AnnotationError on %s", tc.name, err, tc.field)
			}
		}
		v, err := s.AgentView(ctx, catalog.ScopeAll, id, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !v.Annotations.IsZero() {
			t.Errorf("refused input was stored: %+v", v.Annotations)
		}
	})
}

// An annotation change reaches another replica's index at its next Sync.
func TestAnnotationsReachReplicas(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			a, b := catalogtest.Open(t, d), catalogtest.Open(t, d)
			ctx := context.Background()
			id := upsert(t, a, invoiceURL, v03Card).Agent.ID
			if err := b.WarmIndex(ctx); err != nil {
				t.Fatal(err)
			}
			for _, env := range []string{"prod", "dev"} {
				if _, err := a.SetAnnotations(ctx, testActor, catalog.ScopeAll, id, catalog.Annotations{Labels: map[string]string{"env": env}}); err != nil {
					t.Fatal(err)
				}
				filter := map[string][]string{"label": {"env:" + env}}
				if ids := searchIDs(t, b, filter); len(ids) != 0 {
					t.Fatalf("replica matched %v before its sync", ids)
				}
				if err := b.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				if ids := searchIDs(t, b, filter); !slices.Equal(ids, []string{"Invoice Extractor"}) {
					t.Fatalf("replica after sync: label env:%s matches %v", env, ids)
				}
			}
		})
	}
}

// TestAnnotationsTakeTheScope: annotating an agent the caller does not
// see (a collection of another group, a listing state below their role)
// is ErrNotFound, exactly as reading it, and changes and audits nothing.
func TestAnnotationsTakeTheScope(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		s.SetListingPolicy(catalog.ListingPolicy{RequireApproval: true})
		if _, _, err := s.SaveCollection(ctx, testActor, catalog.Collection{Name: "Secret", Groups: []string{"sec"}}); err != nil {
			t.Fatal(err)
		}
		hidden := store(t, s, "https://h.example/card.json", namedCard("H", "1"), catalog.SourceURL).Agent
		if err := s.AddToCollection(ctx, testActor, "secret", hidden.ID); err != nil {
			t.Fatal(err)
		}
		pending := store(t, s, "https://p.example/card.json", namedCard("P", "1"), catalog.SourceURL).Agent
		editor := catalog.User("sub-ed").For(catalog.Request{DisplayName: "Ed", Role: "editor"})
		for _, tt := range []struct {
			name string
			sc   catalog.Scope
			id   string
			want error
		}{
			{"an editor outside the collection's group", catalog.Scope{Review: true}, hidden.ID, catalog.ErrNotFound},
			{"a scope without review, on a pending agent", catalog.Scope{}, pending.ID, catalog.ErrNotFound},
			{"an editor in the group", catalog.Scope{Review: true, Groups: []string{"SEC"}}, hidden.ID, nil},
			{"an editor, on a pending agent", catalog.Scope{Review: true}, pending.ID, nil},
		} {
			t.Run(tt.name, func(t *testing.T) {
				before, err := s.AuditLog(ctx, "", 100)
				if err != nil {
					t.Fatal(err)
				}
				owner := "Team " + tt.name
				_, err = s.SetAnnotations(ctx, editor, tt.sc, tt.id, catalog.Annotations{OwnerTeam: owner})
				if !errors.Is(err, tt.want) {
					t.Fatalf("SetAnnotations = %v, want %v", err, tt.want)
				}
				v, err := s.AgentView(ctx, catalog.ScopeAll, tt.id, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				after, err := s.AuditLog(ctx, "", 100)
				if err != nil {
					t.Fatal(err)
				}
				changed := v.Annotations.OwnerTeam == owner
				if changed != (tt.want == nil) || (len(after.Entries) != len(before.Entries)) != (tt.want == nil) {
					t.Errorf("annotated %v, audit rows %d → %d; want a change only when allowed", changed, len(before.Entries), len(after.Entries))
				}
			})
		}
	})
}
