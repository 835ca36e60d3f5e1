package search

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPrefix64Order: a smaller prefix64 means a smaller string, for keys
// shorter than 8 bytes, with NUL bytes and multi-byte runes too; browse
// order skips documents on that alone.
func TestPrefix64Order(t *testing.T) {
	keys := []string{"", "a", "a\x00", "a\x00\x00", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefgz",
		"abcdefg", "b", "zzzzzzzzzzzz", "élan", "e\u0301lan", "\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\xff"}
	r := rand.New(rand.NewPCG(4, 4))
	for range 2000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = "a\x00b\xffz"[r.IntN(5)]
		}
		keys = append(keys, string(b))
	}
	for _, a := range keys {
		for _, b := range keys[:40] {
			if prefix64(a) < prefix64(b) && a >= b {
				t.Fatalf("prefix64(%q) < prefix64(%q) but %q >= %q", a, b, a, b)
			}
			if prefix64(b) < prefix64(a) && b >= a {
				t.Fatalf("prefix64(%q) < prefix64(%q) but %q >= %q", b, a, b, a)
			}
		}
	}
}

// TestGallopMatchesBinarySearch: gallop and gallopPostings find what a
// binary search of the whole list finds.
func TestGallopMatchesBinarySearch(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for range 500 {
		list := make([]uint32, r.IntN(200))
		v := uint32(0)
		for i := range list {
			v += 1 + uint32(r.IntN(5))
			list[i] = v
		}
		postings := make([]textPosting, len(list))
		for i, id := range list {
			postings[i] = textPosting{id: id, tf: 1}
		}
		for id := range v + 3 {
			gj, gok := gallop(list, id)
			bj, bok := slices.BinarySearch(list, id)
			if gj != bj || gok != bok {
				t.Fatalf("gallop(%v, %d) = %d %v, BinarySearch %d %v", list, id, gj, gok, bj, bok)
			}
			if pj, pok := gallopPostings(postings, id); pj != bj || pok != bok {
				t.Fatalf("gallopPostings(%v, %d) = %d %v, BinarySearch %d %v", list, id, pj, pok, bj, bok)
			}
		}
	}
}

// TestFewestWordsWhenNoneMatchEnough: a long question no document
// matches half of still finds those matching the most of its words, as
// partial hits; once one document matches enough, only those do.
func TestFewestWordsWhenNoneMatchEnough(t *testing.T) {
	x := newTestIndex()
	docs := []Doc{
		{ID: 1, Seq: 1, Text: Text{ColName: "Recipe Remix", ColTags: "cooking recipes"}},
		{ID: 2, Seq: 1, Text: Text{ColName: "Garden Helper", ColTags: "gardening"}},
		{ID: 3, Seq: 1, Text: Text{ColName: "Egg Timer", ColTags: "kitchen"}},
	}
	x.Apply(docs)
	x.MarkReady()
	ids := func(q string) []uint32 {
		t.Helper()
		res, err := x.Search(Query{Text: q, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var out []uint32
		for _, h := range res.Hits {
			if !h.Partial {
				t.Errorf("%q: hit %d not partial", q, h.ID)
			}
			out = append(out, h.ID)
		}
		slices.Sort(out)
		return out
	}
	if got := ids("what can I cook with spinach and flour"); !slices.Equal(got, []uint32{1}) {
		t.Errorf("cook with spinach and flour: %v, want [1]", got)
	}
	if got := ids("cook eggs with spinach and flour"); !slices.Equal(got, []uint32{1, 3}) {
		t.Errorf("cook eggs with spinach and flour: %v, want [1 3]", got)
	}
	x.Apply([]Doc{{ID: 4, Seq: 1, Text: Text{ColName: "Spinach Chef", ColTags: "cooking"}}})
	if got := ids("what can I cook with spinach and flour"); !slices.Equal(got, []uint32{4}) {
		t.Errorf("with a document matching two of three words: %v, want [4]", got)
	}
}
