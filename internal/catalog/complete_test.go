package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// taggedCard is a card with one skill of the given name and tags.
func taggedCard(name, skill string, tags ...string) string {
	return fmt.Sprintf(`{"name": %q, "description": "d", "url": "https://x.example/a2a", "version": "1",
		"protocolVersion": "0.3.0", "capabilities": {}, "defaultInputModes": ["text/plain"],
		"defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": %q, "description": "d", "tags": [%s]}]}`,
		name, skill, `"`+strings.Join(tags, `", "`)+`"`)
}

// TestCompleteKeepsToScope: completions come from the agents the caller
// sees, counted over them; the words of an agent in a restricted
// collection, a pending, rejected or removed agent never complete for a
// caller who cannot see it.
func TestCompleteKeepsToScope(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		s.SetListingPolicy(catalog.ListingPolicy{RequireApproval: true})
		add := func(name, skill string, tags ...string) string {
			return store(t, s, "https://"+name+".example/card.json", taggedCard(name, skill, tags...), catalog.SourceURL).Agent.ID
		}
		open := add("open", "Invoice reader", "invoices", "finance")
		secret := add("secret", "Project Zanzibar", "invoices", "zanzibar-leak")
		add("waiting", "Zephyr pending", "zeppelin")
		gone := add("gone", "Zodiac", "zodiac")
		if _, _, err := s.SaveCollection(ctx, testActor, catalog.Collection{Name: "Secret", Groups: []string{"sec"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddToCollection(ctx, testActor, "secret", secret); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{open, secret, gone} {
			if _, err := s.SetListing(ctx, editor, catalog.ScopeAll, id, catalog.ListingChange{State: catalog.ListingApproved}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RemoveAgent(ctx, testActor, gone); err != nil {
			t.Fatal(err)
		}
		values := func(sc catalog.Scope, typed string) []string {
			t.Helper()
			got, err := s.Complete(ctx, sc, typed, 0)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, c := range got {
				out = append(out, fmt.Sprintf("%s=%s:%d", c.Field, c.Value, c.Count))
			}
			return out
		}
		for _, tc := range []struct {
			name  string
			sc    catalog.Scope
			typed string
			want  []string
		}{
			{"viewer", catalog.Scope{}, "inv", []string{"skill=Invoice reader:1", "tag=invoices:1"}},
			{"viewer, the restricted agent's word", catalog.Scope{}, "zan", nil},
			{"viewer, the pending agent's word", catalog.Scope{}, "zep", nil},
			{"viewer, the removed agent's word", catalog.Scope{}, "zod", nil},
			{"viewer of the group", catalog.Scope{Groups: []string{"sec"}}, "inv", []string{"tag=invoices:2", "skill=Invoice reader:1"}},
			{"viewer of the group, its word", catalog.Scope{Groups: []string{"sec"}}, "zan", []string{"skill=Project Zanzibar:1", "tag=zanzibar-leak:1"}},
			{"editor, the pending agent's word", catalog.Scope{Review: true}, "zep", []string{"skill=Zephyr pending:1", "tag=zeppelin:1"}},
			{"editor, the restricted agent's word", catalog.Scope{Review: true}, "zan", nil},
			{"nothing typed", catalog.ScopeAll, "  ", nil},
		} {
			if got := values(tc.sc, tc.typed); !slices.Equal(got, tc.want) {
				t.Errorf("%s: Complete(%q) = %q, want %q", tc.name, tc.typed, got, tc.want)
			}
		}
		for _, bad := range []string{strings.Repeat("a", catalog.MaxQueryTextLen+1), "\xff"} {
			if _, err := s.Complete(ctx, catalog.Scope{}, bad, 0); !errors.Is(err, catalog.ErrInvalidQuery) {
				t.Errorf("Complete(%.10q…) = %v, want ErrInvalidQuery", bad, err)
			}
		}
	})
}
