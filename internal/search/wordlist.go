package search

import "encoding/binary"

// A document keeps its words — text term ids with their term frequencies
// — so that an update touches only the posting lists of the words whose
// frequencies changed (a new card version mostly edits a sentence or
// two). Kept as plain pairs they would take 8 bytes a word, a quarter of
// the index; encoded they take about 3: each word is the varint of the
// gap from the previous term id, then the varint of its frequencies,
// packed 3 bits a column when every count is below 8.

// wordList is a document's words, sorted by term id, encoded.
type wordList []byte

// packOrder lists the columns by how often their words are counted, so
// that the usual frequencies (a word or two in the description and the
// skills) pack into one byte.
var packOrder = [NumCols]int{ColDescription, ColSkills, ColTags, ColName, ColProvider, ColExamples, ColQueries}

const packBits = 3

// packTF encodes tf (tfBits per column) as a small number: the low bit
// clear for 3-bit counts in packOrder, set for tf as it is.
func packTF(tf uint32) uint64 {
	var v uint64
	for i, col := range packOrder {
		n := tf >> (col * tfBits) & tfMax
		if n >= 1<<packBits {
			return uint64(tf)<<1 | 1
		}
		v |= uint64(n) << (i * packBits)
	}
	return v << 1
}

func unpackTF(v uint64) uint32 {
	if v&1 == 1 {
		return uint32(v >> 1)
	}
	v >>= 1
	var tf uint32
	for i, col := range packOrder {
		tf |= uint32(v>>(i*packBits)&(1<<packBits-1)) << (col * tfBits)
	}
	return tf
}

// appendWords encodes ws (sorted by id, without repeats) onto b.
func appendWords(b []byte, ws []textPosting) []byte {
	prev := uint32(0)
	for _, w := range ws {
		b = binary.AppendUvarint(b, uint64(w.id-prev))
		b = binary.AppendUvarint(b, packTF(w.tf))
		prev = w.id
	}
	return b
}

// decode appends the words of l onto out.
func (l wordList) decode(out []textPosting) []textPosting {
	id := uint32(0)
	for len(l) > 0 {
		gap, n := binary.Uvarint(l)
		l = l[n:]
		tf, m := binary.Uvarint(l)
		l = l[m:]
		id += uint32(gap)
		out = append(out, textPosting{id: id, tf: unpackTF(tf)})
	}
	return out
}
