package catalog

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/search"
	"github.com/a2aregistry/registry/internal/synth"
)

// catalogQuery is a synth search (API query parameters) as a catalog
// query of an anonymous caller (zero Scope).
func catalogQuery(tb testing.TB, params url.Values) Query {
	q := Query{Filters: map[string][]string{}}
	for k, vs := range params {
		switch k {
		case "q":
			q.Text = vs[0]
		case "limit":
			n, err := strconv.Atoi(vs[0])
			if err != nil {
				tb.Fatal(err)
			}
			q.Limit = n
		default:
			q.Filters[k] = vs
		}
	}
	return q
}

// BenchmarkSearchClasses runs every query class of the catalog benchmark
// on the in-memory index of 100,000 synthetic agents, as Store.Search
// asks it (anonymous scope, removed agents excluded, deprecated demoted),
// without the database read of the result page, after a change to the
// index as under a crawl (so no cache answers). It reports each class's
// CPU per search (the process's, which a loaded machine does not inflate
// as it does wall time) and p99 on an otherwise idle index: the share of a
// search that the index costs, and what profiles of it show. The
// natural-language class runs a second time without facet counts, as the
// doors that show none ask it (Query.NoFacets).
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
	classes := gen.Vocabulary().SearchClasses()
	type class struct {
		synth.SearchClass
		noFacets bool
	}
	var runs []class
	for _, cl := range classes {
		runs = append(runs, class{cl, false})
		if strings.HasPrefix(cl.Name, "natural language") {
			// As A2A and ARD's search ask them: no facet counts.
			runs = append(runs, class{synth.SearchClass{Name: cl.Name + ", no facets", Searches: cl.Searches}, true})
		}
	}
	for _, cl := range runs {
		b.Run(cl.Name, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			cpu := cpuTime()
			for b.Loop() {
				// As under a crawl: the index changed since the last
				// search, so browse caches do not answer.
				health := []string{HealthUp, HealthDown}[i%2]
				if !idx.SetFields(1, seq, seq+1, map[string][]string{FieldHealth: {health}}) {
					b.Fatal("SetFields refused")
				}
				seq++
				q, err := normalizeQuery(catalogQuery(b, cl.Searches[i%len(cl.Searches)]))
				if err != nil {
					b.Fatal(err)
				}
				q.NoFacets = cl.noFacets
				i++
				t := time.Now()
				if _, err := idx.Search(indexQuery(q, nil)); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
