package search

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
)

// Full-text search runs on this in-memory inverted index rather than
// SQLite FTS4 or PostgreSQL tsvector. Measured on the 100,000-agent
// benchmark catalog: merely stepping through FTS4's 69,733 matches of a
// common word took 17 ms, and with the matchinfo() needed for ranking
// 79 ms, so a p99 under 20 ms was out of reach; the in-memory index scores
// the same matches in about a millisecond and ranks identically on both
// databases.

// BM25 parameters (Robertson & Zaragoza, "The Probabilistic Relevance
// Framework: BM25 and Beyond", 2009): the usual defaults.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Prefix matching serves search-as-you-type: the last query word, when it
// is no indexed word itself, matches the words it begins ("invoi" finds
// "invoice"), up to maxExpansions of them (the first in byte order);
// words shorter than minPrefixLen never expand. Expanding every word would
// turn "document" into "documentation" too and match most of the catalog.
const (
	minPrefixLen  = 3
	maxExpansions = 64
	// tfBits is the width of one column's term frequency in a posting:
	// NumCols of them fit a uint32. Counts stop at tfMax (15), where
	// BM25's term frequency has long saturated: 15 occurrences score
	// 2.04 of at most 2.2, 31 would score 2.10.
	tfBits = 4
	tfMax  = 1<<tfBits - 1
)

// A posting's frequencies must fit its uint32: this fails to compile when
// a column is added that does not.
var _ [32 - NumCols*tfBits]struct{}

// Query text limits: more tokens than this add cost, not precision.
const (
	MaxTokens   = 16
	MaxTokenLen = 64
)

// Tokens returns the words a query text searches for: analyzed as
// documents are (see analyze.go), without the words that say only that a
// question is asked ("find me an agent that…", queryNoise), repeats or
// overlong words, at most MaxTokens. A text of nothing but stop words and
// such keeps them all ("the who"). Callers use
// it to tell whether two query texts are the same search (cursor
// fingerprints).
func Tokens(text string) []string {
	raw := append(rawWords(text), camelParts(text)...)
	out := make([]string, 0, 4)
	add := func(all bool) {
		for _, w := range raw {
			a, stop := analyzeWord(w)
			if a == "" || (!all && (stop || queryNoise[w])) || slices.Contains(out, a) {
				continue
			}
			out = append(out, a)
			if len(out) == MaxTokens {
				return
			}
		}
	}
	add(false)
	if len(out) == 0 {
		add(true)
	}
	return out
}

// queryNoise are words of how people ask rather than of what they ask
// for. Every card is an agent, a tool, a service that helps: these words
// would match most of the catalog and outweigh the words that matter.
var queryNoise = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`find finds finding something someone anything anyone agent agents bot bots
		tool tools app apps assistant assistants service services help helps helping want wants need needs
		looking look please could would like way thing things let lets able many much lot lots kind sort`) {
		m[w] = true
	}
	return m
}()

// analysis is a document's text reduced to per-word term frequencies
// (tfBits per column) and column lengths, and the order of its words in
// the phrase columns (phrase.go). It needs no lock, so it runs before the
// index is locked, in parallel for batches.
type analysis struct {
	words []wordTF
	lens  [NumCols]uint16
	// phrase lists indexes into words in text order, phraseBreak between
	// columns, at most maxPhrase entries.
	phrase []uint16
}

type wordTF struct {
	word string
	tf   uint32
}

// wordIndexes recycles analyze's word indexes: a card has a hundred words
// or more, and a fresh map grows through several sizes to hold them.
var wordIndexes = sync.Pool{New: func() any { return make(map[string]int, 256) }}

func analyze(text *Text) analysis {
	idx := wordIndexes.Get().(map[string]int)
	defer func() {
		clear(idx)
		wordIndexes.Put(idx)
	}()
	var a analysis
	a.words = make([]wordTF, 0, 64)
	for col, s := range text {
		words := tokenize(s)
		inPhrase := phraseCol[col] && len(a.phrase) < maxPhrase
		if inPhrase && len(a.phrase) > 0 {
			a.phrase = append(a.phrase, phraseBreak)
		}
		n := len(words)
		for _, p := range camelParts(s) {
			if w, _ := analyzeWord(p); w != "" {
				words = append(words, w)
			}
		}
		a.lens[col] = uint16(min(len(words), math.MaxUint16))
		for j, w := range words {
			if len(w) > MaxTokenLen {
				continue
			}
			i, ok := idx[w]
			if !ok {
				i = len(a.words)
				idx[w] = i
				a.words = append(a.words, wordTF{word: w})
			}
			if tf := a.words[i].tf; (tf>>(col*tfBits))&tfMax < tfMax {
				a.words[i].tf = tf + 1<<(col*tfBits)
			}
			// The camel case parts after the column's words are no part of
			// its phrase: they would seem to follow its last word.
			if inPhrase && j < n && len(a.phrase) < maxPhrase {
				a.phrase = append(a.phrase, uint16(min(i, phraseBreak)))
			}
		}
	}
	return a
}

type textPosting struct {
	id uint32
	tf uint32 // tfBits per column
}

type textTerm struct {
	word     string
	postings []textPosting // sorted by id
	// cols has a bit set for each column the word was ever counted in,
	// by any document: what bounds its score (maxScore). Never cleared,
	// so it may claim more columns than the postings now hold, which
	// loosens the bound and never breaks it.
	cols uint8
}

// textIndex is the inverted index of words, guarded by the Index's mutex.
type textIndex struct {
	ids   map[string]uint32
	terms []textTerm
	// sorted lists term ids by word for prefix lookups; words added since
	// it was last sorted wait in unsorted.
	sorted   []uint32
	unsorted []uint32
	// colTotal sums column lengths over indexed docs, for average lengths.
	colTotal [NumCols]uint64
	docs     int
}

func newTextIndex() textIndex {
	return textIndex{ids: make(map[string]uint32)}
}

// termFor returns the id of a word, adding it when new.
func (t *textIndex) termFor(w string) uint32 {
	if id, ok := t.ids[w]; ok {
		return id
	}
	id := uint32(len(t.terms))
	t.terms = append(t.terms, textTerm{word: w})
	t.ids[w] = id
	t.unsorted = append(t.unsorted, id)
	if len(t.unsorted) > 1024 {
		t.sortWords()
	}
	return id
}

// sortWords merges the unsorted words into sorted: a sort of the few new
// words and a linear merge, so that adding words stays cheap however
// large the vocabulary.
func (t *textIndex) sortWords() {
	if len(t.unsorted) == 0 {
		return
	}
	byWord := func(a, b uint32) int { return strings.Compare(t.terms[a].word, t.terms[b].word) }
	slices.SortFunc(t.unsorted, byWord)
	merged := make([]uint32, 0, len(t.sorted)+len(t.unsorted))
	i, j := 0, 0
	for i < len(t.sorted) && j < len(t.unsorted) {
		if byWord(t.sorted[i], t.unsorted[j]) <= 0 {
			merged = append(merged, t.sorted[i])
			i++
		} else {
			merged = append(merged, t.unsorted[j])
			j++
		}
	}
	merged = append(append(merged, t.sorted[i:]...), t.unsorted[j:]...)
	t.sorted = merged
	t.unsorted = t.unsorted[:0]
}

func postingOrder(e textPosting, id uint32) int { return cmp.Compare(e.id, id) }

func idfOf(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// nonZeroCols has the lowest bit of each column's frequency in tf set
// where that frequency is not zero.
func nonZeroCols(tf uint32) uint32 {
	tf |= tf >> 1
	tf |= tf >> 2
	return tf & colNibbles
}

// colNibbles has the lowest bit of every column's frequency set.
const colNibbles = 0x11111111 >> (32 - NumCols*tfBits)

// bm25 is a word's score in a document: the sum over the columns its
// frequencies tf count it in of each column's BM25, weighted. Only those
// columns are visited (a word stands in one or two of seven).
func bm25(tf uint32, lens *[NumCols]uint16, avg *[NumCols]float64, idf float64) float64 {
	s := 0.0
	for nz := nonZeroCols(tf); nz != 0; nz &= nz - 1 {
		c := bits.TrailingZeros32(nz) / tfBits
		f := float64((tf >> (c * tfBits)) & tfMax)
		norm := 1 - bm25B + bm25B*float64(lens[c])/avg[c]
		s += colWeights[c] * idf * f * (bm25K1 + 1) / (f + bm25K1*norm)
	}
	return s
}
