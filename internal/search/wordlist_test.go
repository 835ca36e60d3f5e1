package search

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPackTFRoundTrip(t *testing.T) {
	one := func(col int, n uint32) uint32 { return n << (col * tfBits) }
	cases := []uint32{
		0,
		one(ColDescription, 1),
		one(ColSkills, 1) | one(ColDescription, 2),
		one(ColName, 7) | one(ColProvider, 7),
		one(ColDescription, 8), // past 3 bits: kept whole
		one(ColTags, tfMax) | one(ColName, 1),
		1<<(NumCols*tfBits) - 1,
	}
	for _, tf := range cases {
		if got := unpackTF(packTF(tf)); got != tf {
			t.Errorf("unpackTF(packTF(%#x)) = %#x", tf, got)
		}
	}
	if p := packTF(one(ColDescription, 1) | one(ColSkills, 1)); p >= 128 {
		t.Errorf("a word once in the description and once in the skills packs to %d, more than one varint byte", p)
	}
}

func TestWordListRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 200 {
		var ws []textPosting
		id := uint32(0)
		for range r.IntN(300) {
			id += 1 + uint32(r.ExpFloat64()*float64(1+r.IntN(1<<r.IntN(24))))
			tf := uint32(0)
			for c := range NumCols {
				if r.IntN(3) == 0 {
					tf |= uint32(r.IntN(tfMax+1)) << (c * tfBits)
				}
			}
			ws = append(ws, textPosting{id: id, tf: tf})
		}
		got := wordList(appendWords(nil, ws)).decode(nil)
		if !slices.Equal(got, ws) {
			t.Fatalf("decoded %d words differ from the %d encoded", len(got), len(ws))
		}
	}
}
