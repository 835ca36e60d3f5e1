package search

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
)

// Explanation says why a document matched a query text and how it
// scored: for each query word, the indexed word it matched through, how
// (the word itself, a prefix, a typo, a related word), and in which
// columns. Its Score is the document's Hit.Score for that text.
type Explanation struct {
	ID      uint32
	Score   float64
	Partial bool
	Words   []WordMatch
	// Near counts the pairs of neighbouring query words that stand near
	// each other in the document, which raised its score (phrase.go).
	Near int
}

// WordMatch is how one query word met the document; Matched is empty
// when it did not.
type WordMatch struct {
	Word    string
	Matched string
	Kind    MatchKind
	// Weight is the kind's weight against the word itself (1).
	Weight float64
	// Score is what this word adds to the document's score, before the
	// share of words matched scales a partial match (see coord).
	Score   float64
	Columns []string
}

// ColumnNames name the text columns in explanations.
var ColumnNames = [NumCols]string{"name", "tags", "skills", "description", "provider", "examples", "queries"}

func (k MatchKind) String() string {
	switch k {
	case MatchWord:
		return "word"
	case MatchPrefix:
		return "prefix"
	case MatchTypo:
		return "typo"
	case MatchRelated:
		return "related"
	}
	return "unknown"
}

// Explain explains how document id matches text, or reports false when
// the document is not in the index or matches none of the words. It is
// asked of hits: whether a document matching fewer than minMatch words is
// one depends on the others (textMatch), which it does not look at.
// Filters are not its concern: it explains the text.
func (x *Index) Explain(text string, id uint32) (Explanation, bool) {
	tokens := Tokens(text)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(tokens) == 0 || int(id) >= len(x.docs) || !x.docs[id].present {
		return Explanation{}, false
	}
	qws := x.expandQuery(tokens)
	tfs := map[uint32]uint32{}
	for _, w := range x.docs[id].words.decode(nil) {
		tfs[w.id] = w.tf
	}
	t := &x.text
	var avg [NumCols]float64
	for c := range avg {
		avg[c] = max(float64(t.colTotal[c])/float64(t.docs), 1)
	}
	n := float64(t.docs)
	e := Explanation{ID: id}
	var mask uint32
	for i, qw := range qws {
		wm := WordMatch{Word: qw.word}
		found := false
		for _, ex := range qw.exps {
			tf, ok := tfs[ex.id]
			if !ok {
				continue
			}
			s := ex.weight * bm25(tf, &x.lens[id], &avg, idfOf(n, float64(len(t.terms[ex.id].postings))))
			if !found || s > wm.Score {
				wm.Matched, wm.Kind, wm.Weight, wm.Score = t.terms[ex.id].word, ex.kind, ex.weight, s
				wm.Columns = wm.Columns[:0]
				for c := range NumCols {
					if (tf>>(c*tfBits))&tfMax != 0 {
						wm.Columns = append(wm.Columns, ColumnNames[c])
					}
				}
			}
			found = true
		}
		if found {
			mask |= 1 << i
			e.Score += wm.Score
		}
		e.Words = append(e.Words, wm)
	}
	if mask == 0 {
		return Explanation{}, false
	}
	e.Score = coord(e.Score, mask, len(qws))
	// Only pairs of neighbouring words both matched can be near.
	near := x.docs[id].phrase.nearPairs(x.docs[id].words.rankMasks(wordMasks(qws), mask, nil), len(qws), mask&(mask>>1))
	e.Near = bits.OnesCount32(near)
	e.Score = proximity(e.Score, near, len(qws))
	e.Partial = bits.OnesCount32(mask) < len(qws)
	return e, true
}

// Completion is a value a search box may offer for what has been typed.
type Completion struct {
	Field, Value string
	// Count is the number of documents carrying the value.
	Count int
}

// CompleteQuery asks for the values a search box may offer for what has
// been typed.
type CompleteQuery struct {
	Prefix string
	// Fields are the fields whose values are offered (tags, skill names).
	Fields []string
	// Filters and Exclude restrict the documents whose values are offered
	// and counted, as in a Query: the caller's scope, so that a word only
	// hidden documents hold is never offered.
	Filters []Filter
	Exclude []Facet
	Limit   int
}

// Complete returns the values of q's fields that the typed prefix begins,
// or one of whose words it begins, without regard to case or diacritics,
// carried by documents matching q's filters, the most common first, at
// most q.Limit; ErrNotReady before the initial build ends. The console's
// search box offers them as the user types.
func (x *Index) Complete(q CompleteQuery) ([]Completion, error) {
	p := strings.TrimSpace(q.Prefix)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.ready {
		return nil, ErrNotReady
	}
	if p == "" || q.Limit <= 0 {
		return nil, nil
	}
	p = foldAny(p)
	var candidates []Completion
	var ids []uint32
	for _, f := range q.Fields {
		for _, id := range x.byField[f] {
			t := &x.terms[id]
			if len(t.postings) == 0 {
				continue
			}
			v := foldAny(t.display)
			if strings.HasPrefix(v, p) || strings.Contains(v, " "+p) {
				candidates = append(candidates, Completion{Field: f, Value: t.display})
				ids = append(ids, id)
			}
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	visible := x.filtered(q.Filters, q.Exclude)
	out := candidates[:0]
	for i, c := range candidates {
		postings := x.terms[ids[i]].postings
		if len(visible) == len(x.all) {
			c.Count = len(postings)
		} else {
			c.Count = countCommon(postings, visible)
		}
		if c.Count > 0 {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Completion) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return cmp.Or(strings.Compare(a.Value, b.Value), strings.Compare(a.Field, b.Field))
	})
	return out[:min(len(out), q.Limit)], nil
}

// countCommon counts the values two sorted lists share.
func countCommon(a, b []uint32) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	n, lo := 0, 0
	for _, v := range a {
		j, ok := gallop(b[lo:], v)
		lo += j
		if ok {
			n++
		}
		if lo >= len(b) {
			break
		}
	}
	return n
}

// foldAny folds text as analysis does (case, diacritics, width).
func foldAny(s string) string {
	if isASCIIWord(s) {
		return strings.ToLower(s)
	}
	return fold(s)
}
