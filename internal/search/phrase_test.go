package search

import (
	"slices"
	"testing"
)

// TestPhraseProximity: of documents holding the same words as often, in
// columns of the same lengths, the one where the question's words stand
// together ranks first; a word between them still counts, a column's end
// or more words between them do not.
func TestPhraseProximity(t *testing.T) {
	x := newTestIndex()
	filler := "alpha beta gamma delta epsilon zeta eta theta iota kappa"
	x.Apply([]Doc{
		{ID: 1, Seq: 1, Text: Text{ColDescription: "tickets " + filler + " of train"}},
		{ID: 2, Seq: 1, Text: Text{ColDescription: filler + " of train tickets"}},
		{ID: 3, Seq: 1, Text: Text{ColDescription: "train " + filler + " for tickets"}},
		{ID: 4, Seq: 1, Text: Text{ColDescription: filler + " tickets the train"}},
		{ID: 5, Seq: 1, Text: Text{ColName: "train", ColDescription: "tickets " + filler}},
	})
	x.MarkReady()
	res, err := x.Search(Query{Text: "train tickets", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	score := map[uint32]float64{}
	for _, h := range res.Hits {
		score[h.ID] = h.Score
	}
	if score[2] != score[4] || score[2] <= score[1] || score[1] != score[3] {
		t.Errorf("scores %v: want 2 = 4 (adjacent, one word between) > 1 = 3 (far apart)", score)
	}
	if want := score[1] * (1 + proximityBoost); !near(score[2], want) {
		t.Errorf("adjacent score %v, want %v (the far one's raised by proximityBoost)", score[2], want)
	}
	for id, n := range map[uint32]int{1: 0, 2: 1, 3: 0, 4: 1, 5: 0} {
		e, ok := x.Explain("train tickets", id)
		if !ok || e.Near != n || !near(e.Score, score[id]) {
			t.Errorf("Explain(%d) = %+v, %v; want Near %d, score %v", id, e, ok, n, score[id])
		}
	}
}

func TestNearPairs(t *testing.T) {
	// Ranks 1, 2, 3 stand for three query words; 9 for another word.
	enc := func(phrase ...uint16) phraseList {
		rank := make([]int, 10)
		for i := range rank {
			rank[i] = i
		}
		return phraseList(encodePhrase(nil, phrase, rank))
	}
	masks := []uint32{1: 1 << 0, 2: 1 << 1, 3: 1 << 2, 9: 0}
	for _, tc := range []struct {
		name   string
		phrase phraseList
		want   uint32
	}{
		{"in order", enc(1, 2, 3), 0b11},
		{"reversed", enc(3, 2, 1), 0b11},
		{"one between", enc(1, 9, 2), 0b01},
		{"two between", enc(1, 9, 9, 2), 0},
		{"across columns", enc(1, phraseBreak, 2), 0},
		{"first and third only", enc(1, 3), 0},
		{"nothing", enc(), 0},
	} {
		if got := tc.phrase.nearPairs(masks, 3, 0b11); got != tc.want {
			t.Errorf("%s: nearPairs = %b, want %b", tc.name, got, tc.want)
		}
	}
	// One word matching two query words is no phrase.
	if got := enc(1, 9, 9, 9).nearPairs([]uint32{1: 0b11}, 2, 0b1); got != 0 {
		t.Errorf("one word for two query words: %b, want 0", got)
	}
}

// TestRankMasks: each word of a document's list gets the query words (of
// those kept) that match it, by rank, up to the last matched word.
func TestRankMasks(t *testing.T) {
	l := wordList(appendWords(nil, []textPosting{{id: 3, tf: 1}, {id: 7, tf: 2}, {id: 9, tf: 1}, {id: 20, tf: 1}, {id: 25, tf: 1}}))
	ws := []wordMask{{id: 2, mask: 0b100}, {id: 7, mask: 0b011}, {id: 20, mask: 0b100}}
	if got, want := l.rankMasks(ws, 0b111, nil), []uint32{0, 0b011, 0, 0b100}; !slices.Equal(got, want) {
		t.Errorf("rankMasks = %b, want %b", got, want)
	}
	if got, want := l.rankMasks(ws, 0b001, nil), []uint32{0, 0b001, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("rankMasks keeping word 0 = %b, want %b", got, want)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestNonZeroCols(t *testing.T) {
	for c := range NumCols {
		for f := uint32(1); f <= tfMax; f++ {
			tf := f << (c * tfBits)
			if got, want := nonZeroCols(tf), uint32(1)<<(c*tfBits); got != want {
				t.Fatalf("nonZeroCols(column %d, %d) = %#x, want %#x", c, f, got, want)
			}
			if got, want := phraseCols(tf) != 0, phraseCol[c]; got != want {
				t.Fatalf("phraseCols(column %d, %d) = %v, want %v", c, f, got, want)
			}
		}
	}
	if got := nonZeroCols(0); got != 0 {
		t.Fatalf("nonZeroCols(0) = %#x", got)
	}
	if got, want := nonZeroCols(1<<(ColName*tfBits)|3<<(ColTags*tfBits)), uint32(1<<(ColName*tfBits)|1<<(ColTags*tfBits)); got != want {
		t.Fatalf("two columns: %#x, want %#x", got, want)
	}
}
