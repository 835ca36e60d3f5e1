package search

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxLockHold bounds how long Apply holds the write lock before letting
// waiting searches in: one document update takes microseconds, so a slice
// holds dozens of them.
const maxLockHold = time.Millisecond

// Index is the search index. It is safe for concurrent use.
type Index struct {
	mu sync.RWMutex

	facetFields []string
	isFacet     map[string]bool
	isPart      map[string]bool
	// partFields lists the part fields without repeats, partGroup gives
	// each its index there (its group in part lists, parts.go), and
	// partFacet tells which of them are facet fields.
	partFields []string
	partGroup  map[string]int
	partFacet  []bool

	// termIDs maps each field's values, lowered, to term ids: a map of
	// maps keyed by strings hashes faster than one keyed by (field, value)
	// pairs, which the index build looks up for every facet of every
	// document.
	termIDs map[string]map[string]uint32
	terms   []term
	// byField lists the term ids of each field, for matched filters.
	byField map[string][]uint32
	// byName lists the documents of each name key (doc.nameKey), in id
	// order: the few a query that is a name ranks first.
	byName map[uint64][]uint32
	docs   []doc    // indexed by id
	all    []uint32 // sorted ids of present docs
	text   textIndex
	// lens holds each doc's column lengths, by id, apart from docs so that
	// BM25 scoring reads a dense array.
	lens [][NumCols]uint16
	// parts holds, by id, for a document of two parts or more, which of
	// them hold each of its terms of part fields (see parts.go); apart
	// from docs, as checking the parts of many matches reads it alone.
	parts []partList
	// partUniform holds, by id, the part fields (a bit each, by group)
	// in which every part of the document holds the same terms: its part
	// list need not be read for filters on those alone (checkParts).
	partUniform []uint64
	// arena backs docs' term lists during the initial build: facet
	// counting walks them for thousands of docs, and contiguous lists keep
	// that in cache. Updates reuse a list's space when the new one fits.
	arena []uint32
	// partArena backs the part lists of the initial build likewise.
	partArena []byte

	ready   bool
	builtAt time.Time

	// scratch buffers of setLocked, used under the write lock.
	newTerms, oldTerms, curTerms []uint32
	// docTerms holds the term ids of the document being set: its
	// Facets', then its Parts' in order (setLocked).
	docTerms            []uint32
	newWords, oldWords  []textPosting
	packedWords         []uint64
	ranks               []int
	encoded, partHeader []byte
	partEntries         []partEntry

	countsPool  sync.Pool
	matchedPool sync.Pool
	// facetAdds counts, per facet field, the postings added to its terms;
	// facetRanks keeps its terms by documents held, most first, as of a
	// count of them (bitset.go).
	facetAdds  []uint64
	facetRanks []atomic.Pointer[facetRank]
	// gen counts the changes of the index (each taking the write lock),
	// for browseCache.
	gen    uint64
	unions unionCache
	browse browseCache
	// vec holds the documents' vectors (vector.go).
	vec vectorSet
}

type term struct {
	field    string
	display  string
	postings []uint32 // sorted doc ids
	// gen counts the changes of postings, for unionCache.
	gen uint64
	// facet is the index of field in Index.facetFields, -1 for a
	// filter-only field: facet counting reads it instead of hashing field
	// names once per term.
	facet int
	// bits holds postings as a bitset too, for dense facet terms (see
	// bitset.go); nil for the others.
	bits bitset
}

type doc struct {
	// known is set once the doc was added or removed; seq then holds the
	// sequence of that last change (a removal leaves a tombstone).
	known   bool
	present bool
	seq     int64
	sortKey string
	// sortPrefix is sortKey's first bytes as a number (prefix64), so the
	// browse order rejects most documents without comparing strings.
	sortPrefix uint64
	// terms lists facet terms first and filter-only terms after nFacet,
	// each part sorted, so facet counting reads a prefix.
	terms  []uint32
	nFacet int
	// words holds the doc's text term ids with their frequencies, so
	// that an update finds the words it leaves as they were without
	// searching their posting lists (see wordList).
	words wordList
	// phrase is the order of its words in the phrase columns (phrase.go).
	phrase phraseList
	// nameKey identifies its name's words (nameKey): a query that is
	// the name ranks it first. Zero for a name of no words.
	nameKey uint64
}

// New returns an empty index, not ready for searches until MarkReady.
func New(opts Options) *Index {
	x := &Index{
		isFacet: make(map[string]bool, len(opts.FacetFields)),
		isPart:  make(map[string]bool, len(opts.PartFields)),
		termIDs: make(map[string]map[string]uint32),
		byField: make(map[string][]uint32),
		byName:  make(map[uint64][]uint32),
		text:    newTextIndex(),
	}
	// Without repeats, so that a field's index in facetFields names it.
	for _, f := range opts.FacetFields {
		if !x.isFacet[f] {
			x.facetFields = append(x.facetFields, f)
		}
		x.isFacet[f] = true
	}
	x.partGroup = make(map[string]int, len(opts.PartFields))
	for _, f := range opts.PartFields {
		if !x.isPart[f] {
			x.partGroup[f] = len(x.partFields)
			x.partFields = append(x.partFields, f)
			x.partFacet = append(x.partFacet, x.isFacet[f])
		}
		x.isPart[f] = true
	}
	if len(x.partFields) > maxPartFields {
		panic(fmt.Sprintf("search: %d part fields, at most %d", len(x.partFields), maxPartFields))
	}
	x.facetAdds = make([]uint64, len(x.facetFields))
	x.facetRanks = make([]atomic.Pointer[facetRank], len(x.facetFields))
	return x
}

func termKey(field, value string) string {
	return field + "\x00" + strings.ToLower(value)
}

// lookup returns the id of a term, if any document ever held it. Values
// are matched without regard to case.
func (x *Index) lookup(field, value string) (uint32, bool) {
	id, ok := x.termIDs[field][strings.ToLower(value)]
	return id, ok
}

// State describes an index for readiness reports.
type State struct {
	Ready bool
	// Docs counts the documents present.
	Docs int
	// BuiltAt is when MarkReady was called.
	BuiltAt time.Time
}

// State reports whether the index is ready and how many documents it holds.
func (x *Index) State() State {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return State{Ready: x.ready, Docs: len(x.all), BuiltAt: x.builtAt}
}

// MarkReady ends the initial build: searches are answered from now on.
// Posting lists are trimmed of the spare capacity appends left.
func (x *Index) MarkReady() {
	x.mu.Lock()
	x.gen++
	defer x.mu.Unlock()
	for i := range x.terms {
		x.terms[i].postings = trim(x.terms[i].postings)
	}
	for i := range x.text.terms {
		x.text.terms[i].postings = trim(x.text.terms[i].postings)
	}
	x.text.sortWords()
	x.makeBitsets()
	x.ready = true
	x.builtAt = time.Now()
}

// Seq returns the sequence of the last change applied to a document, and
// whether there was one.
func (x *Index) Seq(id uint32) (int64, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if int(id) >= len(x.docs) || !x.docs[id].known {
		return 0, false
	}
	return x.docs[id].seq, true
}

// prepared is a doc with its text analyzed.
type prepared struct {
	*Doc
	a analysis
}

// Apply adds or updates documents. A document whose Seq is not newer than
// what the index holds of it (including a removal) is skipped. Text is
// analyzed before the lock is taken, and the lock is released between
// slices of at most about maxLockHold.
func (x *Index) Apply(docs []Doc) {
	docs = x.newer(docs)
	ps := make([]prepared, len(docs))
	analyzeAll(docs, ps)
	for i := 0; i < len(ps); {
		x.mu.Lock()
		x.gen++
		start := time.Now()
		for i < len(ps) {
			x.setLocked(&ps[i])
			i++
			if i%8 == 0 && time.Since(start) > maxLockHold {
				break
			}
		}
		x.mu.Unlock()
	}
}

// newer returns the docs newer than what the index holds, sparing the
// analysis of the rest (a writer's own change coming back from a reload).
// setLocked checks again: another writer may pass them meanwhile.
func (x *Index) newer(docs []Doc) []Doc {
	x.mu.RLock()
	defer x.mu.RUnlock()
	held := func(d *Doc) bool {
		return int(d.ID) < len(x.docs) && x.docs[d.ID].known && d.Seq <= x.docs[d.ID].seq
	}
	i := slices.IndexFunc(docs, func(d Doc) bool { return held(&d) })
	if i < 0 {
		return docs
	}
	out := slices.Clone(docs[:i])
	for j := i + 1; j < len(docs); j++ {
		if !held(&docs[j]) {
			out = append(out, docs[j])
		}
	}
	return out
}

// analyzeAll analyzes docs into ps, on every CPU for large batches such
// as the initial build's.
func analyzeAll(docs []Doc, ps []prepared) {
	workers := min(runtime.GOMAXPROCS(0), len(docs)/32)
	if workers <= 1 {
		for i := range docs {
			ps[i] = prepared{Doc: &docs[i], a: analyze(&docs[i].Text)}
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(docs); i += workers {
				ps[i] = prepared{Doc: &docs[i], a: analyze(&docs[i].Text)}
			}
		})
	}
	wg.Wait()
}

// SetFields changes, in a document the index holds at sequence prev, the
// values of the given fields, and moves it to sequence seq: a status change
// (health, signature) that leaves the text and the other terms as they
// are, with no analysis and no reload. It reports false when the index
// holds the document at another sequence than prev (or not at all), or
// when a field is a part field (Options.PartFields): the caller then
// applies the whole document. Requiring prev keeps a change
// from landing on a state it was not made on, which a later Apply of an
// intermediate version, older than seq, could no longer correct.
func (x *Index) SetFields(id uint32, prev, seq int64, values map[string][]string) bool {
	x.mu.Lock()
	x.gen++
	defer x.mu.Unlock()
	if int(id) >= len(x.docs) {
		return false
	}
	d := &x.docs[id]
	if !d.present || d.seq != prev || seq <= prev {
		return false
	}
	for f := range values {
		if x.isPart[f] {
			return false
		}
	}
	x.setTerms(id, d, func(facet bool, nt []uint32) []uint32 {
		for _, t := range d.terms {
			f := x.terms[t].field
			if _, replaced := values[f]; !replaced && x.isFacet[f] == facet {
				nt = append(nt, t)
			}
		}
		for f, vs := range values {
			if x.isFacet[f] != facet {
				continue
			}
			for _, v := range vs {
				if v = strings.TrimSpace(v); v != "" {
					nt = append(nt, x.termFor(f, v))
				}
			}
		}
		return nt
	})
	d.seq = seq
	return true
}

// Remove drops a document removed at sequence seq, leaving a tombstone so
// that an older version delivered late does not bring it back.
func (x *Index) Remove(id uint32, seq int64) {
	x.mu.Lock()
	x.gen++
	defer x.mu.Unlock()
	d := x.docAt(id)
	if d.known && seq <= d.seq {
		return
	}
	if d.present {
		for _, t := range d.terms {
			x.dropPosting(t, id)
		}
		for _, w := range d.words.decode(x.oldWords[:0]) {
			x.text.terms[w.id].postings = x.removePosting(x.text.terms[w.id].postings, id)
		}
		x.addLens(x.lens[id], -1)
		x.lens[id] = [NumCols]uint16{}
		x.text.docs--
		x.all = x.removeID(x.all, id)
		x.parts[id] = nil
	}
	x.dropVector(id)
	x.setNameKey(id, d, 0)
	*d = doc{known: true, seq: seq}
}

// setNameKey gives document id the name key k, in byName too.
func (x *Index) setNameKey(id uint32, d *doc, k uint64) {
	if d.nameKey == k {
		return
	}
	if old := d.nameKey; old != 0 {
		ids := x.byName[old]
		if i, ok := slices.BinarySearch(ids, id); ok {
			ids = slices.Delete(ids, i, i+1)
		}
		if len(ids) == 0 {
			delete(x.byName, old)
		} else {
			x.byName[old] = ids
		}
	}
	if k != 0 {
		ids := x.byName[k]
		if i, ok := slices.BinarySearch(ids, id); !ok {
			x.byName[k] = slices.Insert(ids, i, id)
		}
	}
	d.nameKey = k
}

func (x *Index) docAt(id uint32) *doc {
	if int(id) >= len(x.docs) {
		n := int(id) + 1
		x.docs = slices.Grow(x.docs, n-len(x.docs))[:n]
		x.lens = slices.Grow(x.lens, n-len(x.lens))[:n]
		x.parts = slices.Grow(x.parts, n-len(x.parts))[:n]
		x.partUniform = slices.Grow(x.partUniform, n-len(x.partUniform))[:n]
	}
	return &x.docs[id]
}

func (x *Index) termFor(field, value string) uint32 {
	k := strings.ToLower(value)
	ids := x.termIDs[field]
	if id, ok := ids[k]; ok {
		if len(x.terms[id].postings) == 0 {
			// No doc holds it: it is spelled as its next holder spells it,
			// as a fresh build would.
			x.terms[id].display = value
		}
		return id
	}
	id := uint32(len(x.terms))
	facet := -1
	if x.isFacet[field] {
		facet = slices.Index(x.facetFields, field)
	}
	x.terms = append(x.terms, term{field: field, display: value, facet: facet})
	if ids == nil {
		ids = make(map[string]uint32)
		x.termIDs[field] = ids
	}
	ids[k] = id
	x.byField[field] = append(x.byField[field], id)
	return id
}

func (x *Index) addLens(l [NumCols]uint16, sign int) {
	for c, n := range l {
		if sign > 0 {
			x.text.colTotal[c] += uint64(n)
		} else {
			x.text.colTotal[c] -= uint64(n)
		}
	}
}

// setTerms replaces doc id's facet and filter terms with those add
// appends (called for the facet fields, then for the others) and moves the
// doc between posting lists accordingly. Facet terms come first, each part
// sorted and without repeats (two spellings of one value are one term), so
// facet counting reads a prefix.
func (x *Index) setTerms(id uint32, d *doc, add func(facet bool, nt []uint32) []uint32) {
	nt := add(true, x.newTerms[:0])
	slices.Sort(nt)
	nt = slices.Compact(nt)
	nFacet := len(nt)
	nt = add(false, nt)
	slices.Sort(nt[nFacet:])
	nt = append(nt[:nFacet], slices.Compact(nt[nFacet:])...)
	x.newTerms = nt

	old := append(x.oldTerms[:0], d.terms...)
	slices.Sort(old)
	x.oldTerms = old
	cur := append(x.curTerms[:0], nt...)
	slices.Sort(cur)
	x.curTerms = cur
	x.diffTerms(id, old, cur)
	d.terms = x.store(d.terms, nt)
	d.nFacet = nFacet
}

// setLocked applies one document: only the terms, words and term
// frequencies that differ from the stored version touch posting lists.
func (x *Index) setLocked(p *prepared) {
	id := p.ID
	d := x.docAt(id)
	if d.known && p.Seq <= d.seq {
		return
	}
	wasPresent := d.present
	d.known, d.present, d.seq, d.sortKey, d.sortPrefix = true, true, p.Seq, p.SortKey, prefix64(p.SortKey)
	x.setNameKey(id, d, nameKey(p.Text[ColName]))

	// Each facet's term is looked up once, in the document's order (the
	// last spelling of a new term is its display form, as before).
	dt := x.docTerms[:0]
	for _, f := range p.Facets {
		dt = append(dt, x.termFor(f.Field, f.Value))
	}
	for _, part := range p.Parts {
		for _, f := range part {
			dt = append(dt, x.termFor(f.Field, f.Value))
		}
	}
	x.docTerms = dt
	x.setTerms(id, d, func(facet bool, nt []uint32) []uint32 {
		for _, t := range dt {
			if (x.terms[t].facet >= 0) == facet {
				nt = append(nt, t)
			}
		}
		return nt
	})
	x.setParts(id, p.Doc, dt)

	// Words, sorted by term id: packed as id<<32|tf, an ordered sort
	// with no comparison function.
	// Words, sorted by term id: packed as id<<32|index in the analysis,
	// an ordered sort with no comparison function, which also gives each
	// word's rank for the phrase.
	packed := x.packedWords[:0]
	for i, w := range p.a.words {
		packed = append(packed, uint64(x.text.termFor(w.word))<<32|uint64(i))
	}
	slices.Sort(packed)
	x.packedWords = packed
	nw := x.newWords[:0]
	rank := slices.Grow(x.ranks[:0], len(packed))[:len(packed)]
	for r, v := range packed {
		i := uint32(v)
		nw = append(nw, textPosting{id: uint32(v >> 32), tf: p.a.words[i].tf})
		rank[i] = r
	}
	x.newWords = nw
	x.ranks = rank
	x.encoded = encodePhrase(x.encoded[:0], p.a.phrase, rank)
	d.phrase = reuse(d.phrase, x.encoded)
	x.oldWords = d.words.decode(x.oldWords[:0])
	x.diffWords(id, x.oldWords, nw)
	x.encoded = appendWords(x.encoded[:0], nw)
	d.words = reuse(d.words, x.encoded)

	if wasPresent {
		x.addLens(x.lens[id], -1)
	} else {
		x.text.docs++
		x.all = x.insertID(x.all, id)
	}
	x.lens[id] = p.a.lens
	x.addLens(p.a.lens, 1)
}

// reuse returns a copy of b in old's space when it fits without wasting
// much of it, else in a new slice of its own.
func reuse[L ~[]byte](old L, b []byte) L {
	if cap(old) >= len(b) && cap(old) <= 2*len(b)+16 {
		return append(old[:0], b...)
	}
	return L(slices.Clone(b))
}
