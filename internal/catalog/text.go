package catalog

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
)

// Full-text search runs on an in-memory inverted index rather than SQLite
// FTS4 or PostgreSQL tsvector. Measured on the 100,000-agent benchmark
// catalog: merely stepping through FTS4's 69,733 matches of a common word
// took 17 ms, and with the matchinfo() needed for ranking 79 ms, so a p99
// under 20 ms was out of reach; the in-memory index scores the same matches
// in about a millisecond, ranks identically on both databases, and cost
// ~300 µs less per stored card.

// Text columns, each with its BM25 weight: a word in the name or a tag says
// more about an agent than one in a long description.
const (
	colName = iota
	colTags
	colSkills
	colDescription
	colProvider
	numCols
)

var colWeights = [numCols]float64{5, 3, 3, 1, 2}

// BM25 parameters (Robertson & Zaragoza, "The Probabilistic Relevance
// Framework: BM25 and Beyond", 2009): the usual defaults.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Prefix matching serves search-as-you-type: the last query word, when it
// is no indexed word itself, matches the words it begins ("invoi" finds
// "invoice"), up to maxExpansions of them; words shorter than minPrefixLen
// never expand. Expanding every word would turn "document" into
// "documentation" too and match most of the catalog.
const (
	minPrefixLen  = 3
	maxExpansions = 64
	// tfBits is the width of one column's term frequency in a posting.
	tfBits = 6
	tfMax  = 1<<tfBits - 1
)

// searchText is what full-text search sees of an agent, by column.
type searchText [numCols]string

// skillText is the searchable part of one skill.
type skillText struct {
	id, name, description string
	tags, examples        []string
}

// textOfParts builds the searchable text. Upserts and index rebuilds from
// the database both go through it, so they index the same words.
func textOfParts(name, description, provider string, skills []skillText) searchText {
	var tags, names, desc strings.Builder
	desc.WriteString(description)
	for _, sk := range skills {
		for _, t := range sk.tags {
			tags.WriteString(t)
			tags.WriteByte(' ')
		}
		names.WriteString(sk.name)
		names.WriteByte(' ')
		names.WriteString(sk.id)
		names.WriteByte(' ')
		desc.WriteByte('\n')
		desc.WriteString(sk.description)
		for _, e := range sk.examples {
			desc.WriteByte('\n')
			desc.WriteString(e)
		}
	}
	var t searchText
	t[colName] = name
	t[colTags] = tags.String()
	t[colSkills] = names.String()
	t[colDescription] = desc.String()
	t[colProvider] = provider
	return t
}

// tokenize splits text into lowercase, stemmed words of letters and
// digits; the same function splits queries and documents.
func tokenize(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for i, w := range words {
		words[i] = stem(w)
	}
	return words
}

// stem folds English plurals with Harman's S-stemmer (D. Harman, "How
// effective is suffixing?", JASIS 42(1), 1991): conservative enough never
// to merge unrelated words, so "invoices" finds "invoice" but "documentation"
// stays apart from "document".
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

// queryTokens tokenizes query text, dropping repeats and overlong words.
func queryTokens(text string) []string {
	out := make([]string, 0, 4)
	for _, w := range tokenize(text) {
		if len(w) > maxTokenLen || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
		if len(out) == maxTokens {
			break
		}
	}
	return out
}

type textPosting struct {
	pk uint32
	tf uint32 // tfBits per column
}

type textTerm struct {
	word     string
	postings []textPosting // sorted by pk
}

// textIndex is the inverted index of words. It is guarded by the
// enclosing memIndex's mutex.
type textIndex struct {
	ids   map[string]uint32
	terms []textTerm
	// sorted lists term ids by word for prefix lookups; words added since
	// it was last sorted wait in unsorted.
	sorted   []uint32
	unsorted []uint32
	// colTotal sums column lengths over indexed docs, for average lengths.
	colTotal [numCols]uint64
	docs     int
}

func newTextIndex() textIndex {
	return textIndex{ids: make(map[string]uint32)}
}

// analyzed is a document's text reduced to per-word term frequencies (tfBits
// per column) and column lengths. Analysis needs no lock, so index builds
// run it beside the database reads.
type analyzed struct {
	tfs  map[string]uint32
	lens [numCols]uint16
}

func analyze(text searchText) analyzed {
	a := analyzed{tfs: make(map[string]uint32, 64)}
	for col, s := range text {
		words := tokenize(s)
		a.lens[col] = uint16(min(len(words), math.MaxUint16))
		for _, w := range words {
			if len(w) > maxTokenLen {
				continue
			}
			tf := a.tfs[w]
			if (tf>>(col*tfBits))&tfMax < tfMax {
				tf += 1 << (col * tfBits)
			}
			a.tfs[w] = tf
		}
	}
	return a
}

// add indexes a document's analyzed text and returns its term ids.
func (t *textIndex) add(pk uint32, a analyzed) []uint32 {
	ids := make([]uint32, 0, len(a.tfs))
	for w, tf := range a.tfs {
		id, ok := t.ids[w]
		if !ok {
			id = uint32(len(t.terms))
			t.terms = append(t.terms, textTerm{word: w})
			t.ids[w] = id
			t.unsorted = append(t.unsorted, id)
		}
		t.terms[id].postings = insertPosting(t.terms[id].postings, textPosting{pk: pk, tf: tf})
		ids = append(ids, id)
	}
	for c, l := range a.lens {
		t.colTotal[c] += uint64(l)
	}
	t.docs++
	if len(t.unsorted) > 1024 {
		t.sortWords()
	}
	return ids
}

// compact trims the spare capacity append left in posting lists.
func (t *textIndex) compact() {
	for i := range t.terms {
		if p := t.terms[i].postings; cap(p) > len(p)+len(p)/8+4 {
			t.terms[i].postings = slices.Clone(p)
		}
	}
}

func (t *textIndex) remove(pk uint32, ids []uint32, lens [numCols]uint16) {
	for _, id := range ids {
		p := t.terms[id].postings
		i, found := slices.BinarySearchFunc(p, pk, func(e textPosting, pk uint32) int { return cmp.Compare(e.pk, pk) })
		if found {
			t.terms[id].postings = slices.Delete(p, i, i+1)
		}
	}
	for c, l := range lens {
		t.colTotal[c] -= uint64(l)
	}
	t.docs--
}

func insertPosting(p []textPosting, e textPosting) []textPosting {
	if n := len(p); n == 0 || p[n-1].pk < e.pk {
		return append(p, e)
	}
	i, found := slices.BinarySearchFunc(p, e.pk, func(x textPosting, pk uint32) int { return cmp.Compare(x.pk, pk) })
	if found {
		p[i] = e
		return p
	}
	return slices.Insert(p, i, e)
}

func (t *textIndex) sortWords() {
	t.sorted = append(t.sorted, t.unsorted...)
	t.unsorted = t.unsorted[:0]
	slices.SortFunc(t.sorted, func(a, b uint32) int { return strings.Compare(t.terms[a].word, t.terms[b].word) })
}

// expand returns the term ids a query word matches: the word itself if it
// is indexed, else when prefix is set the words it begins.
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
		w := t.terms[t.sorted[i]].word
		if !strings.HasPrefix(w, word) {
			break
		}
		if w != word {
			out = append(out, t.sorted[i])
		}
	}
	for _, id := range t.unsorted {
		if len(out) >= maxExpansions {
			break
		}
		if w := t.terms[id].word; w != word && strings.HasPrefix(w, word) {
			out = append(out, id)
		}
	}
	return out
}

// match returns the docs containing every query word (or a word it
// prefixes), scored by BM25 and sorted by pk.
func (x *memIndex) textMatch(words []string) []hit {
	t := &x.text
	if t.docs == 0 {
		return nil
	}
	var avg [numCols]float64
	for c := range avg {
		avg[c] = max(float64(t.colTotal[c])/float64(t.docs), 1)
	}
	n := float64(t.docs)
	var result []hit
	for i, w := range words {
		ids := t.expand(w, i == len(words)-1)
		if len(ids) == 0 {
			return nil
		}
		total := 0
		for _, id := range ids {
			total += len(t.terms[id].postings)
		}
		scored := make([]hit, 0, total)
		for _, id := range ids {
			p := t.terms[id].postings
			df := float64(len(p))
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			for _, e := range p {
				scored = append(scored, hit{pk: e.pk, score: bm25(e.tf, &x.lens[e.pk], &avg, idf)})
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

func bm25(tf uint32, lens *[numCols]uint16, avg *[numCols]float64, idf float64) float64 {
	s := 0.0
	for c := range numCols {
		f := float64((tf >> (c * tfBits)) & tfMax)
		if f == 0 {
			continue
		}
		norm := 1 - bm25B + bm25B*float64(lens[c])/avg[c]
		s += colWeights[c] * idf * f * (bm25K1 + 1) / (f + bm25K1*norm)
	}
	return s
}

// mergeHits sorts hits by pk and sums the scores of repeated pks (one doc
// matching several expansions of a prefix).
func mergeHits(h []hit) []hit {
	slices.SortFunc(h, func(a, b hit) int { return cmp.Compare(a.pk, b.pk) })
	out := h[:0]
	for _, e := range h {
		if n := len(out); n > 0 && out[n-1].pk == e.pk {
			out[n-1].score += e.score
			continue
		}
		out = append(out, e)
	}
	return out
}

// intersectHits keeps the pks present in both sorted lists, summing scores.
func intersectHits(a, b []hit) []hit {
	out := a[:0]
	j := 0
	for _, e := range a {
		for j < len(b) && b[j].pk < e.pk {
			j++
		}
		if j == len(b) {
			break
		}
		if b[j].pk == e.pk {
			e.score += b[j].score
			out = append(out, e)
		}
	}
	return out
}
