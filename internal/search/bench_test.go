package search

import (
	"fmt"
	"math/rand/v2"
	"testing"
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
