package search

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"
)

// Filter matches the documents carrying any of Terms or, when Match is
// set, any value of Field for which Match reports true (media-type
// wildcards: "image/*").
type Filter struct {
	Terms []Facet
	Field string
	Match func(value string) bool
}

// Query is one search.
type Query struct {
	// Text is matched word by word (see Tokens and match.go): documents
	// matching enough of its words, ranked. Empty text matches every
	// document.
	Text string
	// Filters must all match.
	Filters []Filter
	// Exclude drops the documents carrying any of these terms.
	Exclude []Facet
	// Demote ranks the documents carrying any of these terms after all
	// the others (deprecated agents), each part in the usual order.
	Demote []Facet
	// After, when set, is the last hit of the previous page.
	After *Hit
	// Limit bounds the hits returned; FacetLimit the values per facet
	// (none are counted when it is zero).
	Limit      int
	FacetLimit int
	// Vector, when the index holds vectors of its length and Text is not
	// empty, ranks the query by meaning too (vector.go): the documents
	// nearest to it that the filters allow join the text matches, and
	// the two rankings are fused as Fusion says.
	Vector []float32
	// VectorSpace names the model Vector is of: only vectors of the same
	// model are compared with it.
	VectorSpace string
	Fusion      Fusion
}

// Hit is one matching document: demoted ones last, then with query text
// those matching every word first, each part ordered by Score, highest
// first; without text by SortKey; ties by ID.
type Hit struct {
	ID      uint32
	Score   float64
	SortKey string
	// Demoted is set on a document carrying a Query.Demote term. It is
	// part of the order, so a cursor (Query.After) must keep it.
	Demoted bool
	// Partial is set on a document matching some of the query's words
	// but not all. It is part of the order, as Demoted is.
	Partial bool
	// Exact is set on a document whose name is the query's text (case,
	// accents, punctuation and spacing aside): it ranks before the other
	// matches, fused or not. It is part of the order, as Demoted is.
	Exact bool
	// Seq is the sequence of the document's version that matched: a
	// caller may reuse what it read of that version before.
	Seq int64
	// Fused is set on the hits of a hybrid query ranked by fusing the
	// lexical and vector rankings; they come before the other text
	// matches. It is part of the order, as Demoted is.
	Fused bool
	// LexicalRank and VectorRank are a fused hit's places in each ranking
	// (1 is first), zero when outside its window; Similarity is its
	// vector's cosine similarity to the query's.
	LexicalRank, VectorRank int
	Similarity              float32
}

// FacetCount is how many matching documents carry a facet value.
type FacetCount struct {
	Value string
	Count int
}

// Result is a search's answer: the total number of matches, a page of
// them, and facet counts over all of them for every facet field.
type Result struct {
	Total  int
	Hits   []Hit
	Facets map[string][]FacetCount
	// Waited is how long the search waited for the index's read lock,
	// behind updates.
	Waited time.Duration
	// Hybrid is set when the query's vector ranked it too.
	Hybrid bool
}

// Search answers a query, or ErrNotReady before the initial build ends.
func (x *Index) Search(q Query) (Result, error) {
	tokens := Tokens(q.Text)
	start := time.Now()
	x.mu.RLock()
	defer x.mu.RUnlock()
	waited := time.Since(start)
	if !x.ready {
		return Result{}, ErrNotReady
	}
	parts := x.filtersParts(q.Filters)
	matchAll := func() []uint32 { return x.matchExclude(parts, q.Exclude) }
	var (
		ids     []uint32
		matches []match
		qws     []queryWord
	)
	if len(tokens) > 0 {
		sc := scratches.Get().(*scratch)
		defer scratches.Put(sc)
		qws = x.expandQuery(tokens)
		sc.text = x.textMatch(qws, sc.text)
		if preferProbe(len(sc.text), parts) {
			sc.matches = x.probe(sc.text, parts, q.Exclude, sc.matches)
		} else {
			matched := matchAll()
			sc.matches = sc.matches[:0]
			j := 0
			for _, m := range sc.text {
				for j < len(matched) && matched[j] < m.id {
					j++
				}
				if j < len(matched) && matched[j] == m.id {
					sc.matches = append(sc.matches, m)
				}
			}
		}
		sc.ids = sc.ids[:0]
		for _, m := range sc.matches {
			sc.ids = append(sc.ids, m.id)
		}
		matches, ids = sc.matches, sc.ids
	}
	var (
		fusion Fusion
		vecs   []simHit
		hybrid = len(tokens) > 0 && x.hybrid(&q)
	)
	if hybrid {
		// The vector ranking sees exactly what the filters, the scope and
		// the exclusions allow, as the text matches do.
		fusion = q.Fusion.withDefaults()
		vecs = x.nearest(q.Vector, matchAll(), fusion.Window, fusion.MinSimilarity)
		ids = unionIDs(ids, vecs)
	}
	var (
		browseKey string
		browsed   *browseEntry
	)
	if len(tokens) == 0 {
		browseKey = browseKeyOf(q)
		if browsed = x.browse.get(browseKey, x.gen); browsed != nil {
			ids = browsed.ids
		} else {
			ids = matchAll()
		}
	}
	var fc facetCorrection
	if browsed == nil {
		if pfs := x.partFilters(q.Filters); len(pfs) > 0 {
			kept, corr, touched := x.checkParts(ids, pfs, q.FacetLimit > 0)
			if len(kept) < len(ids) {
				matches = keepMatches(matches, kept)
				vecs = keepSims(vecs, kept)
			}
			ids, fc = kept, facetCorrection{corr, touched}
			defer fc.release(x)
		}
	}
	res := Result{Total: len(ids), Waited: waited, Hybrid: hybrid}
	if browsed != nil {
		res.Facets = browsed.facets
	} else {
		res.Facets = x.facets(ids, len(ids) == len(x.all), q.FacetLimit, fc.counts)
		if browseKey != "" {
			x.browse.put(browseKey, &browseEntry{gen: x.gen, ids: ids, facets: res.Facets})
		}
	}
	demoted := x.demoted(q.Demote)
	if hybrid {
		res.Hits = x.fuse(qws, matches, vecs, demoted, nameKey(q.Text), q.Limit, q.After, fusion)
		for i := range res.Hits {
			res.Hits[i].SortKey = x.docs[res.Hits[i].ID].sortKey
		}
	} else if len(tokens) > 0 {
		res.Hits, _ = x.rank(qws, matches, demoted, nameKey(q.Text), q.Limit, q.After, true)
		for i := range res.Hits {
			res.Hits[i].SortKey = x.docs[res.Hits[i].ID].sortKey
		}
	} else {
		res.Hits = x.topByName(ids, demoted, q.Limit, q.After)
	}
	for i := range res.Hits {
		res.Hits[i].Seq = x.docs[res.Hits[i].ID].seq
	}
	return res, nil
}

// filtersParts returns the posting lists of each filter's terms.
func (x *Index) filtersParts(filters []Filter) [][][]uint32 {
	parts := make([][][]uint32, len(filters))
	for i, f := range filters {
		parts[i] = x.filterParts(f)
	}
	return parts
}

// matchExclude returns the sorted ids matching every filter (given their
// posting lists) and carrying none of the excluded terms. The caller holds
// x.mu for reading and must not keep the slice past it.
func (x *Index) matchExclude(parts [][][]uint32, exclude []Facet) []uint32 {
	matched := x.matchFilters(parts)
	for _, f := range exclude {
		if p := x.postings(f.Field, f.Value); len(p) > 0 {
			matched = subtract(matched, p)
		}
	}
	return matched
}

// filtered returns the sorted ids matching every filter and carrying none
// of the excluded terms. The caller holds x.mu for reading and must not
// keep the slice past it.
func (x *Index) filtered(filters []Filter, exclude []Facet) []uint32 {
	return x.matchExclude(x.filtersParts(filters), exclude)
}

// keepSims returns the vector hits whose ids are in kept (sorted).
func keepSims(hs []simHit, kept []uint32) []simHit {
	if hs == nil {
		return nil
	}
	out := make([]simHit, 0, len(hs))
	for _, h := range hs {
		if _, ok := slices.BinarySearch(kept, h.id); ok {
			out = append(out, h)
		}
	}
	return out
}

// keepMatches returns the matches (in id order) whose ids are in kept
// (sorted, a subset of theirs).
func keepMatches(ms []match, kept []uint32) []match {
	if ms == nil {
		return nil
	}
	out := make([]match, 0, len(kept))
	j := 0
	for _, m := range ms {
		if j < len(kept) && kept[j] == m.id {
			out = append(out, m)
			j++
		}
	}
	return out
}

// facetCorrection is what checkParts found to subtract from facet counts:
// by term id, the matching documents holding a term only in parts that
// did not match. counts is nil when there is nothing to subtract.
type facetCorrection struct {
	counts  []int32
	touched []uint32
}

func (c facetCorrection) release(x *Index) {
	if c.counts == nil {
		return
	}
	for _, t := range c.touched {
		c.counts[t] = 0
	}
	x.putCounts(c.counts)
}

// demoted returns the sorted ids carrying any of the terms. The caller
// holds x.mu for reading and must not keep the slice past it.
func (x *Index) demoted(terms []Facet) []uint32 {
	if len(terms) == 0 {
		return nil
	}
	return x.filterPostings(Filter{Terms: terms})
}

// Orderings. A negative result means a comes first; demoted hits come
// after all others, and in each part a hybrid query's fused hits before
// the other text matches.
func byScore(a, b Hit) int {
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
	if a.Fused != b.Fused {
		if a.Fused {
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
	if a.Score != b.Score {
		return cmp.Compare(b.Score, a.Score)
	}
	return cmp.Compare(a.ID, b.ID)
}

func byName(a, b Hit) int {
	if a.Demoted != b.Demoted {
		if a.Demoted {
			return 1
		}
		return -1
	}
	if c := strings.Compare(a.SortKey, b.SortKey); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// topByName keeps the k first ids after the cursor in byName order. Browsing a large
// catalog offers every document, and comparing sort keys as strings was
// most of a browse's time (issue 11's console benchmark); a document
// whose key prefix (prefix64) sorts before the cursor's, or after the
// worst of k kept, is skipped on one integer comparison.
// Demoted documents come after all others, and the skip compares
// (demoted, prefix) pairs, which order the same way.
func (x *Index) topByName(ids, demoted []uint32, k int, after *Hit) []Hit {
	h := &topK[Hit]{k: k, order: byName}
	if k <= 0 {
		return h.sorted()
	}
	var afterRank nameRank
	if after != nil {
		afterRank = nameRank{after.Demoted, prefix64(after.SortKey)}
	}
	worst := nameRank{true, math.MaxUint64}
	dj := 0 // ids ascend: one cursor walks demoted
	for _, id := range ids {
		d := &x.docs[id]
		e := Hit{ID: id, SortKey: d.sortKey}
		for dj < len(demoted) && demoted[dj] < id {
			dj++
		}
		e.Demoted = dj < len(demoted) && demoted[dj] == id
		r := nameRank{e.Demoted, d.sortPrefix}
		if worst.before(r) || (after != nil && r.before(afterRank)) {
			continue
		}
		if after != nil && byName(e, *after) <= 0 {
			continue
		}
		h.offer(e)
		if len(h.items) == k {
			w := h.items[0]
			worst = nameRank{w.Demoted, x.docs[w.ID].sortPrefix}
		}
	}
	return h.sorted()
}

// nameRank is where a document's name puts it in byName order, as far as
// its sort key's prefix tells: a rank before another's sorts before it;
// equal ranks tell nothing.
type nameRank struct {
	demoted bool
	prefix  uint64
}

func (a nameRank) before(b nameRank) bool {
	if a.demoted != b.demoted {
		return !a.demoted
	}
	return a.prefix < b.prefix
}

// prefix64 is the first 8 bytes of s, big-endian, zero-padded. When
// prefix64(a) < prefix64(b), a sorts before b (at the first byte where
// the prefixes differ, b has a byte and a has a smaller one or none);
// equal prefixes tell nothing.
func prefix64(s string) uint64 {
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}

// preferProbe tells whether checking the text hits against the filters'
// posting lists (a cursor per list, moved forward by binary search, the
// hits being in id order) costs less than merging the lists of every
// filter into one, which is linear in their lengths: filters over most of
// the catalog (a caller's listing states and visibility) would otherwise
// cost milliseconds on queries whose text matches a small share of it. A
// variable for tests, which force each way.
var preferProbe = func(hits int, parts [][][]uint32) bool {
	lists, total := 0, 0
	for _, ps := range parts {
		lists += len(ps)
		for _, p := range ps {
			total += len(p)
		}
	}
	return lists > 0 && hits*lists < total
}

// scratch is a question's working lists, its text matches, those the
// filters keep and their ids: for a question matching most of the
// catalog, hundreds of kilobytes, recycled from one search to the next
// rather than allocated each time. Fresh memory costs more than its
// allocation: the runtime hands back pages it had returned to the system,
// and each page's first touch faults (about 190 a question in serve at
// 100,000 agents before this). Nothing a search returns refers to them.
type scratch struct {
	text, matches []match
	ids           []uint32
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// probe keeps the text matches (in id order) carrying, for every filter,
// a term of one of its posting lists, and none of the excluded terms,
// appended to out[:0]. The caller holds x.mu for reading.
func (x *Index) probe(text []match, parts [][][]uint32, exclude []Facet, out []match) []match {
	var excl [][]uint32
	for _, f := range exclude {
		if p := x.postings(f.Field, f.Value); len(p) > 0 {
			excl = append(excl, p)
		}
	}
	filters := make([]probeSet, len(parts))
	for i, ps := range parts {
		filters[i] = x.newProbeSet(len(text), ps)
		defer filters[i].release(x)
	}
	excluded := newListCursors(excl)
	out = out[:0]
next:
	for _, m := range text {
		for i := range filters {
			if !filters[i].has(m.id) {
				continue next
			}
		}
		if excluded.has(m.id) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// probeSet finds ascending ids in one filter's posting lists: through
// cursors (listCursors), or, when the hits probed are many next to the
// lists' length (a caller's scope, which holds most of the catalog,
// probed by a question matching thousands), through a bitset of them:
// one pass over the lists and a bit test per hit, rather than a galloping
// search per hit.
type probeSet struct {
	cs   listCursors
	bits bitset
}

// probeByBitset tells whether a probeSet of lists of postings entries in
// all, probed by hits ids, uses a bitset. A variable for tests, which
// force each way.
var probeByBitset = func(hits, postings int) bool { return hits*16 > postings }

func (x *Index) newProbeSet(hits int, lists [][]uint32) probeSet {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	if !probeByBitset(hits, n) {
		return probeSet{cs: newListCursors(lists)}
	}
	b := x.getMatched()
	for _, l := range lists {
		for _, id := range l {
			b[id>>6] |= 1 << (id & 63)
		}
	}
	return probeSet{bits: b}
}

func (s *probeSet) has(id uint32) bool {
	if s.bits != nil {
		return s.bits[id>>6]>>(id&63)&1 == 1
	}
	return s.cs.has(id)
}

// release gives a bitset back, cleared.
func (s *probeSet) release(x *Index) {
	if s.bits != nil {
		clear(s.bits)
		x.matchedPool.Put(&s.bits)
	}
}

// listCursors finds ascending ids in sorted posting lists: one cursor per
// list, moved forward by galloping search, the longest list first (it
// most often holds the id).
type listCursors []listCursor

type listCursor struct {
	list []uint32
	pos  int
}

func newListCursors(lists [][]uint32) listCursors {
	cs := make(listCursors, len(lists))
	for i, l := range lists {
		cs[i] = listCursor{list: l}
	}
	slices.SortFunc(cs, func(a, b listCursor) int { return len(b.list) - len(a.list) })
	return cs
}

// has reports whether a list holds id; ids must come in ascending order.
func (cs listCursors) has(id uint32) bool {
	for i := range cs {
		c := &cs[i]
		j, ok := gallop(c.list[c.pos:], id)
		c.pos += j
		if ok {
			return true
		}
	}
	return false
}

// gallop is slices.BinarySearch by exponential search from the front:
// a few steps in cache when the item sought is near, as it is for
// ascending ids probed in a long list, where a binary search over the
// rest of the list takes its full depth in scattered reads.
func gallop(list []uint32, id uint32) (int, bool) {
	lo, step := 0, 1 // every item before lo is below id
	for lo+step-1 < len(list) && list[lo+step-1] < id {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(list))
	j, ok := slices.BinarySearch(list[lo:hi], id)
	return lo + j, ok
}

// matchFilters returns the sorted ids matching every filter, given each
// filter's posting lists (filterParts). The caller holds x.mu for reading
// and must not keep the slice past it.
func (x *Index) matchFilters(parts [][][]uint32) []uint32 {
	if len(parts) == 0 {
		return x.all
	}
	// The filter with the fewest entries gives the candidates; each other
	// filter is checked candidate by candidate when that is cheaper than
	// merging its lists (a caller's scope beside a tag filter).
	size := func(ps [][]uint32) int {
		n := 0
		for _, p := range ps {
			n += len(p)
		}
		return n
	}
	parts = slices.Clone(parts)
	slices.SortFunc(parts, func(a, b [][]uint32) int { return size(a) - size(b) })
	out := union(parts[0])
	var rest [][][]uint32
	for _, ps := range parts[1:] {
		if len(out) == 0 || !preferProbe(len(out), [][][]uint32{ps}) {
			rest = append(rest, ps)
			continue
		}
		cs := newListCursors(ps)
		kept := make([]uint32, 0, len(out))
		for _, id := range out {
			if cs.has(id) {
				kept = append(kept, id)
			}
		}
		out = kept
	}
	lists := make([][]uint32, 0, len(rest)+1)
	lists = append(lists, out)
	for _, ps := range rest {
		lists = append(lists, union(ps))
	}
	slices.SortFunc(lists, func(a, b []uint32) int { return len(a) - len(b) })
	out = lists[0]
	for _, l := range lists[1:] {
		if len(out) == 0 {
			break
		}
		out = intersect(out, l)
	}
	return out
}

func (x *Index) filterPostings(f Filter) []uint32 {
	return union(x.filterParts(f))
}

// filterParts returns the posting lists of the terms a filter matches.
func (x *Index) filterParts(f Filter) [][]uint32 {
	if f.Match == nil && len(f.Terms) > 1 {
		if u, ok := x.cachedUnion(f.Terms); ok {
			return [][]uint32{u}
		}
	}
	parts := make([][]uint32, 0, len(f.Terms))
	for _, t := range f.Terms {
		if p := x.postings(t.Field, t.Value); len(p) > 0 {
			parts = append(parts, p)
		}
	}
	if f.Match != nil {
		for _, id := range x.byField[f.Field] {
			if t := &x.terms[id]; len(t.postings) > 0 && f.Match(t.display) {
				parts = append(parts, t.postings)
			}
		}
	}
	return parts
}

func (x *Index) postings(field, value string) []uint32 {
	id, ok := x.lookup(field, strings.TrimSpace(value))
	if !ok {
		return nil
	}
	return x.terms[id].postings
}

// intersect returns the sorted intersection; a is the shorter list, so each
// of its values is looked up in b by binary search from the last position.
func intersect(a, b []uint32) []uint32 {
	out := make([]uint32, 0, len(a))
	if len(b) < 8*len(a) {
		// Lists of like sizes (a caller's scope beside another broad
		// filter): one linear merge beats a binary search per value.
		j := 0
		for _, v := range a {
			for j < len(b) && b[j] < v {
				j++
			}
			if j == len(b) {
				break
			}
			if b[j] == v {
				out = append(out, v)
			}
		}
		return out
	}
	lo := 0
	for _, v := range a {
		i, found := slices.BinarySearch(b[lo:], v)
		lo += i
		if found {
			out = append(out, v)
		}
		if lo >= len(b) {
			break
		}
	}
	return out
}

// unionBitsetMin is the input size from which union goes through a bitset.
const unionBitsetMin = 4096

func union(lists [][]uint32) []uint32 {
	switch len(lists) {
	case 0:
		return nil
	case 1:
		return lists[0]
	}
	n, maxV := 0, uint32(0)
	for _, l := range lists {
		n += len(l)
		if len(l) > 0 {
			maxV = max(maxV, l[len(l)-1])
		}
	}
	out := make([]uint32, 0, n)
	if n < unionBitsetMin {
		for _, l := range lists {
			out = append(out, l...)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	// Large unions (a media-type wildcard over most of the catalog) go
	// through a bitset: linear in the input instead of a sort.
	set := make([]uint64, maxV/64+1)
	for _, l := range lists {
		for _, v := range l {
			set[v/64] |= 1 << (v % 64)
		}
	}
	for w, b := range set {
		for b != 0 {
			i := bits.TrailingZeros64(b)
			out = append(out, uint32(w*64+i))
			b &= b - 1
		}
	}
	return out
}

// subtract returns the sorted values of a not in b (both sorted).
func subtract(a, b []uint32) []uint32 {
	out := make([]uint32, 0, len(a))
	j := 0
	for _, v := range a {
		for j < len(b) && b[j] < v {
			j++
		}
		if j < len(b) && b[j] == v {
			continue
		}
		out = append(out, v)
	}
	return out
}

// difference returns the sorted values of all (sorted) missing from sub
// (a sorted subset of all).
func difference(all, sub []uint32) []uint32 {
	out := make([]uint32, 0, len(all)-len(sub))
	j := 0
	for _, v := range all {
		if j < len(sub) && sub[j] == v {
			j++
			continue
		}
		out = append(out, v)
	}
	return out
}

// facets counts, per facet field, the matching docs carrying each value and
// keeps the top limit values. all tells that ids is every document. Four
// ways to count: posting lengths when every doc matches; bitsets when many
// do (facetsByBitset); posting lengths minus the non-matching docs' terms
// when most of a small index do; else the matching docs' terms. Each way
// subtracts corr (by term id; nil for none): the matching docs holding a
// term only in parts that did not match (checkParts).
func (x *Index) facets(ids []uint32, all bool, limit int, corr []int32) map[string][]FacetCount {
	if limit <= 0 {
		// No values asked for (a door that shows none): nothing to count.
		out := make(map[string][]FacetCount, len(x.facetFields))
		for _, f := range x.facetFields {
			out[f] = []FacetCount{}
		}
		return out
	}
	if !all && len(ids) >= bitsetCountFrom(len(x.all)) {
		return x.facetsByBitset(ids, limit, corr)
	}
	var (
		counts     []int32
		touched    []uint32
		complement = !all && len(ids) > len(x.all)/2
	)
	countDocs := func(ids []uint32) {
		counts = x.getCounts()
		if len(ids) < scanFacetsAbove {
			for _, id := range ids {
				d := &x.docs[id]
				for _, t := range d.terms[:d.nFacet] {
					if counts[t] == 0 {
						touched = append(touched, t)
					}
					counts[t]++
				}
			}
			return
		}
		// Many documents: count without noting each term's first sight
		// (a compare and a branch per term of every document), then find
		// the counted terms in the facet fields' term lists, a few
		// thousand entries.
		for _, id := range ids {
			d := &x.docs[id]
			for _, t := range d.terms[:d.nFacet] {
				counts[t]++
			}
		}
		for _, f := range x.facetFields {
			for _, t := range x.byField[f] {
				if counts[t] != 0 {
					touched = append(touched, t)
				}
			}
		}
	}
	count := func(t uint32) int { return len(x.terms[t].postings) }
	switch {
	case complement:
		countDocs(difference(x.all, ids))
		count = func(t uint32) int { return len(x.terms[t].postings) - int(counts[t]) }
	case !all:
		countDocs(ids)
		count = func(t uint32) int { return int(counts[t]) }
	}
	if corr != nil {
		uncorrected := count
		count = func(t uint32) int { return uncorrected(t) - int(corr[t]) }
	}
	tops := make([]*topK[FacetCount], len(x.facetFields))
	offer := func(id uint32) {
		t := &x.terms[id]
		c := count(id)
		if c <= 0 {
			return
		}
		h := tops[t.facet]
		if h == nil {
			h = &topK[FacetCount]{k: limit, order: facetOrder}
			tops[t.facet] = h
		}
		h.offer(FacetCount{Value: t.display, Count: c})
	}
	if all || complement {
		for _, f := range x.facetFields {
			for _, id := range x.byField[f] {
				offer(id)
			}
		}
	} else {
		// Only facet terms: countDocs reads the facet prefix of each doc.
		for _, id := range touched {
			offer(id)
		}
	}
	if counts != nil {
		// Reset only what this query touched, so the pooled slice is clean.
		for _, id := range touched {
			counts[id] = 0
		}
		x.putCounts(counts)
	}
	out := make(map[string][]FacetCount, len(x.facetFields))
	for i, f := range x.facetFields {
		out[f] = []FacetCount{}
		if h := tops[i]; h != nil {
			out[f] = h.sorted()
		}
	}
	return out
}

// scanFacetsAbove is the number of matched documents from which facet
// counting finds the counted terms by scanning the facet fields' terms
// rather than noting each as it first appears.
const scanFacetsAbove = 256

// facetOrder sorts facet values by count, then value.
func facetOrder(a, b FacetCount) int {
	if a.Count != b.Count {
		return b.Count - a.Count
	}
	return strings.Compare(a.Value, b.Value)
}

func (x *Index) getCounts() []int32 {
	if c, ok := x.countsPool.Get().(*[]int32); ok && len(*c) >= len(x.terms) {
		return *c
	}
	return make([]int32, len(x.terms)+len(x.terms)/4+64)
}

func (x *Index) putCounts(c []int32) {
	x.countsPool.Put(&c)
}
