package search

import (
	"math/rand/v2"
	"testing"
)

// TestUnionCacheFollowsUpdates: a many-term filter over most of the
// catalog (a caller's scope) answers from the union cache, and every kind
// of update to one of its terms — a doc moving in or out, added, removed —
// is seen by the next search, as brute force over the docs says.
func TestUnionCacheFollowsUpdates(t *testing.T) {
	const n = 12000
	r := rand.New(rand.NewPCG(7, 9))
	values := []string{"public", "group:finance", "group:hr", "group:ops"}
	x := New(Options{FacetFields: []string{"tag"}})
	vis := make(map[uint32]string, n)
	seq := int64(0)
	put := func(id uint32, v string) {
		seq++
		vis[id] = v
		x.Apply([]Doc{{ID: id, Seq: seq, SortKey: "a", Facets: []Facet{{Field: "vis", Value: v}, {Field: "tag", Value: "t"}}}})
	}
	for id := range uint32(n) {
		put(id, values[r.IntN(len(values))])
	}
	x.MarkReady()
	scope := Filter{Terms: []Facet{{Field: "vis", Value: "public"}, {Field: "vis", Value: "group:finance"}, {Field: "vis", Value: "group:nobody"}}}
	check := func(step string) {
		t.Helper()
		res, err := x.Search(Query{Filters: []Filter{scope}, Limit: 1, FacetLimit: 10})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, v := range vis {
			if v == "public" || v == "group:finance" {
				want++
			}
		}
		if res.Total != want {
			t.Fatalf("%s: %d matches, want %d", step, res.Total, want)
		}
		if got := res.Facets["tag"]; len(got) != 1 || got[0].Count != want {
			t.Fatalf("%s: tag facet %v, want %d", step, got, want)
		}
	}
	check("first search")
	check("cached")
	if len(x.unions.entries) != 1 {
		t.Fatalf("%d cache entries after two searches of one scope, want 1", len(x.unions.entries))
	}
	for id, v := range vis { // a doc leaves the scope
		if v == "public" {
			put(id, "group:hr")
			break
		}
	}
	check("a doc moved out")
	for id, v := range vis { // and one comes in
		if v == "group:ops" {
			put(id, "group:finance")
			break
		}
	}
	check("a doc moved in")
	put(n, "public")
	check("a doc added")
	for id, v := range vis {
		if v == "public" {
			seq++
			x.Remove(id, seq)
			delete(vis, id)
			break
		}
	}
	check("a doc removed")
	// Many scopes: the cache stays bounded.
	groups := []string{}
	for i := range 3 * unionCacheMax {
		groups = append(groups, "group:g"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		f := Filter{Terms: []Facet{{Field: "vis", Value: "public"}, {Field: "vis", Value: groups[i]}}}
		if _, err := x.Search(Query{Filters: []Filter{f}, Limit: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if len(x.unions.entries) > unionCacheMax {
		t.Errorf("%d cache entries, want at most %d", len(x.unions.entries), unionCacheMax)
	}
}
