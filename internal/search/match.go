package search

import (
	"cmp"
	"hash/fnv"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Ranked matching. A query's words each match a document through the
// word itself, or (weighing less) a word the last one begins, a word one
// edit away from a word no document holds, or a related word
// (synonyms.go). A document matches when it holds at least minMatch of
// the query words this way: all of one or two words, and for longer
// questions half of them, so that one stray word neither empties the
// result nor drags in the whole catalog. Documents matching every word
// rank first (Hit.Partial), each part by its BM25 score: the sum over the
// words it matches of the best weighted score of their matches, scaled for
// partial matches by the share of the words they match (coord).

// MatchKind says how a query word met a document's word.
type MatchKind uint8

const (
	MatchWord MatchKind = iota
	MatchPrefix
	MatchTypo
	MatchRelated
)

// Weights of the ways a word matches, against the word itself.
const (
	prefixWeight = 1
	typoWeight   = 0.6
	// maxTypos bounds the words one misspelt word expands to.
	maxTypos = 16
	// maxLooseShare: a typo or related word held by more than 1 in
	// maxLooseShare documents (and more than minLooseDocs) is not matched
	// ("pdf" is related to "document", which most cards say): it tells
	// little, weighs little (low idf), and would make the query match
	// most of the catalog, at the cost of counting facets over all of it.
	maxLooseShare = 5
	minLooseDocs  = 100
	// minTypoLen is the shortest query word (in bytes, ASCII only) that
	// may match a word one edit away: shorter ones have too many
	// neighbours ("cat": car, cap, cut…).
	minTypoLen = 5
)

// minMatch is how many of the query words a document must match: one of
// one or two, half of more; when no document matches that many, those
// matching the most words do (textMatch). The pairs of characters a text in a script
// without spaces is cut into (analyze.go) do not count: they are many for
// a short phrase, and one shared pair is a match, ranked by how many more
// it shares.
func minMatch(tokens []string) int {
	n := 0
	for _, w := range tokens {
		if r, _ := utf8.DecodeRuneInString(w); !unspaced(r) {
			n++
		}
	}
	if n <= 2 {
		return 1
	}
	return n - n/2
}

func words(qws []queryWord) []string {
	out := make([]string, len(qws))
	for i, qw := range qws {
		out[i] = qw.word
	}
	return out
}

// expansion is one indexed word a query word matches.
type expansion struct {
	id     uint32
	weight float64
	kind   MatchKind
}

type queryWord struct {
	word string
	exps []expansion
	// bound is the most any document can score through this word.
	bound float64
}

// expandQuery finds the indexed words each query word matches. The caller
// holds x.mu for reading.
func (x *Index) expandQuery(tokens []string) []queryWord {
	t := &x.text
	qws := make([]queryWord, len(tokens))
	n := float64(t.docs)
	for i, w := range tokens {
		qw := queryWord{word: w}
		add := func(id uint32, weight float64, kind MatchKind) {
			if df := len(t.terms[id].postings); (kind == MatchTypo || kind == MatchRelated) && df > minLooseDocs && df*maxLooseShare > t.docs {
				return
			}
			for _, e := range qw.exps {
				if e.id == id {
					return
				}
			}
			qw.exps = append(qw.exps, expansion{id, weight, kind})
		}
		if id, ok := t.ids[w]; ok && len(t.terms[id].postings) > 0 {
			add(id, 1, MatchWord)
		} else {
			if i == len(tokens)-1 {
				for _, id := range t.prefixed(w) {
					add(id, prefixWeight, MatchPrefix)
				}
			}
			if len(qw.exps) == 0 {
				for _, id := range t.typos(w) {
					add(id, typoWeight, MatchTypo)
				}
			}
		}
		for _, r := range related(w) {
			if id, ok := t.ids[r.word]; ok && len(t.terms[id].postings) > 0 {
				add(id, r.weight, MatchRelated)
			}
		}
		for _, e := range qw.exps {
			tt := &t.terms[e.id]
			qw.bound = max(qw.bound, e.weight*idfOf(n, float64(len(tt.postings)))*colsBound(tt.cols))
		}
		qws[i] = qw
	}
	return qws
}

// colsBound is the most a word counted in the given columns can add to
// a document's BM25 score, per unit of idf: each column's term
// saturates below k1+1.
func colsBound(cols uint8) float64 {
	s := 0.0
	for c := range NumCols {
		if cols&(1<<c) != 0 {
			s += colWeights[c]
		}
	}
	return s * (bm25K1 + 1)
}

// colsOf is the set of columns a posting's frequencies count the word in.
func colsOf(tf uint32) uint8 {
	var cols uint8
	for c := range NumCols {
		if (tf>>(c*tfBits))&tfMax != 0 {
			cols |= 1 << c
		}
	}
	return cols
}

// prefixed returns the first maxExpansions words, in byte order, that
// word begins (itself excepted) and some document holds; none for words
// shorter than minPrefixLen. Words left without documents by updates are
// skipped, so an updated index expands exactly as a fresh build does.
func (t *textIndex) prefixed(word string) []uint32 {
	if len(word) < minPrefixLen {
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

// typoAlphabet is what an edit may insert or substitute: index words of
// ASCII text are lowercase letters and digits.
const typoAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// typos returns the words some document holds that are one edit (a
// deletion, insertion, substitution or swap of adjacent letters: the
// optimal string alignment distance) from word, the first maxTypos in byte
// order; none for short or non-ASCII words. It generates the candidates
// (a few hundred map lookups) rather than scanning the vocabulary.
func (t *textIndex) typos(word string) []uint32 {
	if len(word) < minTypoLen || !isASCIIWord(word) {
		return nil
	}
	var out []uint32
	seen := map[string]bool{word: true}
	try := func(w string) {
		if seen[w] {
			return
		}
		seen[w] = true
		if id, ok := t.ids[w]; ok && len(t.terms[id].postings) > 0 {
			out = append(out, id)
		}
	}
	b := []byte(word)
	for i := range len(b) {
		try(string(b[:i]) + string(b[i+1:]))
		if i+1 < len(b) {
			b[i], b[i+1] = b[i+1], b[i]
			try(string(b))
			b[i], b[i+1] = b[i+1], b[i]
		}
		for j := 0; j < len(typoAlphabet); j++ {
			c := b[i]
			b[i] = typoAlphabet[j]
			try(string(b))
			b[i] = c
		}
	}
	for i := 0; i <= len(b); i++ {
		for j := 0; j < len(typoAlphabet); j++ {
			try(word[:i] + typoAlphabet[j:j+1] + word[i:])
		}
	}
	slices.SortFunc(out, func(a, b uint32) int { return strings.Compare(t.terms[a].word, t.terms[b].word) })
	return out[:min(len(out), maxTypos)]
}

// match is a document matching a query, with the query words it matches
// (a bit each).
type match struct {
	id   uint32
	mask uint32
}

// masks recycles textMatch's per-document word masks.
var masks sync.Pool

// textMatch returns the documents matching at least minMatch of the query
// words, in id order, without scoring them, appended to out[:0] (a
// search's scratch: see scratch).
func (x *Index) textMatch(qws []queryWord, out []match) []match {
	t := &x.text
	need := minMatch(words(qws))
	out = out[:0]
	if len(qws) == 1 && len(qws[0].exps) == 1 {
		for _, e := range t.terms[qws[0].exps[0].id].postings {
			out = append(out, match{e.id, 1})
		}
		return out
	}
	var m []uint32
	if pm, ok := masks.Get().(*[]uint32); ok && len(*pm) >= len(x.docs) {
		m = *pm
	} else {
		m = make([]uint32, len(x.docs)+len(x.docs)/4+64)
	}
	defer masks.Put(&m)
	// Touched documents in id order: noted as they come and sorted when
	// few, else found by a scan of the masks, which is linear in the
	// catalog but sequential. The postings' total tells which, before
	// noting any.
	postings := 0
	for _, qw := range qws {
		for _, e := range qw.exps {
			postings += len(t.terms[e.id].postings)
		}
	}
	scan := postings*16 >= len(x.docs)
	var touched []uint32
	for i, qw := range qws {
		for _, e := range qw.exps {
			ps := t.terms[e.id].postings
			if scan {
				for _, p := range ps {
					m[p.id] |= 1 << i
				}
				continue
			}
			for _, p := range ps {
				if m[p.id] == 0 {
					touched = append(touched, p.id)
				}
				m[p.id] |= 1 << i
			}
		}
	}
	// Beside the matches, the documents matching the most words short of
	// need are kept, for when there are no matches.
	var (
		near     []match
		nearBits int
	)
	keep := func(id, v uint32) {
		switch n := bits.OnesCount32(v); {
		case n >= need:
			out = append(out, match{id, v})
		case len(out) > 0 || n < nearBits:
		case n > nearBits:
			near, nearBits = append(near[:0], match{id, v}), n
		default:
			near = append(near, match{id, v})
		}
	}
	if !scan {
		slices.Sort(touched)
		for _, id := range touched {
			keep(id, m[id])
			m[id] = 0
		}
	} else {
		for id, v := range m[:len(x.docs)] {
			if v != 0 {
				keep(uint32(id), v)
				m[id] = 0
			}
		}
	}
	if len(out) == 0 {
		// No document matches enough of the words: rather than nothing,
		// those matching the most of them ("what can I cook with eggs and
		// spinach" finds the cooking agents), all partial matches.
		return append(out, near...)
	}
	return out
}

// rank returns the k first matches after the cursor in byScore order,
// scored. Matches fall into six groups in that order (demoted or not;
// then the query is the document's name (key, nameKey), or the document
// matches every word, or some), and a group is scored only while the page
// is not full of hits from the groups before it. Within a group, a
// document is scored only if the bounds of the words it matches
// (queryWord.bound) could reach the worst hit kept: the MaxScore idea
// (Turtle & Flood, "Query evaluation: strategies and optimizations",
// IP&M 31(6), 1995), here per document since the words it matches are
// known, against a floor of the scores of the documents already scored.
// Scoring walks each matched word's posting lists with a cursor, forward
// only, since the documents come in id order; word positions (phrase
// proximity) are read afterwards, for the documents whose bound could
// still reach the page, highest bound first. That bound counts only the
// pairs of query words that the postings just read put in one phrase
// column (possiblePairs), and only their words' positions are read. The
// caller holds x.mu for reading.
//
// With prune false every match is scored (benchmarks compare); stats say
// how much scoring was done.
func (x *Index) rank(qws []queryWord, ms []match, demoted []uint32, key uint64, k int, after *Hit, prune bool) ([]Hit, rankStats) {
	h := &topK[Hit]{k: k, order: byScore}
	var stats rankStats
	if k <= 0 || len(ms) == 0 {
		return h.sorted(), stats
	}
	full := uint32(1)<<len(qws) - 1
	sc := rankScratches.Get().(*rankScratch)
	defer rankScratches.Put(sc)
	// Each match's group flags: demoted, its name the query.
	flags := slices.Grow(sc.flags[:0], len(ms))[:len(ms)]
	clear(flags)
	sc.flags = flags
	if len(demoted) > 0 {
		dj := 0
		for i, m := range ms {
			for dj < len(demoted) && demoted[dj] < m.id {
				dj++
			}
			if dj < len(demoted) && demoted[dj] == m.id {
				flags[i] |= flagDemoted
			}
		}
	}
	t := &x.text
	var avg [NumCols]float64
	for c := range avg {
		avg[c] = max(float64(t.colTotal[c])/float64(t.docs), 1)
	}
	n := float64(t.docs)
	type cursor struct {
		postings []textPosting
		pos      int
		weight   float64
		idf      float64
	}
	var (
		wms   = wordMasks(qws)
		masks []uint32
		cands = sc.cands[:0]
	)
	defer func() { sc.cands = cands[:0] }()
	// near returns which of pairs, pairs of neighbouring query words,
	// stand near each other in document id (phrase.go), reading only the
	// words of those pairs.
	near := func(id, pairs uint32) uint32 {
		d := &x.docs[id]
		if len(d.phrase) == 0 || pairs == 0 {
			return 0
		}
		masks = d.words.rankMasks(wms, pairs|pairs<<1, masks)
		return d.phrase.nearPairs(masks, len(qws), pairs)
	}
	for _, id := range x.byName[key] {
		// A document whose name is the query matches every word.
		if j, ok := slices.BinarySearchFunc(ms, id, byMatchID); ok && ms[j].mask == full {
			flags[j] |= flagExact
		}
	}
	for _, group := range [6]struct{ demoted, exact, partial bool }{
		{false, true, false}, {false, false, false}, {false, false, true},
		{true, true, false}, {true, false, false}, {true, false, true},
	} {
		if prune && len(h.items) == k {
			break // every hit of this group ranks after those kept
		}
		groupHit := Hit{Demoted: group.demoted, Exact: group.exact, Partial: group.partial}
		if after != nil && groupOrder(groupHit, *after) < 0 {
			continue // the cursor is past this whole group
		}
		curs := make([][]cursor, len(qws))
		for i, qw := range qws {
			for _, e := range qw.exps {
				p := t.terms[e.id].postings
				curs[i] = append(curs[i], cursor{postings: p, weight: e.weight, idf: idfOf(n, float64(len(p)))})
			}
		}
		// First the words' scores (BM25), then word positions, read in
		// the order of what proximity could make of each score, and only
		// while that could reach the page: a document's final score lies
		// between its words' score and that bound, so the best words'
		// scores of the documents certainly on the page (after the
		// cursor) are a floor the page's worst hit will not fall below
		// (lower). Reading positions as documents come (in id order)
		// read them for every document that led a page still filling.
		lower := topK[float64]{k: k - len(h.items), order: byScoreValue}
		cands = cands[:0]
		for j, m := range ms {
			if (flags[j]&flagDemoted != 0) != group.demoted || (flags[j]&flagExact != 0) != group.exact || (m.mask != full) != group.partial {
				continue
			}
			if prune && lower.full() {
				bound := 0.0
				for b := m.mask; b != 0; b &= b - 1 {
					bound += qws[bits.TrailingZeros32(b)].bound
				}
				if maxProximity(coord(bound, m.mask, len(qws)), m.mask, len(qws)) < lower.items[0] {
					continue
				}
			}
			score := 0.0
			stats.docs++
			// The phrase columns each query word is found in: a pair of
			// words can only be near within one column (phraseCols).
			var cols [MaxTokens]uint32
			for b := m.mask; b != 0; b &= b - 1 {
				i := bits.TrailingZeros32(b)
				stats.postings += len(curs[i])
				best := 0.0
				for c := range curs[i] {
					cu := &curs[i][c]
					pos, ok := gallopPostings(cu.postings[cu.pos:], m.id)
					cu.pos += pos
					if ok {
						tf := cu.postings[cu.pos].tf
						cols[i] |= phraseCols(tf)
						best = max(best, cu.weight*bm25(tf, &x.lens[m.id], &avg, cu.idf))
					}
				}
				score += best
			}
			c := candidate{id: m.id, pairs: possiblePairs(&cols, m.mask), score: coord(score, m.mask, len(qws))}
			c.bound = proximity(c.score, c.pairs, len(qws))
			if prune && lower.full() && c.bound < lower.items[0] {
				continue
			}
			if after != nil {
				hit := groupHit
				hit.ID, hit.Score = c.id, c.score
				if byScore(hit, *after) <= 0 {
					continue // at its least, still on a page before
				}
				if hit.Score = c.bound; byScore(hit, *after) <= 0 {
					// Maybe on a page before: no floor.
					cands = append(cands, c)
					continue
				}
			}
			lower.offer(c.score)
			cands = append(cands, c)
		}
		if prune && lower.full() {
			kept := cands[:0]
			for _, c := range cands {
				if c.bound >= lower.items[0] {
					kept = append(kept, c)
				}
			}
			cands = kept
		}
		slices.SortFunc(cands, func(a, b candidate) int {
			if a.bound != b.bound {
				return cmp.Compare(b.bound, a.bound)
			}
			return cmp.Compare(a.id, b.id)
		})
		for _, c := range cands {
			if prune && len(h.items) == k && c.bound < h.items[0].Score {
				break // nor can any after it
			}
			hit := groupHit
			hit.ID, hit.Score = c.id, c.score
			if c.pairs != 0 {
				stats.phrases++
				hit.Score = proximity(c.score, near(c.id, c.pairs), len(qws))
			}
			if after != nil && byScore(hit, *after) <= 0 {
				continue
			}
			h.offer(hit)
		}
	}
	return h.sorted(), stats
}

// rankScratch is a rank's working lists, recycled as a search's are (see
// scratch): a flag byte per match and the candidates of a group.
type rankScratch struct {
	flags []uint8
	cands []candidate
}

var rankScratches = sync.Pool{New: func() any { return new(rankScratch) }}

const (
	flagDemoted uint8 = 1 << iota
	flagExact
)

// byScoreValue orders scores best first.
func byScoreValue(a, b float64) int { return cmp.Compare(b, a) }

// candidate is a document of a rank's group, scored by its words, with
// the pairs of query words that could stand near each other in it
// (possiblePairs) and the most their proximity could make of that score.
type candidate struct {
	id, pairs    uint32
	score, bound float64
}

// rankStats counts the work of a rank: the documents scored, the posting
// lists looked up for them, and the documents whose word positions were
// read.
type rankStats struct {
	docs, postings, phrases int
}

// coord scales the score of a document matching some of the n query
// words by the share it matches, as Lucene's classic similarity did
// (coord): among partial matches, one matching three words of four ranks
// above one matching two, unless the two weigh much more.
func coord(score float64, mask uint32, n int) float64 {
	if m := bits.OnesCount32(mask); m < n {
		return score * float64(m) / float64(n)
	}
	return score
}

// nameKey identifies a text's words as typed, folded (case, accents,
// punctuation and spacing aside; no stemming, no stop words dropped): a
// query with the key of a document's name is that name, and ranks the
// document first (Hit.Exact). Zero for a text of no words.
func nameKey(text string) uint64 {
	words := rawWords(text)
	if len(words) == 0 {
		return 0
	}
	h := fnv.New64a()
	for _, w := range words {
		h.Write([]byte(w))
		h.Write([]byte{0})
	}
	return max(h.Sum64(), 1)
}

// exact reports whether document id's name is the query whose nameKey is
// key.
func (x *Index) exact(id uint32, key uint64) bool {
	return key != 0 && x.docs[id].nameKey == key
}

func byMatchID(m match, id uint32) int { return cmp.Compare(m.id, id) }

// groupOrder compares hits by their group alone (demoted, then exact,
// then partial).
func groupOrder(a, b Hit) int {
	if a.Demoted != b.Demoted {
		if a.Demoted {
			return 1
		}
		return -1
	}
	if a.Exact != b.Exact {
		if a.Exact {
			return -1
		}
		return 1
	}
	if a.Partial != b.Partial {
		if a.Partial {
			return 1
		}
		return -1
	}
	return 0
}

// gallopPostings is gallop over a posting list.
func gallopPostings(list []textPosting, id uint32) (int, bool) {
	lo, step := 0, 1
	for lo+step-1 < len(list) && list[lo+step-1].id < id {
		lo += step
		step *= 2
	}
	// The first of list[lo:hi] not before id: slices.BinarySearchFunc's
	// search, without a call to compare each probe.
	hi := min(lo+step, len(list))
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if list[mid].id < id {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(list) && list[lo].id == id
}
