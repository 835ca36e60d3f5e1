package search

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
)

// Phrase proximity. A document in which words of the question stand next
// to each other ("train tickets", "book a hotel room") answers it better
// than one that has them pages apart, so a hit's score grows by up to
// proximityBoost: by that share of it times the share of the question's
// neighbouring word pairs (in the question's order, stop words and noise
// left out) that meet in the document within proximityWindow positions
// of each other, in either order, through any of the words they match
// (the word itself, a prefix, a typo, a related word). As in Lucene's
// sloppy phrase queries, a word or two in between ("book a room", "cook
// with eggs") still counts.
//
// Positions are kept for the columns that read as sentences or names
// (phraseCol), the first maxPhrase words of them: per document, each
// word as its rank in the document's word list (wordList), a varint of
// rank+1, a 0 between columns. That is about a byte a word, against the
// four of a term id.
const (
	proximityBoost  = 0.3
	proximityWindow = 2
	maxPhrase       = 256
	// phraseBreak separates columns in analysis.phrase, and stands for a
	// word whose index it cannot hold.
	phraseBreak = 0xFFFF
)

// phraseCol tells the columns whose word order is kept. Tags and the
// provider are lists and a name, not sentences; skill names are kept, one
// after another, since a skill's name is the phrase people type.
var phraseCol = [NumCols]bool{ColName: true, ColSkills: true, ColDescription: true, ColExamples: true, ColQueries: true}

// phraseList is a document's phrase columns, encoded (see above).
type phraseList []byte

// encodePhrase encodes an analysis' phrase, given each of its words'
// rank in the document's sorted word list.
func encodePhrase(b []byte, phrase []uint16, rank []int) []byte {
	for _, i := range phrase {
		if i == phraseBreak {
			b = append(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(rank[i])+1)
	}
	return b
}

// nearPairs returns the pairs of want, pairs of neighbouring query words
// (bit i: words i and i+1 of n), that meet within proximityWindow
// positions in the document; it stops reading once all of them have. masks
// holds, by rank in the document's word list, the query words each of its
// words matches (none past its end).
func (l phraseList) nearPairs(masks []uint32, n int, want uint32) uint32 {
	if n < 2 {
		return 0
	}
	want &= 1<<(n-1) - 1
	var (
		last [MaxTokens]int // last position of each query word, +1; 0 unseen
		near uint32
	)
	pos := 0
	for len(l) > 0 {
		v, k := uvarint(l)
		if k <= 0 {
			break
		}
		l = l[k:]
		pos++
		if v == 0 {
			pos += proximityWindow // a column's end: nothing is near across it
			continue
		}
		var here uint32 // the query words this position's word matches
		if r := v - 1; r < uint64(len(masks)) {
			here = masks[r]
		}
		if here == 0 {
			continue
		}
		// Near words at earlier positions only: one word matching two
		// query words is no phrase.
		for b := here; b != 0; b &= b - 1 {
			i := bits.TrailingZeros32(b)
			if i > 0 && last[i-1] > 0 && pos-last[i-1] <= proximityWindow {
				near |= 1 << (i - 1)
			}
			if i+1 < n && last[i+1] > 0 && pos-last[i+1] <= proximityWindow {
				near |= 1 << i
			}
		}
		if near&want == want {
			break
		}
		for b := here; b != 0; b &= b - 1 {
			last[bits.TrailingZeros32(b)] = pos
		}
	}
	return near & want
}

// wordMask is an indexed word and the query words matching it.
type wordMask struct {
	id   uint32
	mask uint32
}

// wordMasks lists the words the query words match, by id, each with the
// query words (a bit each) that match it.
func wordMasks(qws []queryWord) []wordMask {
	var out []wordMask
	for i, qw := range qws {
		for _, e := range qw.exps {
			out = append(out, wordMask{e.id, 1 << i})
		}
	}
	slices.SortFunc(out, func(a, b wordMask) int { return cmp.Compare(a.id, b.id) })
	merged := out[:0]
	for _, w := range out {
		if n := len(merged); n > 0 && merged[n-1].id == w.id {
			merged[n-1].mask |= w.mask
			continue
		}
		merged = append(merged, w)
	}
	return merged
}

// rankMasks returns, by rank in l, the query words (of keep) matching
// each word of l, given the matched words by id (wordMasks), in masks'
// space; it stops after the last matched word. It walks l's ids without
// decoding frequencies.
func (l wordList) rankMasks(ws []wordMask, keep uint32, masks []uint32) []uint32 {
	masks = masks[:0]
	id, j := uint32(0), 0
	for len(l) > 0 && j < len(ws) {
		gap, n := uvarint(l)
		l = l[n:]
		_, m := uvarint(l)
		l = l[m:]
		id += uint32(gap)
		for j < len(ws) && ws[j].id < id {
			j++
		}
		var v uint32
		if j < len(ws) && ws[j].id == id {
			v = ws[j].mask & keep
			j++
		}
		masks = append(masks, v)
	}
	return masks
}

// proximity scales a score by the share of the query's word pairs found
// near each other.
func proximity(score float64, near uint32, words int) float64 {
	if near == 0 || words < 2 {
		return score
	}
	return score * (1 + proximityBoost*float64(bits.OnesCount32(near))/float64(words-1))
}

// phraseColNibbles has, for each column whose word order is kept, the
// lowest bit of its frequency in a posting's tf.
var phraseColNibbles = func() uint32 {
	var m uint32
	for c, kept := range phraseCol {
		if kept {
			m |= 1 << (c * tfBits)
		}
	}
	return m
}()

// phraseCols is the set of phrase columns a posting's frequencies count
// the word in, as the lowest bit of each column's frequency.
func phraseCols(tf uint32) uint32 { return nonZeroCols(tf) & phraseColNibbles }

// possiblePairs is the pairs of neighbouring query words (bit i: words i
// and i+1) that could meet in a document matching the words in mask,
// given the phrase columns each is found in (phraseCols): both words must
// stand in one of them. A bound for pruning finer than maxProximity's,
// from the postings read to score the document.
func possiblePairs(cols *[MaxTokens]uint32, mask uint32) uint32 {
	var pairs uint32
	for b := mask & (mask >> 1); b != 0; b &= b - 1 {
		if i := bits.TrailingZeros32(b); cols[i]&cols[i+1] != 0 {
			pairs |= 1 << i
		}
	}
	return pairs
}

// maxProximity is the most proximity can make of a score of a document
// matching the query words in mask, of n: a bound for pruning (match.go).
// Only pairs of neighbouring query words the document matches both of can
// be near.
func maxProximity(score float64, mask uint32, n int) float64 {
	return proximity(score, mask&(mask>>1), n)
}
