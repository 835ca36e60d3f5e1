package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// facetIndex is an in-memory inverted index of agent_facets: for each
// (field, value) term the sorted list of agent pks carrying it, and for each
// agent its terms and sort key. Filters become intersections of posting
// lists and facet counts a pass over the matching agents' terms — work that
// takes milliseconds in memory but tens to hundreds of milliseconds as SQL
// GROUP BYs over a 100,000-agent catalog.
//
// The database stays the source of truth: the index is rebuilt from
// agent_facets at start, updated after each committed write of this
// process, and refreshed from rows other replicas changed (see Store.Sync).
type facetIndex struct {
	mu      sync.RWMutex
	termIDs map[string]uint32 // termKey → id
	terms   []term
	// byField lists the term ids of each field, for wildcard matching.
	byField map[string][]uint32
	docs    []doc    // indexed by pk
	all     []uint32 // sorted pks of present docs

	countsPool sync.Pool
}

type term struct {
	field    string
	display  string
	postings []uint32 // sorted agent pks
}

type doc struct {
	present bool
	sortKey string
	terms   []uint32
}

// indexedDoc is what a committed write publishes to the index.
type indexedDoc struct {
	pk      int64
	sortKey string
	facets  []facetRecord
}

func termKey(field, value string) string {
	return field + "\x00" + strings.ToLower(value)
}

func newFacetIndex() *facetIndex {
	return &facetIndex{termIDs: make(map[string]uint32), byField: make(map[string][]uint32)}
}

// loadedIndex returns the index if it has been built, without building it.
func (s *Store) loadedIndex() *facetIndex {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	return s.index
}

// searchIndex returns the index, building it from the database on first use.
func (s *Store) searchIndex(ctx context.Context) (*facetIndex, error) {
	s.indexOnce.Do(func() {
		start := time.Now()
		idx, err := s.buildIndex(ctx)
		if err != nil {
			s.indexErr = err
			return
		}
		s.syncMu.Lock()
		s.index = idx
		s.syncedAt = start
		s.syncMu.Unlock()
		s.log.Info("search index built", "agents", len(idx.all), "terms", len(idx.terms), "duration", time.Since(start))
	})
	if s.indexErr != nil {
		return nil, fmt.Errorf("building search index: %w", s.indexErr)
	}
	return s.index, nil
}

// WarmIndex builds the search index now rather than on the first search.
func (s *Store) WarmIndex(ctx context.Context) error {
	_, err := s.searchIndex(ctx)
	return err
}

func (s *Store) buildIndex(ctx context.Context) (*facetIndex, error) {
	idx := newFacetIndex()
	names, err := s.sqlDB.QueryContext(ctx, "SELECT pk, name FROM agents ORDER BY pk")
	if err != nil {
		return nil, err
	}
	defer names.Close()
	for names.Next() {
		var (
			pk   int64
			name string
		)
		if err := names.Scan(&pk, &name); err != nil {
			return nil, err
		}
		d := idx.docAt(pk)
		d.present = true
		d.sortKey = sortKeyOf(name)
		idx.all = append(idx.all, uint32(pk))
	}
	if err := names.Err(); err != nil {
		return nil, err
	}
	rows, err := s.sqlDB.QueryContext(ctx, "SELECT agent_pk, field, value FROM agent_facets ORDER BY agent_pk")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			pk           int64
			field, value string
		)
		if err := rows.Scan(&pk, &field, &value); err != nil {
			return nil, err
		}
		d := idx.docAt(pk)
		if !d.present {
			continue
		}
		id := idx.termFor(field, value)
		d.terms = append(d.terms, id)
		// Rows arrive in pk order, so appending keeps postings sorted.
		idx.terms[id].postings = append(idx.terms[id].postings, uint32(pk))
	}
	return idx, rows.Err()
}

func (x *facetIndex) docAt(pk int64) *doc {
	for int64(len(x.docs)) <= pk {
		x.docs = append(x.docs, doc{})
	}
	return &x.docs[pk]
}

func (x *facetIndex) termFor(field, value string) uint32 {
	k := termKey(field, value)
	if id, ok := x.termIDs[k]; ok {
		return id
	}
	id := uint32(len(x.terms))
	x.terms = append(x.terms, term{field: field, display: value})
	x.termIDs[k] = id
	x.byField[field] = append(x.byField[field], id)
	return id
}

// set replaces a document's terms.
func (x *facetIndex) set(nd indexedDoc) {
	x.mu.Lock()
	defer x.mu.Unlock()
	pk := uint32(nd.pk)
	d := x.docAt(nd.pk)
	for _, id := range d.terms {
		x.terms[id].postings = removeSorted(x.terms[id].postings, pk)
	}
	if !d.present {
		x.all = insertSorted(x.all, pk)
	}
	d.present = true
	d.sortKey = nd.sortKey
	d.terms = d.terms[:0]
	for _, f := range nd.facets {
		id := x.termFor(f.Field, f.Value)
		d.terms = append(d.terms, id)
		x.terms[id].postings = insertSorted(x.terms[id].postings, pk)
	}
}

// remove drops a document.
func (x *facetIndex) remove(pk int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if pk >= int64(len(x.docs)) || !x.docs[pk].present {
		return
	}
	d := &x.docs[pk]
	for _, id := range d.terms {
		x.terms[id].postings = removeSorted(x.terms[id].postings, uint32(pk))
	}
	*d = doc{}
	x.all = removeSorted(x.all, uint32(pk))
}

func insertSorted(s []uint32, v uint32) []uint32 {
	if n := len(s); n == 0 || s[n-1] < v {
		return append(s, v)
	}
	i, found := slices.BinarySearch(s, v)
	if found {
		return s
	}
	return slices.Insert(s, i, v)
}

func removeSorted(s []uint32, v uint32) []uint32 {
	i, found := slices.BinarySearch(s, v)
	if !found {
		return s
	}
	return slices.Delete(s, i, i+1)
}

// matchFilters returns the sorted pks matching every filter value. The
// caller holds x.mu for reading and must not keep the slice past it.
func (x *facetIndex) matchFilters(filters map[string][]string, matchMode func(pattern, mode string) bool) []uint32 {
	var lists [][]uint32
	for field, values := range filters {
		for _, v := range values {
			lists = append(lists, x.valuePostings(field, v, matchMode))
		}
	}
	if len(lists) == 0 {
		return x.all
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

func (x *facetIndex) valuePostings(field, value string, matchMode func(pattern, mode string) bool) []uint32 {
	switch field {
	case FieldInputMode, FieldOutputMode:
		var parts [][]uint32
		for _, id := range x.byField[field] {
			if matchMode(value, x.terms[id].display) {
				parts = append(parts, x.terms[id].postings)
			}
		}
		return union(parts)
	case FieldSkill:
		return union([][]uint32{x.postings(FieldSkill, value), x.postings(fieldSkillName, value)})
	default:
		return x.postings(field, value)
	}
}

func (x *facetIndex) postings(field, value string) []uint32 {
	id, ok := x.termIDs[termKey(field, strings.TrimSpace(value))]
	if !ok {
		return nil
	}
	return x.terms[id].postings
}

// intersect returns the sorted intersection; a is the shorter list, so each
// of its values is looked up in b by galloping binary search.
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

func union(lists [][]uint32) []uint32 {
	switch len(lists) {
	case 0:
		return nil
	case 1:
		return lists[0]
	}
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	out := make([]uint32, 0, n)
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// facets counts, per facet field, the matching docs carrying each value and
// keeps the top limit values. all tells that docs is every document, in
// which case posting lengths are the counts.
func (x *facetIndex) facets(docs []uint32, all bool, limit int) map[string][]FacetCount {
	out := make(map[string][]FacetCount, len(FilterFields))
	for _, f := range FilterFields {
		out[f] = []FacetCount{}
	}
	var counts []int32
	var touched []uint32
	if all {
		for id, t := range x.terms {
			if len(t.postings) > 0 {
				touched = append(touched, uint32(id))
			}
		}
	} else {
		counts = x.getCounts()
		defer x.putCounts(counts)
		for _, pk := range docs {
			for _, id := range x.docs[pk].terms {
				if counts[id] == 0 {
					touched = append(touched, id)
				}
				counts[id]++
			}
		}
	}
	count := func(id uint32) int {
		if all {
			return len(x.terms[id].postings)
		}
		return int(counts[id])
	}
	byField := make(map[string][]uint32, len(FilterFields))
	for _, id := range touched {
		f := x.terms[id].field
		if f == fieldSkillName {
			continue
		}
		byField[f] = append(byField[f], id)
	}
	for f, ids := range byField {
		slices.SortFunc(ids, func(a, b uint32) int {
			if ca, cb := count(a), count(b); ca != cb {
				return cb - ca
			}
			return strings.Compare(x.terms[a].display, x.terms[b].display)
		})
		if len(ids) > limit {
			ids = ids[:limit]
		}
		fc := make([]FacetCount, len(ids))
		for i, id := range ids {
			fc[i] = FacetCount{Value: x.terms[id].display, Count: count(id)}
		}
		out[f] = fc
	}
	if !all {
		// Reset only what this query touched, so the pooled slice is clean.
		for _, id := range touched {
			counts[id] = 0
		}
		touched = touched[:0]
	}
	return out
}

func (x *facetIndex) getCounts() []int32 {
	if c, ok := x.countsPool.Get().(*[]int32); ok && len(*c) >= len(x.terms) {
		return *c
	}
	return make([]int32, len(x.terms)+len(x.terms)/4+64)
}

func (x *facetIndex) putCounts(c []int32) {
	x.countsPool.Put(&c)
}
