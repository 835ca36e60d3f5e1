package search

import (
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// hashVec is a deterministic stand-in for an embedding: a hashed bag of
// words, normalised. Texts sharing words are near; it knows no meaning.
func hashVec(text string, dim int) []float32 {
	v := make([]float32, dim)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New64a()
		h.Write([]byte(w))
		s := h.Sum64()
		sign := float32(1)
		if s>>63 == 1 {
			sign = -1
		}
		v[s%uint64(dim)] += sign
	}
	Normalize(v)
	return v
}

func vectorIndex(t testing.TB) *Index {
	t.Helper()
	docs := []Doc{
		{ID: 1, Seq: 1, SortKey: "a", Text: Text{ColName: "Invoice reader"}, Facets: []Facet{{"tag", "finance"}}},
		{ID: 2, Seq: 1, SortKey: "b", Text: Text{ColName: "Rail booking", ColDescription: "reserve seats on trains"}, Facets: []Facet{{"tag", "travel"}}},
		{ID: 3, Seq: 1, SortKey: "c", Text: Text{ColName: "Hidden rail booking", ColDescription: "reserve seats on trains"}, Facets: []Facet{{"tag", "secret"}}},
		{ID: 4, Seq: 1, SortKey: "d", Text: Text{ColName: "Ticket printer"}, Facets: []Facet{{"tag", "travel"}}},
		{ID: 5, Seq: 1, SortKey: "e", Text: Text{ColName: "Removed rail booking", ColDescription: "reserve seats on trains"}, Facets: []Facet{{"tag", "travel"}, {"health", "removed"}}},
	}
	x := newTestIndex()
	x.Apply(docs)
	x.MarkReady()
	var vs []Vector
	for _, d := range docs {
		vs = append(vs, Vector{ID: d.ID, Values: hashVec(EmbedText(d.Text), 64)})
	}
	x.SetVectors("hash", 64, vs)
	return x
}

func TestHybridFindsByVectorWithinFilters(t *testing.T) {
	x := vectorIndex(t)
	// "ticket" meets doc 4 by its words; the vector of "rail booking
	// seats" meets docs 2, 3 and 5, which the text does not match.
	q := Query{Text: "ticket", Vector: hashVec("rail booking reserve seats on trains", 64), VectorSpace: "hash", Limit: 10,
		Filters: []Filter{{Terms: []Facet{{"tag", "travel"}, {"tag", "finance"}}}},
		Exclude: []Facet{{"health", "removed"}}}
	res, err := x.Search(q)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Hybrid {
		t.Fatal("Hybrid = false, want a fused ranking")
	}
	var ids []uint32
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
		if !h.Fused {
			t.Errorf("hit %d not fused", h.ID)
		}
	}
	if slices.Contains(ids, 3) || slices.Contains(ids, 5) {
		t.Fatalf("hits %v include an agent the filter or exclusion drops", ids)
	}
	if !slices.Contains(ids, 2) || !slices.Contains(ids, 4) {
		t.Fatalf("hits %v, want 2 (by vector) and 4 (by word)", ids)
	}
	if res.Total != len(ids) {
		t.Fatalf("Total = %d, want %d", res.Total, len(ids))
	}
	for _, h := range res.Hits {
		switch h.ID {
		case 2:
			if h.VectorRank != 1 {
				t.Errorf("hit 2 vector rank %d, want 1", h.VectorRank)
			}
		case 4:
			if h.LexicalRank != 1 {
				t.Errorf("hit 4 lexical rank %d, want 1", h.LexicalRank)
			}
		}
	}
	// The facets count the vector's hits too, and only allowed ones.
	for _, f := range res.Facets["tag"] {
		if f.Value == "secret" {
			t.Fatalf("facets %v count a filtered-out agent", res.Facets["tag"])
		}
	}
}

func TestHybridNeedsMatchingDimension(t *testing.T) {
	x := vectorIndex(t)
	for _, tc := range []struct {
		name string
		q    Query
	}{
		{"other dimension", Query{Text: "ticket", Vector: hashVec("rail", 32), VectorSpace: "hash", Limit: 10}},
		{"other model", Query{Text: "ticket", Vector: hashVec("rail", 64), VectorSpace: "other", Limit: 10}},
		{"no text", Query{Vector: hashVec("rail", 64), VectorSpace: "hash", Limit: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := x.Search(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if res.Hybrid {
				t.Fatal("Hybrid = true, want lexical only")
			}
		})
	}
	// Vectors of another dimension replace all held: never mixed.
	x.SetVectors("hash", 32, []Vector{{ID: 1, Seq: 4, Values: hashVec("invoice", 32)}})
	st := x.VectorState()
	if st.Dimension != 32 || st.Embedded != 1 {
		t.Fatalf("VectorState = %+v, want 1 vector of 32", st)
	}
	if seq, ok := x.VectorSeq(1, "hash", 32); !ok || seq != 4 {
		t.Fatalf("VectorSeq = %d, %v, want the version 4 it was set of", seq, ok)
	}
	if _, ok := x.VectorSeq(1, "other", 32); ok {
		t.Fatal("VectorSeq answers for another space")
	}
	x.SetVectors("hash", 32, []Vector{{ID: 2, Values: make([]float32, 31)}})
	if st := x.VectorState(); st.Embedded != 1 {
		t.Fatalf("a vector of the wrong length was kept: %+v", st)
	}
	x.SetVectors("hash", MaxDimension+1, []Vector{{ID: 2, Values: make([]float32, MaxDimension+1)}})
	if st := x.VectorState(); st.Dimension != 32 || st.Embedded != 1 {
		t.Fatalf("vectors above MaxDimension replaced those held: %+v", st)
	}
	x.Remove(1, 5)
	if st := x.VectorState(); st.Embedded != 0 {
		t.Fatalf("a removed document keeps its vector: %+v", st)
	}
	if _, ok := x.VectorSeq(1, "hash", 32); ok {
		t.Fatal("VectorSeq answers for a removed document")
	}
}

// TestHybridPaging pages through a hybrid query with cursors: every hit
// once, in the order of one large page.
func TestHybridPaging(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(7, 7))}
	x := newTestIndex()
	var docs []Doc
	for i := range 600 {
		docs = append(docs, g.doc(uint32(i+1), 1))
	}
	x.Apply(docs)
	x.MarkReady()
	var vs []Vector
	for _, d := range docs {
		if d.ID%5 != 0 { // some documents have no vector yet
			vs = append(vs, Vector{ID: d.ID, Values: hashVec(EmbedText(d.Text), 48)})
		}
	}
	x.SetVectors("hash", 48, vs)
	demote := []Facet{{Field: "tag", Value: docs[0].Facets[0].Value}}
	for i := range 30 {
		text := g.words(1 + g.r.IntN(3))
		// A small window puts text matches past the fused hits on the
		// first page, whose ranking the later pages' must continue.
		window := []int{2, 5, 20}[i%3]
		base := Query{Text: text, Vector: hashVec(g.words(3), 48), VectorSpace: "hash", Demote: demote, Fusion: Fusion{Window: window}}
		all := base
		all.Limit = 10_000
		want, err := x.Search(all)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint32
		var after *Hit
		for {
			q := base
			q.Limit, q.After = 7, after
			res, err := x.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				got = append(got, h.ID)
			}
			if len(res.Hits) < 7 {
				break
			}
			after = &res.Hits[len(res.Hits)-1]
		}
		var wantIDs []uint32
		for _, h := range want.Hits {
			wantIDs = append(wantIDs, h.ID)
		}
		if !slices.Equal(got, wantIDs) {
			t.Fatalf("q %q: paged %v\nwant     %v", text, got, wantIDs)
		}
		if want.Total != len(wantIDs) {
			t.Fatalf("q %q: Total %d, hits %d", text, want.Total, len(wantIDs))
		}
	}
}

// BenchmarkHybrid measures a hybrid query (three words and a 384-dimension
// vector) over 100,000 documents, every one with a vector: the brute-force
// scan over the scope's documents and the fusion. It reports the vector
// memory per document.
func BenchmarkHybrid(b *testing.B) {
	const n, dim = 100_000, 384
	g := gen{rand.New(rand.NewPCG(3, 3))}
	x := newTestIndex()
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = g.doc(uint32(i+1), 1)
	}
	x.Apply(docs)
	x.MarkReady()
	r := rand.New(rand.NewPCG(4, 4))
	randVec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		Normalize(v)
		return v
	}
	for chunk := range slices.Chunk(docs, 1000) {
		vs := make([]Vector, len(chunk))
		for i, d := range chunk {
			vs[i] = Vector{ID: d.ID, Values: randVec()}
		}
		x.SetVectors("random", dim, vs)
	}
	st := x.VectorState()
	bytesPerDoc := float64(st.Bytes) / float64(st.Docs)
	recall := signRecall(x, r, 20)
	queries := make([]Query, 64)
	for i := range queries {
		queries[i] = Query{Text: g.words(3), Vector: randVec(), VectorSpace: "random", Limit: 20, FacetLimit: 10}
	}
	for _, mode := range []string{"lexical", "hybrid"} {
		b.Run(mode, func(b *testing.B) {
			var took []time.Duration
			cpu := cpuTime()
			for i := 0; b.Loop(); i++ {
				q := queries[i%len(queries)]
				if mode == "lexical" {
					q.Vector = nil
				}
				start := time.Now()
				if _, err := x.Search(q); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			if mode == "hybrid" {
				b.ReportMetric(bytesPerDoc, "vector-bytes/doc")
				b.ReportMetric(recall, "recall@10")
			}
		})
	}
}

// signRecall is the share of the exact ten nearest documents that
// nearest's two passes (sign bits, then full vectors) find, for queries
// made near a document (its vector plus as much noise again), as a
// question is near the agents that answer it.
func signRecall(x *Index, r *rand.Rand, queries int) float64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := &x.vec
	found, total := 0, 0
	for range queries {
		id := x.all[r.IntN(len(x.all))]
		q := make([]float32, s.dim)
		for i := range q {
			q[i] = s.data[int(id)*s.dim+i] + float32(r.NormFloat64())/float32(math.Sqrt(float64(s.dim)))
		}
		Normalize(q)
		exact := &topK[simHit]{k: 10, order: bySim}
		for _, d := range x.all {
			exact.offer(simHit{d, dot(q, s.data[int(d)*s.dim:int(d+1)*s.dim])})
		}
		got := map[uint32]bool{}
		for _, h := range x.nearest(q, x.all, 10, -1) {
			got[h.id] = true
		}
		for _, h := range exact.items {
			total++
			if got[h.id] {
				found++
			}
		}
	}
	return float64(found) / float64(total)
}

// TestExactNameFirst holds the rule that a query that is a document's
// name ranks it first, lexically and fused, whatever BM25 or the vector
// ranking favour, and that a cursor pages on past it.
func TestExactNameFirst(t *testing.T) {
	docs := []Doc{
		{ID: 1, Seq: 1, SortKey: "a", Text: Text{ColName: "Subtitler", ColTags: "video"}},
		// Heavier by BM25: the word in four columns.
		{ID: 2, Seq: 1, SortKey: "b", Text: Text{ColName: "Lingo desk", ColSkills: "subtitler", ColTags: "subtitler",
			ColDescription: "a subtitler for video", ColExamples: "subtitler please"}},
		{ID: 3, Seq: 1, SortKey: "c", Text: Text{ColName: "Caption helper", ColDescription: "subtitler and captions", ColExamples: "subtitler"}},
	}
	x := newTestIndex()
	x.Apply(docs)
	x.MarkReady()
	var vs []Vector
	for _, d := range docs {
		vs = append(vs, Vector{ID: d.ID, Values: hashVec(EmbedText(d.Text), 64)})
	}
	x.SetVectors("hash", 64, vs)
	// A vector nearest the heaviest other documents.
	vec := hashVec(EmbedText(docs[1].Text)+" "+EmbedText(docs[2].Text), 64)
	for _, tc := range []struct {
		name  string
		q     Query
		exact bool
	}{
		{"lexical", Query{Text: "SUBTITLER"}, true},
		{"hybrid", Query{Text: "subtitler", Vector: vec, VectorSpace: "hash"}, true},
		// The same words stemmed, not the name: doc 1 ranks by BM25,
		// after the others (which is why the rule is needed).
		{"not the name", Query{Text: "subtitlers"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.Limit = 10
			res, err := x.Search(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var ids []uint32
			for _, h := range res.Hits {
				ids = append(ids, h.ID)
				if h.Exact != (h.ID == 1 && tc.exact) {
					t.Errorf("hit %d: Exact = %v", h.ID, h.Exact)
				}
			}
			if len(ids) != 3 || (ids[0] == 1) != tc.exact {
				t.Fatalf("hits %v, want doc 1 first: %v", ids, tc.exact)
			}
			// Page by one: the same order, nothing repeated or skipped.
			tc.q.Limit = 1
			var paged []uint32
			for range 5 {
				res, err := x.Search(tc.q)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Hits) == 0 {
					break
				}
				h := res.Hits[0]
				paged = append(paged, h.ID)
				tc.q.After = &h
			}
			if !slices.Equal(paged, ids) {
				t.Fatalf("paged %v, want %v", paged, ids)
			}
		})
	}
}

// bySigns against brute force: every candidate's Hamming distance sorted
// (distance, then id), the first n kept, in id order. Small dimensions
// make many ties, which must go to the lower ids.
func TestBySignsOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, dim := range []int{5, 64, 100, 384} {
		x := newTestIndex()
		const docs = 3000
		var vs []Vector
		for id := uint32(1); id <= docs; id++ {
			if r.IntN(10) == 0 {
				continue // a document without a vector
			}
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
			vs = append(vs, Vector{ID: id, Values: v})
		}
		x.SetVectors("m", dim, vs)
		q := make([]float32, dim)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		var ids []uint32
		for id := uint32(0); id <= docs+200; id++ { // some past the last vector
			if r.IntN(3) > 0 {
				ids = append(ids, id)
			}
		}
		for _, n := range []int{1, 10, 500, len(ids)} {
			x.mu.RLock()
			got := x.bySigns(q, ids, n)
			s := &x.vec
			qs := make([]uint64, s.words)
			signsOf(qs, q)
			type hd struct {
				id  uint32
				ham int
			}
			var all []hd
			for _, id := range ids {
				if !s.holds(id) {
					continue
				}
				ham := 0
				for i, b := range s.signs[int(id)*s.words : int(id+1)*s.words] {
					ham += bits.OnesCount64(b ^ qs[i])
				}
				all = append(all, hd{id, ham})
			}
			x.mu.RUnlock()
			slices.SortFunc(all, func(a, b hd) int {
				if a.ham != b.ham {
					return a.ham - b.ham
				}
				return int(a.id) - int(b.id)
			})
			var want []uint32
			for _, h := range all[:min(n, len(all))] {
				want = append(want, h.id)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("dim %d, n %d: bySigns kept %d ids, want %d (first differences: %v / %v)", dim, n, len(got), len(want), got[:min(5, len(got))], want[:min(5, len(want))])
			}
		}
	}
}

// ReserveVectors makes room and nothing else: no document gains a vector,
// SetVectors then fills the room without growing it, and a reservation
// for another space empties the set as SetVectors would.
func TestReserveVectors(t *testing.T) {
	x := vectorIndex(t)
	before := x.VectorState()
	x.ReserveVectors("hash", 64, 5000)
	st := x.VectorState()
	if st.Embedded != before.Embedded || st.Space != "hash" || st.Dimension != 64 {
		t.Fatalf("after ReserveVectors: %+v, want the vectors held before (%+v)", st, before)
	}
	if st.Bytes < 5001*64*4 {
		t.Fatalf("ReserveVectors(…, 5000) left %d bytes, want room for 5,001 vectors of 64", st.Bytes)
	}
	x.SetVectors("hash", 64, []Vector{{ID: 5000, Seq: 2, Values: hashVec("late", 64)}})
	if got := x.VectorState(); got.Bytes != st.Bytes {
		t.Fatalf("SetVectors within the reserved room: %+v, want %d bytes", got, st.Bytes)
	}
	if seq, ok := x.VectorSeq(5000, "hash", 64); !ok || seq != 2 {
		t.Fatalf("VectorSeq(5000) = %d, %v", seq, ok)
	}
	x.ReserveVectors("other", 64, 10)
	if got := x.VectorState(); got.Embedded != 0 || got.Space != "other" {
		t.Fatalf("a reservation for another space kept the old vectors: %+v", got)
	}
}
