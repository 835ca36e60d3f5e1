package search

import (
	"cmp"
	"math/bits"
	"slices"
)

// Facet counting over many matching documents reads, for each facet term,
// how many of its documents match, rather than every term of every
// matching document: a matched set of 30,000 documents with 33 facet terms
// each is a million scattered increments. The common terms ("dense": held
// by at least one document in 64, at least denseMinPostings) keep a bitset
// of their documents next to their posting list, and a count is a popcount
// of its intersection with the matched set's bitset; the rare terms test
// each of their few postings against it.

// bitset is a set of document ids, one bit each.
type bitset []uint64

func (b *bitset) add(id uint32) {
	w := int(id >> 6)
	for len(*b) <= w {
		*b = append(*b, 0)
	}
	(*b)[w] |= 1 << (id & 63)
}

func (b bitset) remove(id uint32) {
	if w := int(id >> 6); w < len(b) {
		b[w] &^= 1 << (id & 63)
	}
}

func bitsetOf(ids []uint32) bitset {
	if len(ids) == 0 {
		return nil
	}
	b := make(bitset, int(ids[len(ids)-1]>>6)+1)
	for _, id := range ids {
		b[id>>6] |= 1 << (id & 63)
	}
	return b
}

// andCount is the size of the intersection of a and b.
func andCount(a, b bitset) int {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	c := 0
	for i := range a {
		c += bits.OnesCount64(a[i] & b[i])
	}
	return c
}

// denseMinPostings is the fewest documents a dense facet term has; at
// least one in 64 of all documents too, so the bitsets of all dense
// terms take at most 64 bits a document per facet term a document holds.
var denseMinPostings = 1024

func (x *Index) denseFrom() int {
	return max(denseMinPostings, len(x.all)/64)
}

// bitsetCountFrom is the number of matching documents from which facet
// counting intersects bitsets (see facetsByBitset) rather than reading
// each matching document's terms: the cost of the first is about fixed,
// that of the second grows with the matches. The first streams through
// memory and the second reads each matching document's terms wherever
// they lie, which costs more than a warm benchmark shows: in serve, with
// questions arriving a tenth of a second apart, the bitsets win from about
// one document in 64 (from one in 16 they answered questions 4–7% slower
// on average, paired against this).
var bitsetCountFrom = func(all int) int { return max(1024, all/64) }

// addPosting adds doc id to facet or filter term t.
func (x *Index) addPosting(t, id uint32) {
	tm := &x.terms[t]
	tm.postings = x.insertID(tm.postings, id)
	tm.gen++
	if tm.facet >= 0 {
		x.facetAdds[tm.facet]++
	}
	switch {
	case tm.facet < 0 || !x.ready:
		// MarkReady makes the bitsets of the initial build.
	case tm.bits != nil:
		tm.bits.add(id)
	case len(tm.postings) >= x.denseFrom():
		tm.bits = bitsetOf(tm.postings)
	}
}

// dropPosting removes doc id from term t. A term left with a quarter of
// what made it dense loses its bitset.
func (x *Index) dropPosting(t, id uint32) {
	tm := &x.terms[t]
	tm.postings = x.removeID(tm.postings, id)
	tm.gen++
	if tm.bits != nil {
		if len(tm.postings) < x.denseFrom()/4 {
			tm.bits = nil
		} else {
			tm.bits.remove(id)
		}
	}
}

// makeBitsets gives every dense facet term its bitset, at the end of the
// initial build.
func (x *Index) makeBitsets() {
	from := x.denseFrom()
	for i := range x.terms {
		if tm := &x.terms[i]; tm.facet >= 0 && len(tm.postings) >= from {
			tm.bits = bitsetOf(tm.postings)
		}
	}
}

// facetsByBitset counts facet values over the matching documents ids
// through bitsets, less corr (see facets). A term with fewer documents
// than the field's last kept count cannot enter the top limit and is not
// counted; terms are visited by the documents they hold, most first
// (facetRanked), so that counting a field stops at the first term that
// cannot, rather than visiting all its thousands of values (tags, skills,
// providers). How early depends on how skewed the values are: over
// synth's flat tags most common ones are still counted.
func (x *Index) facetsByBitset(ids []uint32, limit int, corr []int32) map[string][]FacetCount {
	matched := x.getMatched()
	for _, id := range ids {
		matched[id>>6] |= 1 << (id & 63)
	}
	out := make(map[string][]FacetCount, len(x.facetFields))
	for fi, f := range x.facetFields {
		h := &topK[FacetCount]{k: limit, order: facetOrder}
		r := x.facetRanked(fi)
		grown := int(x.facetAdds[fi] - r.adds)
		for j, t := range r.terms {
			if limit <= 0 || h.full() && int(r.held[j])+grown < h.items[0].Count {
				break // nor can any term after it
			}
			tm := &x.terms[t]
			n := len(tm.postings)
			if n == 0 || h.full() && n < h.items[0].Count {
				continue
			}
			var c int
			if tm.bits != nil {
				c = andCount(tm.bits, matched)
			} else {
				for _, id := range tm.postings {
					c += int(matched[id>>6] >> (id & 63) & 1)
				}
			}
			if corr != nil {
				c -= int(corr[t])
			}
			if c > 0 {
				h.offer(FacetCount{Value: tm.display, Count: c})
			}
		}
		out[f] = []FacetCount{}
		if len(h.items) > 0 {
			out[f] = h.sorted()
		}
	}
	clear(matched)
	x.matchedPool.Put(&matched)
	return out
}

// facetRank is a facet field's terms by the documents each held (held),
// most first, as they stood when adds postings had been added to the
// field's terms (Index.facetAdds). No term has gained more documents
// since than the postings added since: held plus those bounds each
// term's documents now.
type facetRank struct {
	terms []uint32
	held  []int32
	adds  uint64
}

// facetRankStale is how many postings may be added to a facet field's
// terms before its rank is made again: each loosens the rank's bound by
// one document.
const facetRankStale = 256

// facetRanked returns facet field fi's terms by documents held, made
// again when terms were added to the field or facetRankStale postings
// were. Searches share it, under the read lock.
func (x *Index) facetRanked(fi int) *facetRank {
	terms := x.byField[x.facetFields[fi]]
	adds := x.facetAdds[fi]
	if r := x.facetRanks[fi].Load(); r != nil && len(r.terms) == len(terms) && adds-r.adds <= facetRankStale {
		return r
	}
	r := &facetRank{terms: slices.Clone(terms), held: make([]int32, len(terms)), adds: adds}
	slices.SortFunc(r.terms, func(a, b uint32) int {
		return cmp.Compare(len(x.terms[b].postings), len(x.terms[a].postings))
	})
	for j, t := range r.terms {
		r.held[j] = int32(len(x.terms[t].postings))
	}
	x.facetRanks[fi].Store(r)
	return r
}

// getMatched returns a cleared bitset covering every document id.
func (x *Index) getMatched() bitset {
	n := len(x.docs)/64 + 1
	if b, ok := x.matchedPool.Get().(*bitset); ok && len(*b) >= n {
		return *b
	}
	return make(bitset, n+n/4)
}
