package search

import (
	"encoding/binary"
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
// each, encoded: the uvarint of the number of parts, then for each term in
// term id order the uvarint of its gap from the previous id shifted left
// one (the low bit set for a facet term), then the term's part mask in
// uvarints of 64 parts each. Nil for a document with fewer than two parts.
type partList []byte

type partEntry struct {
	term uint32
	part int // -1: every part (a term given in Facets)
}

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
		if x.isPart[f.Field] {
			es = append(es, partEntry{terms[i], -1})
		}
	}
	k := len(p.Facets)
	for i, part := range p.Parts {
		for _, f := range part {
			if x.isPart[f.Field] {
				es = append(es, partEntry{terms[k], i})
			}
			k++
		}
	}
	x.partEntries = es
	if len(es) == 0 {
		x.parts[id] = nil
		return
	}
	slices.SortFunc(es, func(a, b partEntry) int { return int(a.term) - int(b.term) })
	n := len(p.Parts)
	nw := (n + 63) / 64
	mask := make([]uint64, nw)
	b := binary.AppendUvarint(x.encoded[:0], uint64(n))
	prev := uint32(0)
	for i := 0; i < len(es); {
		t := es[i].term
		clear(mask)
		for ; i < len(es) && es[i].term == t; i++ {
			if es[i].part < 0 {
				fullMask(mask, n)
			} else {
				mask[es[i].part/64] |= 1 << (es[i].part % 64)
			}
		}
		v := uint64(t-prev) << 1
		if x.terms[t].facet >= 0 {
			v |= 1
		}
		b = binary.AppendUvarint(b, v)
		for _, w := range mask {
			b = binary.AppendUvarint(b, w)
		}
		prev = t
	}
	x.encoded = b
	switch l := x.parts[id]; {
	case cap(l) >= len(b) && cap(l) <= 2*len(b)+16:
		x.parts[id] = append(l[:0], b...)
	case !x.ready:
		// Carved from an arena while building, so that checking the parts
		// of many matches reads memory in order.
		if cap(x.partArena)-len(x.partArena) < len(b) {
			x.partArena = make([]byte, 0, max(1<<16, len(b)))
		}
		start := len(x.partArena)
		x.partArena = append(x.partArena, b...)
		x.parts[id] = partList(x.partArena[start:len(x.partArena):len(x.partArena)])
	default:
		x.parts[id] = slices.Clone(partList(b))
	}
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

// partFilters returns, for each part filter of filters, the set of terms
// it matches; nil when there is none. The caller holds x.mu for reading.
func (x *Index) partFilters(filters []Filter) []bitset {
	if len(x.isPart) == 0 {
		return nil
	}
	var out []bitset
	for _, f := range filters {
		if !x.isPartFilter(f) {
			continue
		}
		var ids []uint32
		for _, t := range f.Terms {
			if id, ok := x.lookup(t.Field, strings.TrimSpace(t.Value)); ok {
				ids = append(ids, id)
			}
		}
		if f.Match != nil {
			for _, id := range x.byField[f.Field] {
				if t := &x.terms[id]; len(t.postings) > 0 && f.Match(t.display) {
					ids = append(ids, id)
				}
			}
		}
		slices.Sort(ids)
		out = append(out, bitsetOf(ids))
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
// (ids itself when all have one, never modified) and, by term id, how many
// of them hold each facet term of a part field only in parts that do not
// (nil when none does), with the ids it counted. The caller holds x.mu
// for reading, and gives corr back to putCounts after use.
func (x *Index) checkParts(ids []uint32, fs []bitset) (kept []uint32, corr []int32, touched []uint32) {
	type entry struct {
		term  uint32
		facet bool
	}
	var (
		es            []entry
		masks, met, s []uint64
		out           []uint32
		full          []uint64
		lists         = x.parts
	)
	for i, id := range ids {
		l := lists[id]
		if l == nil {
			if out != nil {
				out = append(out, id)
			}
			continue
		}
		// The entries of the part list, decoded once.
		n, k := binary.Uvarint(l)
		nw := (int(n) + 63) / 64
		es, masks = es[:0], masks[:0]
		var t uint32
		for r := l[k:]; len(r) > 0; {
			v, k := binary.Uvarint(r)
			r = r[k:]
			t += uint32(v >> 1)
			es = append(es, entry{t, v&1 == 1})
			for range nw {
				m, k := binary.Uvarint(r)
				masks = append(masks, m)
				r = r[k:]
			}
		}
		// The parts meeting each filter, and those meeting all (s).
		met = slices.Grow(met[:0], nw*len(fs))[:nw*len(fs)]
		clear(met)
		for e, en := range es {
			for j, f := range fs {
				if f.has(en.term) {
					for w := range nw {
						met[j*nw+w] |= masks[e*nw+w]
					}
				}
			}
		}
		s = slices.Grow(s[:0], nw)[:nw]
		full = slices.Grow(full[:0], nw)[:nw]
		fullMask(full, int(n))
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
		if all {
			continue // every part met them: every term counts
		}
		// Facet terms held by no part that met them all.
	terms:
		for e, en := range es {
			if !en.facet {
				continue
			}
			for w := range nw {
				if masks[e*nw+w]&s[w] != 0 {
					continue terms
				}
			}
			if corr == nil {
				corr = x.getCounts()
			}
			if corr[en.term] == 0 {
				touched = append(touched, en.term)
			}
			corr[en.term]++
		}
	}
	if out == nil {
		out = ids
	}
	return out, corr, touched
}
