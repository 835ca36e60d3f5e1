package search

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
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
	// Text is matched word by word (see Tokens); every word must match,
	// the last one also as a prefix. Empty text matches every document.
	Text string
	// Filters must all match.
	Filters []Filter
	// Exclude drops the documents carrying any of these terms.
	Exclude []Facet
	// After, when set, is the last hit of the previous page.
	After *Hit
	// Limit bounds the hits returned; FacetLimit the values per facet.
	Limit      int
	FacetLimit int
}

// Hit is one matching document: with query text ordered by Score, highest
// first, else by SortKey; ties by ID.
type Hit struct {
	ID      uint32
	Score   float64
	SortKey string
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
}

// Search answers a query, or ErrNotReady before the initial build ends.
func (x *Index) Search(q Query) (Result, error) {
	tokens := Tokens(q.Text)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.ready {
		return Result{}, ErrNotReady
	}
	matched := x.matchFilters(q.Filters)
	for _, f := range q.Exclude {
		if p := x.postings(f.Field, f.Value); len(p) > 0 {
			matched = subtract(matched, p)
		}
	}
	var (
		ids  []uint32
		hits []Hit
	)
	if len(tokens) > 0 {
		text := x.textMatch(tokens)
		hits = make([]Hit, 0, min(len(text), len(matched)))
		j := 0
		for _, h := range text {
			for j < len(matched) && matched[j] < h.ID {
				j++
			}
			if j < len(matched) && matched[j] == h.ID {
				hits = append(hits, h)
			}
		}
		ids = make([]uint32, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
	} else {
		ids = matched
	}
	res := Result{Total: len(ids)}
	res.Facets = x.facets(ids, len(ids) == len(x.all), q.FacetLimit)
	if len(tokens) > 0 {
		res.Hits = topHits(hits, q.Limit, q.After, byScore)
		for i := range res.Hits {
			res.Hits[i].SortKey = x.docs[res.Hits[i].ID].sortKey
		}
	} else {
		res.Hits = x.topByName(ids, q.Limit, q.After)
	}
	return res, nil
}

// Orderings. A negative result means a comes first.
func byScore(a, b Hit) int {
	if a.Score != b.Score {
		return cmp.Compare(b.Score, a.Score)
	}
	return cmp.Compare(a.ID, b.ID)
}

func byName(a, b Hit) int {
	if c := strings.Compare(a.SortKey, b.SortKey); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// topHits keeps the k first hits after the cursor in the given order, in
// O(n log k) time.
func topHits(hits []Hit, k int, after *Hit, order func(a, b Hit) int) []Hit {
	h := &topK[Hit]{k: k, order: order}
	for _, x := range hits {
		if after != nil && order(x, *after) <= 0 {
			continue
		}
		h.offer(x)
	}
	return h.sorted()
}

func (x *Index) topByName(ids []uint32, k int, after *Hit) []Hit {
	h := &topK[Hit]{k: k, order: byName}
	// Once the heap is full, a doc whose name prefix sorts after the worst
	// kept one's cannot enter it.
	full, worst := false, uint64(0)
	for _, id := range ids {
		if full && x.namePrefix[id] > worst {
			continue
		}
		e := Hit{ID: id, SortKey: x.docs[id].sortKey}
		if after != nil && byName(e, *after) <= 0 {
			continue
		}
		h.offer(e)
		if full = k > 0 && len(h.items) == k; full {
			worst = namePrefixOf(h.items[0].SortKey)
		}
	}
	return h.sorted()
}

// namePrefixOf packs the first 8 bytes of a sort key, big-endian and
// zero-padded: a smaller prefix means a smaller key (strings.Compare), an
// equal one says nothing.
func namePrefixOf(key string) uint64 {
	var p uint64
	for i := range 8 {
		p <<= 8
		if i < len(key) {
			p |= uint64(key[i])
		}
	}
	return p
}

// matchFilters returns the sorted ids matching every filter. The caller
// holds x.mu for reading and must not keep the slice past it.
func (x *Index) matchFilters(filters []Filter) []uint32 {
	if len(filters) == 0 {
		return x.all
	}
	lists := make([][]uint32, 0, len(filters))
	for _, f := range filters {
		lists = append(lists, x.filterPostings(f))
	}
	slices.SortFunc(lists, func(a, b []uint32) int { return len(a) - len(b) })
	out := lists[0]
	for _, l := range lists[1:] {
		if len(out) == 0 {
			break
		}
		out = intersect(out, l)
	}
	return out
}

func (x *Index) filterPostings(f Filter) []uint32 {
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
	return union(parts)
}

func (x *Index) postings(field, value string) []uint32 {
	id, ok := x.termIDs[termKey(field, strings.TrimSpace(value))]
	if !ok {
		return nil
	}
	return x.terms[id].postings
}

// intersect returns the sorted intersection; a is the shorter list, so each
// of its values is looked up in b by binary search from the last position.
func intersect(a, b []uint32) []uint32 {
	out := make([]uint32, 0, len(a))
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
// keeps the top limit values. all tells that ids is every document. Three
// ways to count, cheapest first: posting lengths when every doc matches;
// posting lengths minus the non-matching docs' terms when most do; else
// the matching docs' terms.
func (x *Index) facets(ids []uint32, all bool, limit int) map[string][]FacetCount {
	var (
		counts     []int32
		touched    []uint32
		complement = !all && len(ids) > len(x.all)/2
	)
	countDocs := func(ids []uint32) {
		counts = x.getCounts()
		for _, id := range ids {
			d := &x.docs[id]
			for _, t := range d.terms[:d.nFacet] {
				if counts[t] == 0 {
					touched = append(touched, t)
				}
				counts[t]++
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
	tops := make(map[string]*topK[FacetCount], len(x.facetFields))
	offer := func(id uint32) {
		t := &x.terms[id]
		if !x.isFacet[t.field] {
			return
		}
		c := count(id)
		if c <= 0 {
			return
		}
		h := tops[t.field]
		if h == nil {
			h = &topK[FacetCount]{k: limit, order: facetOrder}
			tops[t.field] = h
		}
		h.offer(FacetCount{Value: t.display, Count: c})
	}
	if all || complement {
		for id := range x.terms {
			offer(uint32(id))
		}
	} else {
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
	for _, f := range x.facetFields {
		out[f] = []FacetCount{}
		if h := tops[f]; h != nil {
			out[f] = h.sorted()
		}
	}
	return out
}

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
