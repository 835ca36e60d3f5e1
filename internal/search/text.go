package search

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
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
	// tfBits is the width of one column's term frequency in a posting.
	tfBits = 6
	tfMax  = 1<<tfBits - 1
)

// Query text limits: more tokens than this add cost, not precision.
const (
	MaxTokens   = 16
	MaxTokenLen = 64
)

// tokenize splits text into lowercase, stemmed words of letters and
// digits; the same function splits queries and documents.
func tokenize(text string) []string {
	words, ok := tokenizeASCII(text)
	if !ok {
		words = strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		})
	}
	for i, w := range words {
		words[i] = stem(w)
	}
	return words
}

// tokenizeASCII splits ASCII text as tokenize's general path does, in one
// pass over bytes instead of a function call per rune: most card text is
// ASCII, and text analysis is a large share of storing a new version and
// of building the index. It reports false, having done nothing, when text
// holds any other byte.
func tokenizeASCII(text string) ([]string, bool) {
	upper := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= 0x80 {
			return nil, false
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if upper {
		text = strings.ToLower(text)
	}
	words := make([]string, 0, len(text)/6+1)
	for i := 0; i < len(text); {
		for i < len(text) && !asciiWordByte[text[i]] {
			i++
		}
		start := i
		for i < len(text) && asciiWordByte[text[i]] {
			i++
		}
		if i > start {
			words = append(words, text[start:i])
		}
	}
	return words, true
}

// asciiWordByte tells the bytes of words in lowercase ASCII text: what
// unicode.IsLetter and unicode.IsDigit accept below 0x80.
var asciiWordByte = func() (t [256]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
	}
	return t
}()

// stem folds English plurals with Harman's S-stemmer (D. Harman, "How
// effective is suffixing?", JASIS 42(1), 1991): conservative enough never
// to merge unrelated words, so "invoices" finds "invoice" but
// "documentation" stays apart from "document".
func stem(w string) string {
	n := len(w)
	if n <= 3 || w[n-1] != 's' {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && !strings.HasSuffix(w, "eies") && !strings.HasSuffix(w, "aies"):
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "es") && !strings.HasSuffix(w, "aes") && !strings.HasSuffix(w, "ees") && !strings.HasSuffix(w, "oes"):
		return w[:n-1]
	case !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "ss"):
		return w[:n-1]
	}
	return w
}

// Tokens returns the words a query text searches for: tokenized, without
// repeats or overlong words, at most MaxTokens. Callers use it to tell
// whether two query texts are the same search (cursor fingerprints).
func Tokens(text string) []string {
	out := make([]string, 0, 4)
	for _, w := range tokenize(text) {
		if len(w) > MaxTokenLen || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
		if len(out) == MaxTokens {
			break
		}
	}
	return out
}

// analysis is a document's text reduced to per-word term frequencies
// (tfBits per column) and column lengths. It needs no
// lock, so it runs before the index is locked, in parallel for batches.
type analysis struct {
	words []wordTF
	lens  [NumCols]uint16
}

type wordTF struct {
	word string
	tf   uint32
}

// tfMaps recycles analyze's word counters: a card has a hundred words or
// more, and a fresh map grows through several sizes to hold them.
var tfMaps = sync.Pool{New: func() any { return make(map[string]uint32, 256) }}

func analyze(text *Text) analysis {
	tfs := tfMaps.Get().(map[string]uint32)
	defer func() {
		clear(tfs)
		tfMaps.Put(tfs)
	}()
	var a analysis
	for col, s := range text {
		words := tokenize(s)
		a.lens[col] = uint16(min(len(words), math.MaxUint16))
		for _, w := range words {
			if len(w) > MaxTokenLen {
				continue
			}
			tf := tfs[w]
			if (tf>>(col*tfBits))&tfMax < tfMax {
				tf += 1 << (col * tfBits)
			}
			tfs[w] = tf
		}
	}
	a.words = make([]wordTF, 0, len(tfs))
	for w, tf := range tfs {
		a.words = append(a.words, wordTF{w, tf})
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

// expand returns the term ids a query word matches: the word itself if a
// document holds it, else when prefix is set the first maxExpansions
// words, in byte order, that it begins and some document holds. Words
// left without documents by updates are skipped, so an updated index
// expands exactly as a fresh build does.
func (t *textIndex) expand(word string, prefix bool) []uint32 {
	if id, ok := t.ids[word]; ok && len(t.terms[id].postings) > 0 {
		return []uint32{id}
	}
	if !prefix || len(word) < minPrefixLen {
		return nil
	}
	var out []uint32
	i, _ := slices.BinarySearchFunc(t.sorted, word, func(id uint32, w string) int { return strings.Compare(t.terms[id].word, w) })
	for ; i < len(t.sorted) && len(out) < maxExpansions; i++ {
		id := t.sorted[i]
		w := t.terms[id].word
		if !strings.HasPrefix(w, word) {
			break
		}
		if w != word && len(t.terms[id].postings) > 0 {
			out = append(out, id)
		}
	}
	extra := false
	for _, id := range t.unsorted {
		if w := t.terms[id].word; w != word && strings.HasPrefix(w, word) && len(t.terms[id].postings) > 0 {
			out = append(out, id)
			extra = true
		}
	}
	if extra {
		slices.SortFunc(out, func(a, b uint32) int { return strings.Compare(t.terms[a].word, t.terms[b].word) })
		out = out[:min(len(out), maxExpansions)]
	}
	return out
}

// textMatch returns the docs containing every query word (or a word the
// last one begins), scored by BM25 and sorted by id.
func (x *Index) textMatch(words []string) []Hit {
	t := &x.text
	if t.docs == 0 {
		return nil
	}
	var avg [NumCols]float64
	for c := range avg {
		avg[c] = max(float64(t.colTotal[c])/float64(t.docs), 1)
	}
	n := float64(t.docs)
	var result []Hit
	for i, w := range words {
		ids := t.expand(w, i == len(words)-1)
		if len(ids) == 0 {
			return nil
		}
		total := 0
		for _, id := range ids {
			total += len(t.terms[id].postings)
		}
		scored := make([]Hit, 0, total)
		for _, id := range ids {
			p := t.terms[id].postings
			idf := idfOf(n, float64(len(p)))
			for _, e := range p {
				scored = append(scored, Hit{ID: e.id, Score: bm25(e.tf, &x.lens[e.id], &avg, idf)})
			}
		}
		if len(ids) > 1 {
			scored = mergeHits(scored)
		}
		if i == 0 {
			result = scored
		} else {
			result = intersectHits(result, scored)
		}
		if len(result) == 0 {
			return nil
		}
	}
	return result
}

func idfOf(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

func bm25(tf uint32, lens *[NumCols]uint16, avg *[NumCols]float64, idf float64) float64 {
	s := 0.0
	for c := range NumCols {
		f := float64((tf >> (c * tfBits)) & tfMax)
		if f == 0 {
			continue
		}
		norm := 1 - bm25B + bm25B*float64(lens[c])/avg[c]
		s += colWeights[c] * idf * f * (bm25K1 + 1) / (f + bm25K1*norm)
	}
	return s
}

// mergeHits sorts hits by id and sums the scores of repeated ids (one doc
// matching several expansions of a prefix). The sort is stable so that
// scores are summed in expansion order, the same in every index.
func mergeHits(h []Hit) []Hit {
	slices.SortStableFunc(h, func(a, b Hit) int { return cmp.Compare(a.ID, b.ID) })
	out := h[:0]
	for _, e := range h {
		if n := len(out); n > 0 && out[n-1].ID == e.ID {
			out[n-1].Score += e.Score
			continue
		}
		out = append(out, e)
	}
	return out
}

// intersectHits keeps the ids present in both sorted lists, summing scores.
func intersectHits(a, b []Hit) []Hit {
	out := a[:0]
	j := 0
	for _, e := range a {
		for j < len(b) && b[j].ID < e.ID {
			j++
		}
		if j == len(b) {
			break
		}
		if b[j].ID == e.ID {
			e.Score += b[j].Score
			out = append(out, e)
		}
	}
	return out
}
