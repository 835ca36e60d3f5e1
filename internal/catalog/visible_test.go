package catalog_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// TestVisibleAgents: the batched visibility check answers, for each kind
// of caller, exactly the agents its scope sees: not those in a collection
// of other groups, not pending or rejected ones below editors, not
// removed ones below admins, never unknown ids; over more ids than one
// query takes.
func TestVisibleAgents(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		ids := map[string]string{}
		for _, k := range []string{"open", "fin", "pend", "rej", "gone", "dep"} {
			ids[k] = store(t, s, "https://"+k+".example/card.json", namedCard("V "+k, "1"), catalog.SourceURL).Agent.ID
		}
		if _, _, err := s.SaveCollection(ctx, testActor, catalog.Collection{Name: "Finance", Groups: []string{"finance"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddToCollection(ctx, testActor, "Finance", ids["fin"]); err != nil {
			t.Fatal(err)
		}
		for k, ch := range map[string]catalog.ListingChange{
			"pend": {State: catalog.ListingPending},
			"rej":  {State: catalog.ListingRejected, Reason: "no"},
			"dep":  {State: catalog.ListingDeprecated, Reason: "old"},
		} {
			if _, err := s.SetListing(ctx, editor, catalog.ScopeAll, ids[k], ch); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RemoveAgent(ctx, testActor, ids["gone"]); err != nil {
			t.Fatal(err)
		}
		ask := []string{"no-such-agent"}
		for i := range 600 {
			ask = append(ask, fmt.Sprintf("unknown-%d", i))
		}
		ask = append(ask, slices.Collect(maps.Values(ids))...)
		for _, tc := range []struct {
			name string
			sc   catalog.Scope
			want []string
		}{
			{"viewer", catalog.Scope{}, []string{"open", "dep"}},
			{"viewer in finance", catalog.Scope{Groups: []string{"Finance"}}, []string{"open", "dep", "fin"}},
			{"viewer in a group named like a token", catalog.Scope{Groups: []string{`public"`, "group:finance"}}, []string{"open", "dep"}},
			{"editor", catalog.Scope{Review: true}, []string{"open", "dep", "pend", "rej"}},
			{"editor in finance", catalog.Scope{Review: true, Groups: []string{"finance"}}, []string{"open", "dep", "pend", "rej", "fin"}},
			{"admin", catalog.ScopeAll, []string{"open", "dep", "pend", "rej", "fin", "gone"}},
		} {
			got, err := s.VisibleAgents(ctx, tc.sc, ask)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for k, id := range ids {
				if got[id] {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			slices.Sort(tc.want)
			if !slices.Equal(keys, tc.want) || len(got) != len(tc.want) {
				t.Errorf("%s: sees %v (%d ids), want %v", tc.name, keys, len(got), tc.want)
			}
		}
		if got, err := s.VisibleAgents(ctx, catalog.Scope{}, nil); err != nil || len(got) != 0 {
			t.Errorf("no ids: %v, %v", got, err)
		}
	})
}
