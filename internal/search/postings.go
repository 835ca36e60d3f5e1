package search

import "slices"

// Posting lists are sorted slices. An update inserts into or deletes from
// the middle of a list, a memmove of its tail: cheap next to rebuilding a
// document, and paid only for the terms that changed. Growth leaves at
// most an eighth of a list spare, and shrinking hands space back, so that
// an index updated many times stays near the size of a fresh build.

// grow returns the capacity for a list about to hold n items: generous
// while building (appends, trimmed by MarkReady), tight afterwards.
func (x *Index) grow(n int) int {
	if !x.ready {
		return n + n/2 + 8
	}
	return n + n/8 + 4
}

func insertAt[T any](x *Index, s []T, i int, v T) []T {
	if len(s) < cap(s) {
		s = s[:len(s)+1]
		copy(s[i+1:], s[i:])
		s[i] = v
		return s
	}
	out := make([]T, len(s)+1, x.grow(len(s)+1))
	copy(out, s[:i])
	out[i] = v
	copy(out[i+1:], s[i:])
	return out
}

func deleteAt[T any](s []T, i int) []T {
	s = slices.Delete(s, i, i+1)
	if n := len(s); cap(s) > 2*n+16 {
		s = slices.Clip(slices.Clone(s))
	}
	return s
}

// trim drops spare capacity beyond an eighth.
func trim[T any](s []T) []T {
	if n := len(s); cap(s) > n+n/8+4 {
		return slices.Clip(slices.Clone(s))
	}
	return s
}

func (x *Index) insertID(s []uint32, id uint32) []uint32 {
	if n := len(s); n == 0 || s[n-1] < id {
		return insertAt(x, s, n, id)
	}
	i, found := slices.BinarySearch(s, id)
	if found {
		return s
	}
	return insertAt(x, s, i, id)
}

func (x *Index) removeID(s []uint32, id uint32) []uint32 {
	i, found := slices.BinarySearch(s, id)
	if !found {
		return s
	}
	return deleteAt(s, i)
}

func (x *Index) removePosting(p []textPosting, id uint32) []textPosting {
	i, found := slices.BinarySearchFunc(p, id, postingOrder)
	if !found {
		return p
	}
	return deleteAt(p, i)
}

// setPosting inserts or replaces a document's posting.
func (x *Index) setPosting(p []textPosting, e textPosting) []textPosting {
	if n := len(p); n == 0 || p[n-1].id < e.id {
		return insertAt(x, p, n, e)
	}
	i, found := slices.BinarySearchFunc(p, e.id, postingOrder)
	if found {
		p[i] = e
		return p
	}
	return insertAt(x, p, i, e)
}

// diffTerms moves doc id from the postings of the terms in old (sorted)
// to those in cur (sorted), touching only the terms in one of them.
func (x *Index) diffTerms(id uint32, old, cur []uint32) {
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		switch {
		case j == len(cur) || (i < len(old) && old[i] < cur[j]):
			x.dropPosting(old[i], id)
			i++
		case i == len(old) || cur[j] < old[i]:
			x.addPosting(cur[j], id)
			j++
		default:
			i++
			j++
		}
	}
}

// diffWords does the same for words: old holds the doc's postings as
// stored, cur its new ones, both sorted by term id. A word kept with the
// same term frequencies costs nothing; with other frequencies, an
// in-place write into its posting list.
func (x *Index) diffWords(id uint32, old, cur []textPosting) {
	t := &x.text
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		switch {
		case j == len(cur) || (i < len(old) && old[i].id < cur[j].id):
			t.terms[old[i].id].postings = x.removePosting(t.terms[old[i].id].postings, id)
			i++
		case i < len(old) && old[i] == cur[j]:
			i++
			j++
		default:
			if i < len(old) && old[i].id == cur[j].id {
				i++
			}
			e := textPosting{id: id, tf: cur[j].tf}
			tt := &t.terms[cur[j].id]
			tt.postings = x.setPosting(tt.postings, e)
			tt.cols |= colsOf(e.tf)
			j++
		}
	}
}

// store copies ids into a doc's term list, reusing its space when the new
// list fits, carving from the arena while building, else allocating just
// what it needs.
func (x *Index) store(dst, ids []uint32) []uint32 {
	if cap(dst) >= len(ids) {
		return append(dst[:0], ids...)
	}
	if !x.ready {
		if cap(x.arena)-len(x.arena) < len(ids) {
			x.arena = make([]uint32, 0, max(1<<16, len(ids)))
		}
		start := len(x.arena)
		x.arena = append(x.arena, ids...)
		return x.arena[start:len(x.arena):len(x.arena)]
	}
	return slices.Clone(ids)
}
