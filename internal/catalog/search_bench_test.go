package catalog

import (
	"slices"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/search"
	"github.com/a2aregistry/registry/internal/synth"
)

// searchClasses are the query classes of `registry-bench catalog` as
// catalog queries of an anonymous caller (zero Scope), built from the
// generator's measured vocabulary.
func searchClasses(v synth.Vocab) []struct {
	name    string
	queries []Query
} {
	var words, common []string
	for _, w := range v.CommonWords {
		switch {
		case w.Share >= 0.001 && w.Share <= 0.05 && len(words) < 12:
			words = append(words, w.Value)
		case w.Share > 0.10 && len(common) < 6:
			common = append(common, w.Value)
		}
	}
	text := func(ws []string) []Query {
		var out []Query
		for _, w := range ws {
			out = append(out, Query{Text: w})
		}
		return out
	}
	var rare []string
	for _, w := range v.RareWords {
		rare = append(rare, w.Value)
	}
	var facet, combo, modes []Query
	tags := v.PopularTags(12)
	for i, t := range tags {
		facet = append(facet, Query{Filters: map[string][]string{FieldTag: {t.Value}}},
			Query{Filters: map[string][]string{FieldBinding: {v.Bindings[i%len(v.Bindings)].Value}}})
		combo = append(combo, Query{Text: words[i%len(words)], Filters: map[string][]string{
			FieldTag: {tags[(i+1)%len(tags)].Value}, FieldBinding: {"JSONRPC"}}})
	}
	for _, fam := range v.ModeFamilies {
		modes = append(modes, Query{Filters: map[string][]string{FieldInputMode: {fam.Value}}},
			Query{Filters: map[string][]string{FieldOutputMode: {fam.Value}}})
	}
	return []struct {
		name    string
		queries []Query
	}{
		{"text", text(words)},
		{"text-frequent", text(common)},
		{"text-rare", text(rare)},
		{"facet", facet},
		{"text+2facets", combo},
		{"mode-wildcard", modes},
		{"browse", []Query{{}, {Limit: 100}}},
	}
}

// BenchmarkSearchClasses runs every query class of the catalog benchmark
// on the in-memory index of 100,000 synthetic agents, as Store.Search
// asks it (anonymous scope, removed agents excluded, deprecated demoted),
// without the database read of the result page, after a change to the
// index as under a crawl (so no cache answers). It reports each class's
// CPU per search and p99 on an otherwise idle index: the share of a
// search that the index costs, and what profiles of it show.
func BenchmarkSearchClasses(b *testing.B) {
	const n = 100_000
	gen := synth.New(1)
	idx := newSearchIndex()
	for from := 0; from < n; from += 2000 {
		docs := synthDocs(b, gen, from, min(2000, n-from), 1)
		for i := range docs {
			docs[i].ID += uint32(from)
			docs[i].Facets = append(docs[i].Facets,
				search.Facet{Field: FieldListing, Value: ListingApproved},
				search.Facet{Field: fieldVisibility, Value: visibilityPublic})
		}
		idx.Apply(docs)
	}
	idx.MarkReady()
	seq := int64(1)
	for _, cl := range searchClasses(gen.Vocabulary()) {
		b.Run(cl.name, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				// As under a crawl: the index changed since the last
				// search, so browse caches do not answer.
				health := []string{HealthUp, HealthDown}[i%2]
				if !idx.SetFields(1, seq, seq+1, map[string][]string{FieldHealth: {health}}) {
					b.Fatal("SetFields refused")
				}
				seq++
				q, err := normalizeQuery(cl.queries[i%len(cl.queries)])
				if err != nil {
					b.Fatal(err)
				}
				i++
				t := time.Now()
				if _, err := idx.Search(indexQuery(q, nil)); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
