package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"
)

// memIndex is the in-memory search index: an inverted index of words for
// full-text search (text.go) and one of (field, value) terms for filters
// and facets. Filters become intersections of sorted posting lists, facet
// counts a pass over the matching agents' terms — milliseconds in memory
// where SQL GROUP BYs over a 100,000-agent catalog take hundreds.
//
// The database stays the source of truth: the index is rebuilt from it at
// start (agents, skills), updated after each committed write
// of this process, and refreshed from rows that other replicas changed
// (see Store.Sync).
type memIndex struct {
	mu      sync.RWMutex
	termIDs map[string]uint32 // termKey → id
	terms   []term
	// byField lists the term ids of each field, for wildcard matching.
	byField map[string][]uint32
	docs    []doc    // indexed by pk
	all     []uint32 // sorted pks of present docs
	text    textIndex
	// lens holds each doc's column lengths, by pk, apart from docs so
	// that BM25 scoring reads a dense array.
	lens [][numCols]uint16
	// arena backs docs' term lists: facet counting walks them for
	// thousands of docs, and contiguous lists keep that in cache.
	arena []uint32

	countsPool sync.Pool
}

type term struct {
	field    string
	display  string
	postings []uint32 // sorted agent pks
}

type doc struct {
	present bool
	seq     int64
	sortKey string
	// terms lists facet terms first and filter-only terms (skill names)
	// after nFacet, so facet counting reads a prefix.
	terms  []uint32
	nFacet int
	words  []uint32
}

// indexedDoc is what a committed write publishes to the index.
type indexedDoc struct {
	pk int64
	// seq orders writes of one agent: the index never replaces a doc with
	// an older one, whichever order writers, syncs and builds deliver them.
	seq     int64
	sortKey string
	facets  []facetRecord
	text    searchText
	// analyzed, when set, is text already analyzed (see analyze).
	analyzed *analyzed
}

func termKey(field, value string) string {
	return field + "\x00" + strings.ToLower(value)
}

func newMemIndex() *memIndex {
	return &memIndex{termIDs: make(map[string]uint32), byField: make(map[string][]uint32), text: newTextIndex()}
}

// publish applies committed writes to the index: at once when it is built,
// after the build when one is under way, not at all before (the build will
// read them from the database).
func (s *Store) publish(docs []indexedDoc) {
	s.syncMu.Lock()
	idx := s.index
	if idx == nil && s.building {
		s.pending = append(s.pending, docs...)
	}
	s.syncMu.Unlock()
	if idx != nil {
		for _, d := range docs {
			idx.set(d)
		}
	}
}

// loadedIndex returns the index if it has been built, without building it.
func (s *Store) loadedIndex() *memIndex {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	return s.index
}

// searchIndex returns the index, building it from the database on first
// use. The build runs detached from the caller: a search whose client gives
// up stops waiting, not the build. A failed build is retried by the next
// search.
func (s *Store) searchIndex(ctx context.Context) (*memIndex, error) {
	s.syncMu.Lock()
	if idx := s.index; idx != nil {
		s.syncMu.Unlock()
		return idx, nil
	}
	b := s.build
	if b == nil {
		b = &indexBuild{done: make(chan struct{})}
		s.build = b
		s.building = true
		go s.runBuild(b)
	}
	s.syncMu.Unlock()
	select {
	case <-b.done:
		if b.err != nil {
			return nil, fmt.Errorf("building search index: %w", b.err)
		}
		return b.idx, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the search index: %w", ctx.Err())
	}
}

// indexBuild is one build of the search index under way.
type indexBuild struct {
	done chan struct{}
	idx  *memIndex
	err  error
}

func (s *Store) runBuild(b *indexBuild) {
	defer close(b.done)
	start := time.Now()
	idx, err := s.buildIndex(context.Background())
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.building = false
	pending := s.pending
	s.pending = nil
	if err != nil {
		b.err = err
		s.build = nil
		s.log.Error("building search index", "err", err)
		return
	}
	for _, d := range pending {
		idx.set(d)
	}
	// Log before publishing: once published, writers change idx.
	s.log.Info("search index built", "agents", len(idx.all), "terms", len(idx.terms),
		"words", len(idx.text.terms), "duration", time.Since(start))
	b.idx = idx
	s.index = idx
	s.syncedAt = start
}

// buildIndex reads every agent into a new index. Text analysis, the
// costliest step, runs in its own goroutine beside the database reads.
func (s *Store) buildIndex(ctx context.Context) (*memIndex, error) {
	idx := newMemIndex()
	docs := make(chan indexedDoc, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for d := range docs {
			idx.setLocked(d)
		}
	}()
	analyzed := make(chan indexedDoc, 256)
	go func() {
		defer close(docs)
		for d := range analyzed {
			a := analyze(d.text)
			d.analyzed, d.text = &a, searchText{}
			docs <- d
		}
	}()
	err := s.loadDocs(ctx, "", nil, func(d indexedDoc) { analyzed <- d })
	close(analyzed)
	<-done
	if err != nil {
		return nil, err
	}
	idx.text.sortWords()
	idx.text.compact()
	return idx, nil
}

// WarmIndex builds the search index now rather than on the first search.
func (s *Store) WarmIndex(ctx context.Context) error {
	_, err := s.searchIndex(ctx)
	return err
}

// loadDocs streams the index documents of the agents matching where (all
// when empty) in pk order: two result sets (agents, skills) ordered by pk
// and merged, so memory stays flat whatever the catalog size. Facets come
// from the agents row (see docFacets).
func (s *Store) loadDocs(ctx context.Context, where string, args []any, fn func(indexedDoc)) error {
	agentsQ := "SELECT pk, seq, name, description, provider, summary, signature_status, health, audit_codes FROM agents"
	skillsQ := "SELECT agent_pk, skill_id, name, description, tags, examples FROM skills"
	if where != "" {
		agentsQ += " WHERE " + where
		skillsQ += " WHERE agent_pk IN (SELECT pk FROM agents WHERE " + where + ")"
		args = append(slices.Clone(args), args...)
	}
	n := strings.Count(where, "?")
	rebind := func(q string, a []any) (string, []any) {
		if s.dialect != dialectPostgres {
			return q, a
		}
		var b strings.Builder
		i := 0
		for _, r := range q {
			if r == '?' {
				i++
				fmt.Fprintf(&b, "$%d", i)
				continue
			}
			b.WriteRune(r)
		}
		return b.String(), a
	}
	query := func(q string, a []any) (*sql.Rows, error) {
		q, a = rebind(q, a)
		return s.sqlDB.QueryContext(ctx, q, a...)
	}
	agents, err := query(agentsQ+" ORDER BY pk", args[:n])
	if err != nil {
		return err
	}
	defer agents.Close()
	skills, err := query(skillsQ+" ORDER BY agent_pk, ordinal", args[n:2*n])
	if err != nil {
		return err
	}
	defer skills.Close()

	type skillRow struct {
		pk int64
		st skillText
	}
	var (
		nextSkill  *skillRow
		skillsDone bool
	)
	readSkill := func() error {
		nextSkill = nil
		if skillsDone || !skills.Next() {
			skillsDone = true
			return skills.Err()
		}
		var r skillRow
		var tags, examples string
		if err := skills.Scan(&r.pk, &r.st.id, &r.st.name, &r.st.description, &tags, &examples); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(tags), &r.st.tags); err != nil {
			return fmt.Errorf("skill tags of agent %d: %w", r.pk, err)
		}
		if err := json.Unmarshal([]byte(examples), &r.st.examples); err != nil {
			return fmt.Errorf("skill examples of agent %d: %w", r.pk, err)
		}
		nextSkill = &r
		return nil
	}
	if err := readSkill(); err != nil {
		return err
	}
	for agents.Next() {
		var (
			pk, seq                     int64
			name, desc, provider        string
			summary, sig, health, audit string
		)
		if err := agents.Scan(&pk, &seq, &name, &desc, &provider, &summary, &sig, &health, &audit); err != nil {
			return err
		}
		var sks []skillText
		for nextSkill != nil && nextSkill.pk <= pk {
			if nextSkill.pk == pk {
				sks = append(sks, nextSkill.st)
			}
			if err := readSkill(); err != nil {
				return err
			}
		}
		fs, err := storedDocFacets(summary, sig, health, audit)
		if err != nil {
			return fmt.Errorf("facets of agent %d: %w", pk, err)
		}
		fn(indexedDoc{pk: pk, seq: seq, sortKey: sortKeyOf(name), facets: fs, text: textOfParts(name, desc, provider, sks)})
	}
	return agents.Err()
}

func (x *memIndex) docAt(pk int64) *doc {
	for int64(len(x.docs)) <= pk {
		x.docs = append(x.docs, doc{})
		x.lens = append(x.lens, [numCols]uint16{})
	}
	return &x.docs[pk]
}

// alloc returns a zero-length slice of capacity n carved from the arena.
// Space of replaced lists is not reused: updates are rare next to reads,
// and a rebuild at start compacts everything.
func (x *memIndex) alloc(n int) []uint32 {
	if cap(x.arena)-len(x.arena) < n {
		x.arena = make([]uint32, 0, max(1<<20, n))
	}
	start := len(x.arena)
	x.arena = x.arena[:start+n]
	return x.arena[start : start : start+n]
}

func (x *memIndex) termFor(field, value string) uint32 {
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

// set replaces a document's terms and text.
func (x *memIndex) set(nd indexedDoc) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.setLocked(nd)
}

func (x *memIndex) setLocked(nd indexedDoc) {
	pk := uint32(nd.pk)
	d := x.docAt(nd.pk)
	if d.present && nd.seq < d.seq {
		return
	}
	d.seq = nd.seq
	if d.present {
		x.unindex(pk, d)
	} else {
		x.all = insertSorted(x.all, pk)
	}
	d.present = true
	d.sortKey = nd.sortKey
	terms := x.alloc(len(nd.facets))
	var filterOnly []uint32
	for _, f := range nd.facets {
		id := x.termFor(f.Field, f.Value)
		x.terms[id].postings = insertSorted(x.terms[id].postings, pk)
		if f.Field == fieldSkillName {
			filterOnly = append(filterOnly, id)
		} else {
			terms = append(terms, id)
		}
	}
	d.nFacet = len(terms)
	d.terms = append(terms, filterOnly...)
	a := nd.analyzed
	if a == nil {
		an := analyze(nd.text)
		a = &an
	}
	d.words = x.text.add(pk, *a)
	x.lens[pk] = a.lens
}

// unindex removes a present document's postings.
func (x *memIndex) unindex(pk uint32, d *doc) {
	for _, id := range d.terms {
		x.terms[id].postings = removeSorted(x.terms[id].postings, pk)
	}
	x.text.remove(pk, d.words, x.lens[pk])
	x.lens[pk] = [numCols]uint16{}
}

// remove drops a document.
func (x *memIndex) remove(pk int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if pk >= int64(len(x.docs)) || !x.docs[pk].present {
		return
	}
	x.unindex(uint32(pk), &x.docs[pk])
	x.docs[pk] = doc{}
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
func (x *memIndex) matchFilters(filters map[string][]string, matchMode func(pattern, mode string) bool) []uint32 {
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

func (x *memIndex) valuePostings(field, value string, matchMode func(pattern, mode string) bool) []uint32 {
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

func (x *memIndex) postings(field, value string) []uint32 {
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
	n, maxV := 0, uint32(0)
	for _, l := range lists {
		n += len(l)
		if len(l) > 0 {
			maxV = max(maxV, l[len(l)-1])
		}
	}
	out := make([]uint32, 0, n)
	if n < 4096 {
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

// facets counts, per facet field, the matching docs carrying each value and
// keeps the top limit values. all tells that docs is every document. Three
// ways to count, cheapest first: posting lengths when every doc matches;
// posting lengths minus the non-matching docs' terms when most do; else
// the matching docs' terms.
func (x *memIndex) facets(docs []uint32, all bool, limit int) map[string][]FacetCount {
	var (
		counts     []int32
		touched    []uint32
		complement = !all && len(docs) > len(x.all)/2
	)
	countDocs := func(pks []uint32) {
		counts = x.getCounts()
		for _, pk := range pks {
			d := &x.docs[pk]
			for _, id := range d.terms[:d.nFacet] {
				if counts[id] == 0 {
					touched = append(touched, id)
				}
				counts[id]++
			}
		}
	}
	count := func(id uint32) int { return len(x.terms[id].postings) }
	switch {
	case complement:
		countDocs(difference(x.all, docs))
		count = func(id uint32) int { return len(x.terms[id].postings) - int(counts[id]) }
	case !all:
		countDocs(docs)
		count = func(id uint32) int { return int(counts[id]) }
	}
	tops := make(map[string]*topK[FacetCount], len(FilterFields))
	offer := func(id uint32) {
		t := &x.terms[id]
		if t.field == fieldSkillName {
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
	out := make(map[string][]FacetCount, len(FilterFields))
	for _, f := range FilterFields {
		out[f] = []FacetCount{}
		if h := tops[f]; h != nil {
			out[f] = h.sorted()
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

// facetOrder sorts facet values by count, then value.
func facetOrder(a, b FacetCount) int {
	if a.Count != b.Count {
		return b.Count - a.Count
	}
	return strings.Compare(a.Value, b.Value)
}

func (x *memIndex) getCounts() []int32 {
	if c, ok := x.countsPool.Get().(*[]int32); ok && len(*c) >= len(x.terms) {
		return *c
	}
	return make([]int32, len(x.terms)+len(x.terms)/4+64)
}

func (x *memIndex) putCounts(c []int32) {
	x.countsPool.Put(&c)
}
