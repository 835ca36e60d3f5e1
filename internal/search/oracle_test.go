package search

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The oracle answers queries by brute force over the documents present,
// with none of the index's structures: no posting lists, no diffs, no
// bitsets, no top-k heaps, no pruning. It finds what each query word
// matches from the vocabulary alone (prefixes by scanning it, typos by
// an edit distance to every word, related words that some document
// holds), and applies the matching rules of match.go written out again.
// Both share text analysis (tokenizing, stemming), the related-word
// table, BM25 and the order of hits, which are not what is under test.
type oracle struct {
	docs        map[uint32]Doc
	facetFields []string
	stats       *oracleStats
}

var (
	testFacetFields = []string{"tag", "mode", "skill", "provider", "health"}
	// testPartFields are the fields of a document's parts (its skills):
	// filters on them must be met by one part.
	testPartFields = []string{"skill", "skill_name", "mode"}
)

func newOracle() *oracle {
	return &oracle{docs: make(map[uint32]Doc), facetFields: testFacetFields}
}

// allFacets is every term of a document: its Facets and its parts'.
func allFacets(d Doc) []Facet {
	out := slices.Clone(d.Facets)
	for _, p := range d.Parts {
		out = append(out, p...)
	}
	return out
}

func hasTerm(d Doc, field, value string) bool {
	return holds(allFacets(d), field, value)
}

func holds(fs []Facet, field, value string) bool {
	for _, f := range fs {
		if f.Field == field && strings.EqualFold(f.Value, strings.TrimSpace(value)) {
			return true
		}
	}
	return false
}

// meets reports whether terms fs meet filter f.
func meets(fs []Facet, f Filter) bool {
	for _, t := range f.Terms {
		if holds(fs, t.Field, t.Value) {
			return true
		}
	}
	if f.Match != nil {
		for _, df := range fs {
			if df.Field == f.Field && f.Match(df.Value) {
				return true
			}
		}
	}
	return false
}

// isPartFilter: every field the filter names is a part field.
func isPartFilter(f Filter) bool {
	if f.Match == nil && len(f.Terms) == 0 {
		return false
	}
	if f.Match != nil && !slices.Contains(testPartFields, f.Field) {
		return false
	}
	for _, t := range f.Terms {
		if !slices.Contains(testPartFields, t.Field) {
			return false
		}
	}
	return true
}

// oracleParts is a document's parts as part filters see them: each part's
// own terms of part fields and the document's (given in Facets); one part
// holding everything for a document with fewer than two.
func oracleParts(d Doc) [][]Facet {
	if len(d.Parts) < 2 {
		return [][]Facet{allFacets(d)}
	}
	var common []Facet
	for _, f := range d.Facets {
		if slices.Contains(testPartFields, f.Field) {
			common = append(common, f)
		}
	}
	out := make([][]Facet, len(d.Parts))
	for i, p := range d.Parts {
		out[i] = append(slices.Clone(common), p...)
	}
	return out
}

func (o *oracle) set(d Doc) {
	o.docs[d.ID] = d
	o.stats = nil
}

func (o *oracle) remove(id uint32) {
	delete(o.docs, id)
	o.stats = nil
}

// oracleStats is what the oracle derives from all documents, recomputed
// after every change.
type oracleStats struct {
	ids []uint32
	tfs map[uint32]map[string]uint32
	// phrase holds each document's words of the phrase columns in order,
	// "" between columns, as far as the index keeps them.
	phrase      map[uint32][]string
	lens        map[uint32][NumCols]uint16
	df          map[string]int
	sortedVocab []string
	avg         [NumCols]float64
	n           float64
	// expansions of query texts already asked (a query is asked again
	// for each page).
	expansions map[string][][]oracleExp
}

type oracleExp struct {
	word   string
	weight float64
}

func (o *oracle) compute() *oracleStats {
	if o.stats != nil {
		return o.stats
	}
	st := &oracleStats{tfs: map[uint32]map[string]uint32{}, phrase: map[uint32][]string{}, lens: map[uint32][NumCols]uint16{}, df: map[string]int{}}
	for id := range o.docs {
		st.ids = append(st.ids, id)
	}
	slices.Sort(st.ids)
	var total [NumCols]float64
	for _, id := range st.ids {
		d := o.docs[id]
		a := analyze(&d.Text)
		m := make(map[string]uint32, len(a.words))
		for _, w := range a.words {
			m[w.word] = w.tf
			st.df[w.word]++
		}
		st.tfs[id] = m
		var phrase []string
		for c, text := range d.Text {
			if !phraseCol[c] || len(phrase) >= maxPhrase {
				continue
			}
			if len(phrase) > 0 {
				phrase = append(phrase, "")
			}
			for _, w := range tokenize(text) {
				if len(phrase) < maxPhrase {
					phrase = append(phrase, w)
				}
			}
		}
		st.phrase[id] = phrase
		st.lens[id] = a.lens
		for c, l := range a.lens {
			total[c] += float64(l)
		}
	}
	st.n = float64(len(st.ids))
	for c := range st.avg {
		st.avg[c] = max(total[c]/max(st.n, 1), 1)
	}
	for w := range st.df {
		st.sortedVocab = append(st.sortedVocab, w)
	}
	slices.Sort(st.sortedVocab)
	o.stats = st
	return st
}

func (o *oracle) search(q Query) Result {
	tokens := Tokens(q.Text)
	st := o.compute()
	ids, vocab, sortedVocab, analyses, lens, avg, n := st.ids, st.df, st.sortedVocab, st.tfs, st.lens, st.avg, st.n
	// What each query word matches, by the spec in match.go, from the
	// vocabulary alone.
	type exp = oracleExp
	expansions, known := st.expansions[q.Text]
	if !known {
		expansions = make([][]exp, len(tokens))
	}
	for i, w := range tokens {
		if known {
			break
		}
		add := func(v string, weight float64) {
			if weight != 1 && vocab[v] > 100 && vocab[v]*5 > len(ids) {
				return // a loose match on a common word
			}
			for _, e := range expansions[i] {
				if e.word == v {
					return
				}
			}
			expansions[i] = append(expansions[i], exp{v, weight})
		}
		if vocab[w] > 0 {
			add(w, 1)
		} else {
			if i == len(tokens)-1 && len(w) >= 3 {
				n := 0
				for _, v := range sortedVocab {
					if v != w && strings.HasPrefix(v, w) && n < 64 {
						add(v, 1)
						n++
					}
				}
			}
			if len(expansions[i]) == 0 && len(w) >= 5 && isASCIIWord(w) {
				n := 0
				for _, v := range sortedVocab {
					if n < 16 && len(v) >= len(w)-1 && len(v) <= len(w)+1 && osaDistance(w, v) == 1 {
						add(v, 0.6)
						n++
					}
				}
			}
		}
		for _, r := range related(w) {
			if vocab[r.word] > 0 {
				add(r.word, r.weight)
			}
		}
	}
	if st.expansions == nil {
		st.expansions = map[string][][]oracleExp{}
	}
	st.expansions[q.Text] = expansions
	spaced := 0
	for _, w := range tokens {
		if !unspaced([]rune(w)[0]) {
			spaced++
		}
	}
	need := 1
	if spaced > 2 {
		need = (spaced + 1) / 2
	}
	// With no document matching need words, those matching the most do,
	// filters aside.
	most := 0
	for _, id := range ids {
		matched := 0
		for i := range tokens {
			for _, e := range expansions[i] {
				if _, ok := analyses[id][e.word]; ok {
					matched++
					break
				}
			}
		}
		most = max(most, matched)
	}
	need = max(1, min(need, most))

	var partFilters []Filter
	for _, f := range q.Filters {
		if isPartFilter(f) {
			partFilters = append(partFilters, f)
		}
	}
	// The terms each matching document is counted for in facets: with
	// part filters, those of the parts meeting them all and the document's
	// terms of other fields.
	counted := map[uint32][]Facet{}
	var hits []Hit
docs:
	for _, id := range ids {
		d := o.docs[id]
		for _, f := range q.Filters {
			if !meets(allFacets(d), f) {
				continue docs
			}
		}
		terms := allFacets(d)
		if len(partFilters) > 0 {
			terms = nil
			for _, f := range d.Facets {
				if !slices.Contains(testPartFields, f.Field) {
					terms = append(terms, f)
				}
			}
			for _, p := range d.Parts {
				for _, f := range p {
					if !slices.Contains(testPartFields, f.Field) {
						terms = append(terms, f)
					}
				}
			}
			met := false
		parts:
			for _, p := range oracleParts(d) {
				for _, f := range partFilters {
					if !meets(p, f) {
						continue parts
					}
				}
				met = true
				for _, f := range p {
					if slices.Contains(testPartFields, f.Field) {
						terms = append(terms, f)
					}
				}
			}
			if !met {
				continue docs
			}
		}
		counted[id] = terms
		for _, t := range q.Exclude {
			if hasTerm(d, t.Field, t.Value) {
				continue docs
			}
		}
		h := Hit{ID: id, SortKey: d.SortKey, Seq: d.Seq}
		for _, t := range q.Demote {
			h.Demoted = h.Demoted || hasTerm(d, t.Field, t.Value)
		}
		matched := 0
		held := make([]map[string]bool, len(tokens)) // the words each query word meets here
		for i := range tokens {
			best, found := 0.0, false
			held[i] = map[string]bool{}
			for _, e := range expansions[i] {
				tf, ok := analyses[id][e.word]
				if !ok {
					continue
				}
				l := lens[id]
				best = max(best, e.weight*bm25(tf, &l, &avg, idfOf(n, float64(vocab[e.word]))))
				found = true
				held[i][e.word] = true
			}
			if found {
				matched++
				h.Score += best
			}
		}
		if len(tokens) > 0 && matched < need {
			continue
		}
		h.Partial = matched < len(tokens)
		// A query that is the document's name, word for word as typed.
		h.Exact = len(tokens) > 0 && !h.Partial && len(rawWords(q.Text)) > 0 &&
			slices.Equal(rawWords(q.Text), rawWords(d.Text[ColName]))
		if h.Partial {
			h.Score = h.Score * float64(matched) / float64(len(tokens))
		}
		// Phrase proximity: pairs of neighbouring query words at two
		// positions at most proximityWindow apart, a column's end being
		// proximityWindow+1 positions long.
		if matched >= 2 {
			var pos []int
			p := 0
			for _, w := range st.phrase[id] {
				p++
				if w == "" {
					p += proximityWindow
				}
				pos = append(pos, p)
			}
			near := 0
			for i := 0; i+1 < len(tokens); i++ {
				found := false
				for a, wa := range st.phrase[id] {
					for b, wb := range st.phrase[id] {
						if a != b && wa != "" && wb != "" && held[i][wa] && held[i+1][wb] && abs(pos[a]-pos[b]) <= proximityWindow {
							found = true
						}
					}
				}
				if found {
					near++
				}
			}
			h.Score *= 1 + proximityBoost*float64(near)/float64(len(tokens)-1)
		}
		hits = append(hits, h)
	}

	res := Result{Total: len(hits), Facets: map[string][]FacetCount{}}
	for _, field := range o.facetFields {
		counts := map[string]int{}
		for _, h := range hits {
			seen := map[string]bool{}
			for _, f := range counted[h.ID] {
				if f.Field == field && !seen[strings.ToLower(f.Value)] {
					seen[strings.ToLower(f.Value)] = true
					counts[f.Value]++
				}
			}
		}
		fc := []FacetCount{}
		for v, c := range counts {
			fc = append(fc, FacetCount{v, c})
		}
		slices.SortFunc(fc, facetOrder)
		res.Facets[field] = fc[:min(len(fc), q.FacetLimit)]
	}
	order := byName
	if len(tokens) > 0 {
		order = byScore
	}
	slices.SortFunc(hits, order)
	var page []Hit
	for _, h := range hits {
		if q.After != nil && order(h, *q.After) <= 0 {
			continue
		}
		if len(page) == q.Limit {
			break
		}
		page = append(page, h)
	}
	res.Hits = page
	return res
}

// osaDistance is the optimal string alignment distance of two byte
// strings: insertions, deletions, substitutions and swaps of adjacent
// bytes (Damerau's edits, each substring edited once).
func osaDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// diffResults describes how got differs from want, or returns "".
func diffResults(got, want Result) string {
	if got.Total != want.Total {
		return fmt.Sprintf("total %d, want %d", got.Total, want.Total)
	}
	if len(got.Hits) != len(want.Hits) {
		return fmt.Sprintf("%d hits, want %d", len(got.Hits), len(want.Hits))
	}
	for i := range got.Hits {
		g, w := got.Hits[i], want.Hits[i]
		if g.ID != w.ID || g.SortKey != w.SortKey || g.Demoted != w.Demoted || g.Partial != w.Partial || g.Exact != w.Exact || g.Seq != w.Seq ||
			math.Abs(g.Score-w.Score) > 1e-9*max(1, math.Abs(w.Score)) {
			return fmt.Sprintf("hit %d = %+v, want %+v", i, g, w)
		}
	}
	for _, f := range testFacetFields {
		if !slices.Equal(got.Facets[f], want.Facets[f]) {
			return fmt.Sprintf("facet %s = %v, want %v", f, got.Facets[f], want.Facets[f])
		}
	}
	if len(got.Facets) != len(testFacetFields) {
		return fmt.Sprintf("%d facet fields, want %d", len(got.Facets), len(testFacetFields))
	}
	return ""
}

// Random catalogs. Words are made of a few syllables so that short
// prefixes begin many words (search-as-you-type expands to several, and
// past maxExpansions); media types are few so that wildcard unions are
// large.
var (
	syllables = []string{"in", "vo", "ice", "doc", "u", "ment", "pdf", "ta", "ra", "ex", "port", "s", "es"}
	tags      = []string{"finance", "legal", "travel", "ocr", "search", "chat", "code", "pdf", "billing", "hr"}
	modes     = []string{"text/plain", "text/html", "application/json", "application/pdf", "image/png", "image/jpeg", "audio/wav", "video/mp4"}
	providers = []string{"Acme", "Globex", "Initech", "Umbrella", "Hooli"}
	healths   = []string{"up", "down", "unknown", "removed"}
)

type gen struct{ r *rand.Rand }

func (g gen) word() string {
	var b strings.Builder
	for range 1 + g.r.IntN(4) {
		b.WriteString(syllables[g.r.IntN(len(syllables))])
	}
	return b.String()
}

func (g gen) words(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.word()
		if g.r.IntN(10) == 0 {
			ws[i] = strings.ToUpper(ws[i]) + "!"
		}
	}
	return strings.Join(ws, " ")
}

func (g gen) pick(vals []string) string { return vals[g.r.IntN(len(vals))] }

func (g gen) doc(id uint32, seq int64) Doc {
	d := Doc{ID: id, Seq: seq}
	d.Text[ColName] = g.words(1 + g.r.IntN(3))
	d.SortKey = strings.ToLower(d.Text[ColName])
	d.Text[ColTags] = g.words(g.r.IntN(4))
	d.Text[ColSkills] = g.words(g.r.IntN(4))
	d.Text[ColDescription] = g.words(g.r.IntN(30))
	d.Text[ColExamples] = g.words(g.r.IntN(8))
	if g.r.IntN(2) == 0 {
		d.Text[ColProvider] = g.pick(providers)
	}
	seen := map[Facet]bool{}
	add := func(field, value string) {
		f := Facet{field, value}
		if !seen[f] {
			seen[f] = true
			d.Facets = append(d.Facets, f)
		}
	}
	for range g.r.IntN(4) {
		add("tag", g.pick(tags))
	}
	// Skills are parts: each with its id, its name and its media types,
	// now and then a tag (which belongs to the whole document). A media
	// type given in Facets belongs to every part.
	if g.r.IntN(5) == 0 {
		add("mode", g.pick(modes))
	}
	for range g.r.IntN(4) {
		sk := g.word()
		part := []Facet{{"skill", sk}, {"skill_name", strings.ToUpper(sk[:1]) + sk[1:] + " skill"}}
		for range g.r.IntN(3) {
			if f := (Facet{"mode", g.pick(modes)}); !slices.Contains(part, f) {
				part = append(part, f)
			}
		}
		if g.r.IntN(8) == 0 {
			part = append(part, Facet{"tag", g.pick(tags)})
		}
		g.r.Shuffle(len(part), func(i, j int) { part[i], part[j] = part[j], part[i] })
		d.Parts = append(d.Parts, part)
	}
	if d.Text[ColProvider] != "" {
		add("provider", d.Text[ColProvider])
	}
	add("health", g.pick(healths))
	g.r.Shuffle(len(d.Facets), func(i, j int) { d.Facets[i], d.Facets[j] = d.Facets[j], d.Facets[i] })
	return d
}

// matchMode is a media-type matcher in the spirit of card.MatchMode:
// "type/*" and "*/*" are wildcards.
func matchMode(pattern string) func(string) bool {
	pattern = strings.ToLower(pattern)
	return func(v string) bool {
		if pattern == "*/*" {
			return true
		}
		if p, ok := strings.CutSuffix(pattern, "/*"); ok {
			return strings.HasPrefix(v, p+"/")
		}
		return v == pattern
	}
}

func (g gen) query(known []Doc) Query {
	q := Query{Limit: 1 + g.r.IntN(25), FacetLimit: 1 + g.r.IntN(6)}
	switch g.r.IntN(7) {
	case 0: // no text
	case 1: // a prefix being typed
		w := g.word() + g.word()
		q.Text = w[:min(len(w), 3+g.r.IntN(3))]
	case 2: // words taken from a document, the last one cut short
		if len(known) > 0 {
			ws := Tokens(known[g.r.IntN(len(known))].Text[ColDescription] + " x")
			ws = ws[:len(ws)-1]
			if len(ws) > 0 {
				k := g.r.IntN(min(len(ws), 3)) + 1
				ws = slices.Clone(ws[:k])
				if last := ws[k-1]; len(last) > 3 && g.r.IntN(2) == 0 {
					ws[k-1] = last[:3+g.r.IntN(len(last)-3)]
				}
				q.Text = strings.Join(ws, " ")
			}
		}
	case 3: // a question of several words
		q.Text = g.words(3 + g.r.IntN(6))
	case 4: // a word with a typo: one byte changed, dropped or doubled
		w := []byte(g.word() + g.word())
		i := g.r.IntN(len(w))
		switch g.r.IntN(3) {
		case 0:
			w[i] = syllables[g.r.IntN(len(syllables))][0]
		case 1:
			w = append(w[:i], w[i+1:]...)
		default:
			w = append(w[:i+1], w[i:]...)
		}
		q.Text = g.words(g.r.IntN(2)) + " " + string(w)
	default:
		q.Text = g.words(1 + g.r.IntN(2))
	}
	for range g.r.IntN(3) {
		switch g.r.IntN(5) {
		case 0:
			q.Filters = append(q.Filters, Filter{Terms: []Facet{{"tag", strings.ToUpper(g.pick(tags))}}})
		case 1:
			pat := g.pick([]string{"*/*", "text/*", "image/*", "application/*", g.pick(modes)})
			q.Filters = append(q.Filters, Filter{Field: "mode", Match: matchMode(pat)})
		case 2:
			sk := g.word()
			if len(known) > 0 && g.r.IntN(2) == 0 {
				// A skill some document has, so that skill and media type
				// filters often meet in one document but not one part.
				if d := known[g.r.IntN(len(known))]; len(d.Parts) > 0 {
					for _, f := range d.Parts[g.r.IntN(len(d.Parts))] {
						if f.Field == "skill" {
							sk = f.Value
						}
					}
					for _, f := range d.Parts[0] {
						if f.Field == "mode" && g.r.IntN(2) == 0 {
							q.Filters = append(q.Filters, Filter{Terms: []Facet{f}})
							break
						}
					}
				}
			}
			q.Filters = append(q.Filters, Filter{Terms: []Facet{{"skill", sk}, {"skill_name", sk + " skill"}}})
		case 3:
			q.Filters = append(q.Filters, Filter{Terms: []Facet{{"provider", " " + g.pick(providers) + " "}}})
		case 4:
			q.Filters = append(q.Filters, Filter{Terms: []Facet{{"health", g.pick(healths)}}})
		}
	}
	if g.r.IntN(2) == 0 {
		q.Exclude = []Facet{{"health", "removed"}}
	}
	if g.r.IntN(2) == 0 {
		// As deprecated agents are: ranked after all the others.
		q.Demote = []Facet{{"health", g.pick(healths)}}
		if g.r.IntN(3) == 0 {
			q.Demote = append(q.Demote, Facet{"tag", g.pick(tags)})
		}
	}
	return q
}

func newTestIndex() *Index {
	return New(Options{FacetFields: testFacetFields, PartFields: testPartFields})
}

// checkQueries runs queries against x and o, paging through results with
// cursors, and against fresh when it is set.
func checkQueries(t *testing.T, g gen, x, fresh *Index, o *oracle, n int) {
	t.Helper()
	known := make([]Doc, 0, len(o.docs))
	for _, d := range o.docs {
		known = append(known, d)
	}
	slices.SortFunc(known, func(a, b Doc) int { return cmp.Compare(a.ID, b.ID) })
	for range n {
		q := g.query(known)
		for page := 0; page < 3; page++ {
			got, err := x.Search(q)
			if err != nil {
				t.Fatalf("Search(%q): %v", q.Text, err)
			}
			if d := diffResults(got, o.search(q)); d != "" {
				t.Fatalf("query %q filters %d exclude %v after %v: %s", q.Text, len(q.Filters), q.Exclude, q.After, d)
			}
			if fresh != nil {
				f, err := fresh.Search(q)
				if err != nil {
					t.Fatal(err)
				}
				if d := diffResults(got, f); d != "" {
					t.Fatalf("query %q: updated index and fresh build differ: %s", q.Text, d)
				}
			}
			if len(got.Hits) < q.Limit {
				break
			}
			q.After = &got.Hits[len(got.Hits)-1]
		}
	}
}

// build indexes docs into a new ready index, in random order and batches.
func build(g gen, docs []Doc) *Index {
	x := newTestIndex()
	docs = slices.Clone(docs)
	g.r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	for len(docs) > 0 {
		k := min(len(docs), 1+g.r.IntN(300))
		x.Apply(docs[:k])
		docs = docs[k:]
	}
	x.MarkReady()
	return x
}

// facetStrategies are the ways of counting facets the oracle tests run
// under: as the index chooses, always by the matching documents' terms,
// and always by bitsets with most terms dense, so that each is held to the
// oracle whatever the sizes.
var facetStrategies = []struct {
	name      string
	denseMin  int
	countFrom func(int) int
}{
	{"auto", denseMinPostings, bitsetCountFrom},
	{"doc-terms", denseMinPostings, func(int) int { return math.MaxInt }},
	{"bitsets", 8, func(int) int { return 1 }},
}

func forFacetStrategies(t *testing.T, fn func(t *testing.T)) {
	savedMin, savedFrom := denseMinPostings, bitsetCountFrom
	t.Cleanup(func() { denseMinPostings, bitsetCountFrom = savedMin, savedFrom })
	for _, st := range facetStrategies {
		t.Run(st.name, func(t *testing.T) {
			denseMinPostings, bitsetCountFrom = st.denseMin, st.countFrom
			fn(t)
		})
	}
}

func TestSearchMatchesOracle(t *testing.T) {
	forFacetStrategies(t, testSearchMatchesOracle)
}

func testSearchMatchesOracle(t *testing.T) {
	for _, size := range []int{0, 1, 40, 700, 6000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			g := gen{rand.New(rand.NewPCG(uint64(size), 1))}
			o := newOracle()
			docs := make([]Doc, size)
			for i := range docs {
				// Sparse ids: the catalog's pks have gaps.
				docs[i] = g.doc(uint32(i*3+1), int64(i+1))
				o.set(docs[i])
			}
			x := build(g, docs)
			checkQueries(t, g, x, nil, o, 100)
		})
	}
}

// TestUpdatesMatchFreshBuild applies random sequences of updates, stale
// updates and removals to a built index and checks it against the oracle
// and against an index built afresh from the surviving documents.
func TestUpdatesMatchFreshBuild(t *testing.T) {
	forFacetStrategies(t, testUpdatesMatchFreshBuild)
}

func testUpdatesMatchFreshBuild(t *testing.T) {
	for _, size := range []int{1, 60, 900, 5000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			g := gen{rand.New(rand.NewPCG(uint64(size), 2))}
			o := newOracle()
			var seq int64
			docs := make([]Doc, size)
			for i := range docs {
				seq++
				docs[i] = g.doc(uint32(i+1), seq)
				o.set(docs[i])
			}
			x := build(g, docs)
			for round := range 4 {
				ops := 1 + g.r.IntN(size*2)
				var batch []Doc
				flush := func() { x.Apply(batch); batch = nil }
				for range ops {
					id := uint32(1 + g.r.IntN(size+size/4+1))
					seq++
					switch k := g.r.IntN(10); {
					case k < 5: // a new version, or an agent added
						d := g.doc(id, seq)
						if old, ok := o.docs[id]; ok && g.r.IntN(2) == 0 {
							// Small change: one facet moves.
							d = old
							d.Seq = seq
							d.Facets = slices.Clone(old.Facets)
							for i, f := range d.Facets {
								if f.Field == "health" {
									d.Facets[i].Value = g.pick(healths)
								}
							}
						}
						batch = append(batch, d)
						o.set(d)
					case k < 7:
						flush()
						x.Remove(id, seq)
						o.remove(id)
					case k < 9: // stale: older than what the index holds
						flush()
						if s, ok := x.Seq(id); ok {
							x.Apply([]Doc{g.doc(id, s-int64(g.r.IntN(2)))})
						}
					default:
						flush()
						if s, ok := x.Seq(id); ok {
							x.Remove(id, s)
						}
					}
				}
				flush()
				all := make([]Doc, 0, len(o.docs))
				for _, d := range o.docs {
					all = append(all, d)
				}
				fresh := build(g, all)
				if got, want := x.State().Docs, len(o.docs); got != want {
					t.Fatalf("round %d: %d docs, want %d", round, got, want)
				}
				checkQueries(t, g, x, fresh, o, 60)
			}
		})
	}
}

// TestFilterStrategiesMatchOracle forces each way of applying filters to
// text hits (probing each hit through cursors or through a bitset,
// merging the posting lists) whatever the sizes, so that all are held to
// the oracle.
func TestFilterStrategiesMatchOracle(t *testing.T) {
	savedProbe, savedBitset := preferProbe, probeByBitset
	t.Cleanup(func() { preferProbe, probeByBitset = savedProbe, savedBitset })
	for name, way := range map[string]struct{ probe, bitset bool }{
		"probe": {true, false}, "probe by bitset": {true, true}, "merge": {false, false},
	} {
		t.Run(name, func(t *testing.T) {
			preferProbe = func(int, [][][]uint32) bool { return way.probe }
			probeByBitset = func(int, int) bool { return way.bitset }
			g := gen{rand.New(rand.NewPCG(7, 1))}
			o := newOracle()
			docs := make([]Doc, 1500)
			for i := range docs {
				docs[i] = g.doc(uint32(i*2+1), int64(i+1))
				o.set(docs[i])
			}
			checkQueries(t, g, build(g, docs), nil, o, 200)
		})
	}
}

// TestRelatedMatchesOracle relates random words of the test vocabulary
// to each other, so that queries expand through related words often, and
// holds the index to the oracle.
func TestRelatedMatchesOracle(t *testing.T) {
	saved := relatedTable
	t.Cleanup(func() { relatedTable = saved })
	g := gen{rand.New(rand.NewPCG(11, 3))}
	table := map[string][]relatedWord{}
	for range 400 {
		a, _ := analyzeWord(g.word())
		b, _ := analyzeWord(g.word())
		if a == b {
			continue
		}
		w := []float64{domainWeight, wordnetWeight}[g.r.IntN(2)]
		table[a] = append(table[a], relatedWord{b, w})
		table[b] = append(table[b], relatedWord{a, w})
	}
	relatedTable = func() map[string][]relatedWord { return table }
	o := newOracle()
	docs := make([]Doc, 2500)
	for i := range docs {
		docs[i] = g.doc(uint32(i*2+1), int64(i+1))
		o.set(docs[i])
	}
	checkQueries(t, g, build(g, docs), nil, o, 300)
}

func abs(v int) int { return max(v, -v) }
