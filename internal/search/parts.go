package search

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
)

// Parts. An agent whose one skill takes a PDF and whose other skill is the
// one asked for cannot do what was asked: filters on a skill and on media
// types describe one skill. The index states it over a document's parts
// (Doc.Parts) and the fields that belong to them (Options.PartFields):
//
//   - A part filter is a filter every field of which (its terms' fields,
//     its Match field) is a part field.
//   - A document matches the part filters of a query when one of its parts
//     meets all of them. A part holds its own terms and the document's
//     terms of part fields given in Facets; a document with fewer than
//     two parts is one part, holding all its terms.
//   - With part filters, a facet value of a part field is counted for a
//     matching document only when a part meeting them all holds it: the
//     counts describe the parts that matched, as the results do.
//
// Without part filters nothing changes: every part counts, and a
// document's terms are the union of its parts'. Candidates are found
// through the document-level posting lists as for any filter (a document
// matching in one part matches at document level), then documents with
// two parts or more are checked part by part. Each keeps, for every term
// of a part field it holds, the set of its parts holding it (partList).

// partList is a document's terms of part fields with the parts holding
// each, encoded, grouped by part field (in Options.PartFields order) so
// that a filter on one field reads that field's entries alone: the
// uvarint of the number of parts, the uvarint of each group's length in
// bytes, then the groups; in a group, for each term in term id order, the
// uvarint of its gap from the group's previous id, then the term's part
// mask in uvarints of 64 parts each. Nil for a document with fewer than
// two parts.
type partList []byte

type partEntry struct {
	group int // the term's field's index in partFields
	term  uint32
	part  int // -1: every part (a term given in Facets)
}

// maxPartFields bounds Options.PartFields: a filter's groups are a bit
// each of a uint64.
const maxPartFields = 64

// setParts encodes the part list of document p, whose facets' term ids
// are terms. The caller holds the write lock, after setTerms gave every
// term its id.
func (x *Index) setParts(id uint32, p *Doc, terms []uint32) {
	if len(x.isPart) == 0 || len(p.Parts) < 2 {
		x.parts[id] = nil
		return
	}
	// terms are the ids of p's Facets, then of its Parts' in order.
	es := x.partEntries[:0]
	for i, f := range p.Facets {
		if g, ok := x.partGroup[f.Field]; ok {
			es = append(es, partEntry{g, terms[i], -1})
		}
	}
	k := len(p.Facets)
	for i, part := range p.Parts {
		for _, f := range part {
			if g, ok := x.partGroup[f.Field]; ok {
				es = append(es, partEntry{g, terms[k], i})
			}
			k++
		}
	}
	x.partEntries = es
	if len(es) == 0 {
		x.parts[id] = nil
		return
	}
	slices.SortFunc(es, func(a, b partEntry) int {
		if a.group != b.group {
			return a.group - b.group
		}
		return int(a.term) - int(b.term)
	})
	n := len(p.Parts)
	nw := (n + 63) / 64
	mask := make([]uint64, nw)
	full := make([]uint64, nw)
	fullMask(full, n)
	// The groups go to x.encoded first, their lengths known after.
	groups := x.encoded[:0]
	lens := make([]int, len(x.partFields))
	prev := uint32(0)
	uniform := ^uint64(0) // cleared for a group with a term some part lacks
	for i := 0; i < len(es); {
		t, g := es[i].term, es[i].group
		if i == 0 || es[i-1].group != g {
			prev = 0
		}
		clear(mask)
		for ; i < len(es) && es[i].term == t; i++ {
			if es[i].part < 0 {
				fullMask(mask, n)
			} else {
				mask[es[i].part/64] |= 1 << (es[i].part % 64)
			}
		}
		if !slices.Equal(mask, full) {
			uniform &^= 1 << g
		}
		before := len(groups)
		groups = binary.AppendUvarint(groups, uint64(t-prev))
		for _, w := range mask {
			groups = binary.AppendUvarint(groups, w)
		}
		lens[g] += len(groups) - before
		prev = t
	}
	x.encoded = groups
	b := binary.AppendUvarint(x.partHeader[:0], uint64(n))
	for _, l := range lens {
		b = binary.AppendUvarint(b, uint64(l))
	}
	x.partHeader = b
	size := len(b) + len(groups)
	var l partList
	switch old := x.parts[id]; {
	case cap(old) >= size && cap(old) <= 2*size+16:
		l = old[:0]
	case !x.ready:
		// Carved from an arena while building, so that checking the parts
		// of many matches reads memory in order.
		if cap(x.partArena)-len(x.partArena) < size {
			x.partArena = make([]byte, 0, max(1<<16, size))
		}
		start := len(x.partArena)
		x.partArena = x.partArena[:start+size]
		l = partList(x.partArena[start : start : start+size])
	default:
		l = make(partList, 0, size)
	}
	x.parts[id] = append(append(l, b...), groups...)
	x.partUniform[id] = uniform
}

// groups reads a part list's header: it returns the number of parts,
// and sets gs[g] to the entries of part field g (see partList).
func (l partList) groups(gs [][]byte) int {
	n, k := uvarint(l)
	head := l[k:]
	// Most groups are shorter than 128 bytes: a byte of size each.
	r := head[len(gs):]
	for g := range gs {
		size := int(head[g])
		if size >= 0x80 {
			return l.groupsSlow(gs)
		}
		gs[g], r = r[:size], r[size:]
	}
	return int(n)
}

func (l partList) groupsSlow(gs [][]byte) int {
	n, k := uvarint(l)
	head := l[k:]
	r := head
	for range gs {
		_, k := uvarint(r)
		r = r[k:]
	}
	for g := range gs {
		size, k := uvarint(head)
		head = head[k:]
		gs[g], r = r[:size], r[size:]
	}
	return int(n)
}

// fullMask sets the bits of parts 0 to n-1.
func fullMask(mask []uint64, n int) {
	for w := range mask {
		switch {
		case n >= (w+1)*64:
			mask[w] = ^uint64(0)
		case n > w*64:
			mask[w] = 1<<(n-w*64) - 1
		}
	}
}

// partFilter is a part filter as checkParts reads it: the terms it
// matches, and the part fields they are of (a bit each, by index in
// partFields).
type partFilter struct {
	terms  bitset
	groups uint64
}

// partFilters returns the part filters of filters; nil when there is
// none. The caller holds x.mu for reading.
func (x *Index) partFilters(filters []Filter) []partFilter {
	if len(x.isPart) == 0 {
		return nil
	}
	var out []partFilter
	for _, f := range filters {
		if !x.isPartFilter(f) {
			continue
		}
		var (
			ids    []uint32
			groups uint64
		)
		for _, t := range f.Terms {
			groups |= 1 << x.partGroup[t.Field]
			if id, ok := x.lookup(t.Field, strings.TrimSpace(t.Value)); ok {
				ids = append(ids, id)
			}
		}
		if f.Match != nil {
			groups |= 1 << x.partGroup[f.Field]
			for _, id := range x.byField[f.Field] {
				if t := &x.terms[id]; len(t.postings) > 0 && f.Match(t.display) {
					ids = append(ids, id)
				}
			}
		}
		slices.Sort(ids)
		out = append(out, partFilter{bitsetOf(ids), groups})
	}
	return out
}

func (x *Index) isPartFilter(f Filter) bool {
	if f.Match == nil && len(f.Terms) == 0 {
		return false
	}
	if f.Match != nil && !x.isPart[f.Field] {
		return false
	}
	for _, t := range f.Terms {
		if !x.isPart[t.Field] {
			return false
		}
	}
	return true
}

func (b bitset) has(id uint32) bool {
	w := int(id >> 6)
	return w < len(b) && b[w]>>(id&63)&1 == 1
}

// checkParts applies the part filters fs to the matching documents ids
// (sorted): it returns those of them with a part meeting every filter
// (ids itself when all have one, never modified) and, when correct is set
// (facets are counted), by term id, how many of them hold each facet term
// of a part field only in parts that do not (nil when none does), with
// the ids it counted. The caller holds x.mu for reading, and gives corr
// back to putCounts after use.
//
// Telling which parts of a document meet the filters reads only the
// entries of the fields they are on (a media type filter reads a skill's
// media types, not its id and name). A document whose parts all meet them
// is done then; only for the others are the entries of the facet fields
// read, for the terms their other parts hold.
func (x *Index) checkParts(ids []uint32, fs []partFilter, correct bool) (kept []uint32, corr []int32, touched []uint32) {
	var read uint64 // the groups the filters are on
	for _, f := range fs {
		read |= f.groups
	}
	var (
		met, m, s, full []uint64
		out             []uint32
		lists           = x.parts
		gs              = make([][]byte, len(x.partFields))
	)
	for i, id := range ids {
		l := lists[id]
		if l == nil || x.partUniform[id]&read == read {
			// One part, or parts alike in the fields filtered on: the
			// document matched the filters at document level, so each
			// of its parts meets them all and every term counts.
			if out != nil {
				out = append(out, id)
			}
			continue
		}
		n := l.groups(gs)
		nw := (n + 63) / 64
		// The parts meeting each filter.
		met = slices.Grow(met[:0], nw*len(fs))[:nw*len(fs)]
		clear(met)
		m = slices.Grow(m[:0], nw)[:nw]
		for b := read; b != 0; b &= b - 1 {
			g := bits.TrailingZeros64(b)
			var t uint32
			for r := gs[g]; len(r) > 0; {
				v, k := uvarint(r)
				r = r[k:]
				t += uint32(v)
				for w := range nw {
					m[w], k = uvarint(r)
					r = r[k:]
				}
				for j, f := range fs {
					if f.groups&(1<<g) != 0 && f.terms.has(t) {
						for w := range nw {
							met[j*nw+w] |= m[w]
						}
					}
				}
			}
		}
		// The parts meeting them all (s).
		s = slices.Grow(s[:0], nw)[:nw]
		full = slices.Grow(full[:0], nw)[:nw]
		fullMask(full, n)
		some, all := false, true
		for w := range s {
			s[w] = full[w]
			for j := range fs {
				s[w] &= met[j*nw+w]
			}
			some = some || s[w] != 0
			all = all && s[w] == full[w]
		}
		if !some {
			if out == nil {
				out = append(make([]uint32, 0, len(ids)-1), ids[:i]...)
			}
			continue
		}
		if out != nil {
			out = append(out, id)
		}
		if all || !correct {
			continue // every part met them: every term counts
		}
		// Facet terms held by no part that met them all.
		if corr == nil {
			corr = x.getCounts()
		}
		for g, r := range gs {
			if !x.partFacet[g] {
				continue
			}
			var t uint32
			for len(r) > 0 {
				v, k := uvarint(r)
				r = r[k:]
				t += uint32(v)
				held := false
				for w := range nw {
					mw, k := uvarint(r)
					r = r[k:]
					held = held || mw&s[w] != 0
				}
				if held {
					continue
				}
				if corr[t] == 0 {
					touched = append(touched, t)
				}
				corr[t]++
			}
		}
	}
	if out == nil {
		out = ids
	}
	if corr != nil && len(touched) == 0 {
		x.putCounts(corr) // untouched: still clean
		corr = nil
	}
	return out, corr, touched
}

// uvarint is binary.Uvarint, inlined for the one-byte values most of a
// part list's are.
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}
