package search

import (
	"slices"
	"testing"
)

// fusionIndex holds documents whose places in both rankings of the
// query "rail booking seats" are set by hand: words decide the lexical
// ranking, vectors along four axes the vector one (the query's vector is
// the first axis).
//
//	doc  words matched                     similarity to the first axis
//	1    rail booking seats                −1 (not found by meaning)
//	2    rail booking                      1
//	3    rail, seats (in the description)  0.9
//	4    journeys                          0.8
//	5    journeys                          0.8 (a tie with 4)
//	6    none                              −0.6
func fusionIndex(t testing.TB) *Index {
	t.Helper()
	docs := []Doc{
		{ID: 1, Seq: 1, SortKey: "a", Text: Text{ColName: "Seat finder", ColDescription: "rail booking of seats"}},
		{ID: 2, Seq: 1, SortKey: "b", Text: Text{ColName: "Rail booking desk"}},
		{ID: 3, Seq: 1, SortKey: "c", Text: Text{ColName: "Rail timetable", ColDescription: "seats"}},
		{ID: 4, Seq: 1, SortKey: "d", Text: Text{ColName: "Train journeys"}},
		{ID: 5, Seq: 1, SortKey: "e", Text: Text{ColName: "Coach journeys"}},
		{ID: 6, Seq: 1, SortKey: "f", Text: Text{ColName: "Invoice reader"}},
	}
	x := newTestIndex()
	x.Apply(docs)
	x.MarkReady()
	x.SetVectors("axes", 4, []Vector{
		{ID: 1, Values: []float32{-1, 0, 0, 0}},
		{ID: 2, Values: []float32{1, 0, 0, 0}},
		{ID: 3, Values: []float32{0.9, 0.43588989, 0, 0}},
		{ID: 4, Values: []float32{0.8, 0, 0.6, 0}},
		{ID: 5, Values: []float32{0.8, 0, 0, 0.6}},
		{ID: 6, Values: []float32{-0.6, 0.8, 0, 0}},
	})
	return x
}

// TestFusionOrder holds the fused order: weighted reciprocal rank fusion,
// except that the lexical first leads when it matches every word.
func TestFusionOrder(t *testing.T) {
	x := fusionIndex(t)
	first, second := []float32{1, 0, 0, 0}, []float32{0, 1, 0, 0}
	type ranks struct{ id, lexical, vector uint32 }
	for _, tc := range []struct {
		name   string
		text   string
		vector []float32
		fusion Fusion
		want   []ranks
	}{
		{
			// By places alone doc 2 (2nd and 1st) and doc 3 (3rd and 2nd)
			// would come before doc 1 (1st, and not found by meaning).
			name: "all-terms lexical first leads", text: "rail booking seats", vector: first,
			want: []ranks{{1, 1, 0}, {2, 2, 1}, {3, 3, 2}, {4, 0, 3}, {5, 0, 4}},
		},
		{
			// No document has "refunds": the lexical first is partial
			// and earns no lead; doc 4 and 5 tie on similarity and
			// take their vector places by id.
			name: "partial lexical first is fused by places", text: "rail booking seats refunds", vector: first,
			want: []ranks{{2, 2, 1}, {3, 3, 2}, {1, 1, 0}, {4, 0, 3}, {5, 0, 4}},
		},
		{
			name: "the lead holds against a heavier vector weight", text: "rail booking seats", vector: first, fusion: Fusion{LexicalWeight: 1, VectorWeight: 5},
			want: []ranks{{1, 1, 0}, {2, 2, 1}, {3, 3, 2}, {4, 0, 3}, {5, 0, 4}},
		},
		{
			// With the lexical ranking weighing nothing there is no lead:
			// the order is the vector's, the rest after it.
			name: "no lead without lexical weight", text: "rail booking seats", vector: first, fusion: Fusion{LexicalWeight: 0, VectorWeight: 1},
			want: []ranks{{2, 2, 1}, {3, 3, 2}, {4, 0, 3}, {5, 0, 4}, {1, 1, 0}},
		},
		{
			// One word: its lexical first (doc 4, before doc 5 by id on
			// equal BM25) leads; doc 3 (2nd by meaning only) and doc 5
			// (2nd by words only) tie on score and go by id. Doc 6 is
			// found by meaning alone.
			name: "equal scores in id order", text: "journeys", vector: second, fusion: Fusion{MinSimilarity: 0.3},
			want: []ranks{{4, 1, 0}, {6, 0, 1}, {3, 0, 2}, {5, 2, 0}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := Query{Text: tc.text, Vector: tc.vector, VectorSpace: "axes", Fusion: tc.fusion, Limit: 10}
			res, err := x.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			var got []ranks
			for _, h := range res.Hits {
				got = append(got, ranks{h.ID, uint32(h.LexicalRank), uint32(h.VectorRank)})
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("hits (id, lexical rank, vector rank) %v\nwant %v", got, tc.want)
			}
			checkPaging(t, x, q, res.Hits)
		})
	}
}

// checkPaging pages through q one hit at a time with cursors: the same
// hits in the same order as one page, none repeated or skipped.
func checkPaging(t *testing.T, x *Index, q Query, want []Hit) {
	t.Helper()
	var got, wantIDs []uint32
	for _, h := range want {
		wantIDs = append(wantIDs, h.ID)
	}
	q.Limit = 1
	for range len(want) + 2 {
		res, err := x.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 {
			break
		}
		got = append(got, res.Hits[0].ID)
		q.After = &res.Hits[0]
	}
	if !slices.Equal(got, wantIDs) {
		t.Fatalf("paged %v, want %v", got, wantIDs)
	}
}
