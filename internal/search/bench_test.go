package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkApply measures one document update on a built index of 50,000
// random documents: a small change (one facet, one word) and a whole new
// document.
func BenchmarkApply(b *testing.B) {
	g := gen{rand.New(rand.NewPCG(1, 1))}
	const n = 50_000
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = g.doc(uint32(i+1), 1)
	}
	x := newTestIndex()
	x.Apply(docs)
	x.MarkReady()
	seq := int64(1)
	for _, kind := range []string{"small", "whole"} {
		b.Run(kind, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				seq++
				id := uint32(i%n + 1)
				var d Doc
				if kind == "small" {
					d = docs[id-1]
					d.Seq = seq
					d.Text[ColDescription] += fmt.Sprintf(" w%d", i%7)
				} else {
					d = g.doc(id, seq)
				}
				x.Apply([]Doc{d})
			}
		})
	}
}

// BenchmarkSearchDuringBatch measures search latency on 50,000 random
// documents while another goroutine applies batches of 2,000 whole-document
// updates without pause, against the same searches on an idle index: Apply
// releases the write lock every millisecond, so searches wait at most
// about that long behind it.
func BenchmarkSearchDuringBatch(b *testing.B) {
	g := gen{rand.New(rand.NewPCG(2, 2))}
	const n = 50_000
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = g.doc(uint32(i+1), 1)
	}
	x := newTestIndex()
	x.Apply(docs)
	x.MarkReady()
	q := Query{Text: "ice", Limit: 20, FacetLimit: 10}
	run := func(b *testing.B) {
		var lat []time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := x.Search(q); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "µs-p50")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "µs-p99")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "µs-max")
	}
	b.Run("idle", run)
	b.Run("updating", func(b *testing.B) {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			ug := gen{rand.New(rand.NewPCG(3, 3))}
			seq := int64(1)
			for {
				select {
				case <-stop:
					return
				default:
				}
				seq++
				batch := make([]Doc, 2000)
				for i := range batch {
					batch[i] = ug.doc(uint32(ug.r.IntN(n)+1), seq)
				}
				x.Apply(batch)
			}
		})
		run(b)
		close(stop)
		wg.Wait()
	})
}

// BenchmarkBrowse measures a search without text on 100,000 random
// documents: every document is offered to the top k in name order, and
// facets are counted over all of them.
func BenchmarkBrowse(b *testing.B) {
	g := gen{rand.New(rand.NewPCG(3, 3))}
	const n = 100_000
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = g.doc(uint32(i+1), 1)
	}
	x := newTestIndex()
	x.Apply(docs)
	x.MarkReady()
	for _, tc := range []struct {
		name string
		q    Query
	}{
		{"first page", Query{Limit: 20}},
		{"first page with facets", Query{Limit: 20, FacetLimit: 10}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := x.Search(tc.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFilters measures filtered searches with facets on 100,000
// random documents: a media-type wildcard over much of the catalog, a
// skill and a media type together (which must meet one skill), and text
// with a media type.
func BenchmarkFilters(b *testing.B) {
	g := gen{rand.New(rand.NewPCG(4, 4))}
	const n = 100_000
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = g.doc(uint32(i+1), 1)
	}
	x := newTestIndex()
	x.Apply(docs)
	x.MarkReady()
	mode := func(p string) Filter { return Filter{Field: "mode", Match: matchMode(p)} }
	skill := Filter{Terms: []Facet{{"skill", "ice"}, {"skill_name", "ice skill"}}}
	for _, tc := range []struct {
		name string
		q    Query
	}{
		{"media type", Query{Limit: 20, FacetLimit: 10, Filters: []Filter{mode("text/*")}}},
		{"two media types", Query{Limit: 20, FacetLimit: 10, Filters: []Filter{mode("text/*"), mode("image/*")}}},
		{"skill and media type", Query{Limit: 20, FacetLimit: 10, Filters: []Filter{skill, mode("image/*")}}},
		{"text and media type", Query{Text: "ice", Limit: 20, FacetLimit: 10, Filters: []Filter{mode("application/*")}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				if _, err := x.Search(tc.q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
