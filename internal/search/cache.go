package search

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// unionCache keeps the union of a many-term filter's posting lists from
// one search to the next. A caller's scope (the listing states it may see,
// the groups it holds) is the same filter on every search it makes and
// covers most of the catalog: merging its lists again costs more than the
// rest of a browse. An entry holds while none of its terms' postings
// changed (term.gen), which a crawl that refreshes cards rarely does, and
// is checked under the index's read lock, so it is never stale.
type unionCache struct {
	mu      sync.Mutex
	entries map[string]*unionEntry
}

type unionEntry struct {
	terms []uint32
	gens  []uint64
	ids   []uint32 // never modified once stored
}

const (
	// unionCacheMax bounds the entries (each up to 4 bytes per document).
	unionCacheMax = 16
	// unionCacheMin is the total posting length from which a union is
	// worth keeping; smaller ones are merged each time.
	unionCacheMin = unionBitsetMin
)

// cachedUnion returns the sorted ids carrying any of terms, from the cache
// or merged and kept; ok is false when the union is too small to keep (the
// caller merges it). The caller holds x.mu for reading.
func (x *Index) cachedUnion(terms []Facet) (ids []uint32, ok bool) {
	tids := make([]uint32, 0, len(terms))
	total := 0
	for _, t := range terms {
		id, found := x.lookup(t.Field, strings.TrimSpace(t.Value))
		if found && len(x.terms[id].postings) > 0 {
			tids = append(tids, id)
			total += len(x.terms[id].postings)
		}
	}
	if len(tids) < 2 || total < unionCacheMin {
		return nil, false
	}
	slices.Sort(tids)
	tids = slices.Compact(tids)
	var key strings.Builder
	for _, id := range tids {
		key.WriteString(strconv.FormatUint(uint64(id), 36))
		key.WriteByte(',')
	}
	c := &x.unions
	c.mu.Lock()
	e := c.entries[key.String()]
	c.mu.Unlock()
	if e != nil && x.current(e) {
		return e.ids, true
	}
	lists := make([][]uint32, len(tids))
	gens := make([]uint64, len(tids))
	for i, id := range tids {
		lists[i], gens[i] = x.terms[id].postings, x.terms[id].gen
	}
	e = &unionEntry{terms: tids, gens: gens, ids: union(lists)}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = make(map[string]*unionEntry)
	}
	if _, had := c.entries[key.String()]; !had && len(c.entries) >= unionCacheMax {
		for k := range c.entries { // any one: a scope not seen lately
			delete(c.entries, k)
			break
		}
	}
	c.entries[key.String()] = e
	c.mu.Unlock()
	return e.ids, true
}

// current reports whether none of e's terms changed since it was merged.
func (x *Index) current(e *unionEntry) bool {
	for i, id := range e.terms {
		if x.terms[id].gen != e.gens[i] {
			return false
		}
	}
	return true
}

// browseCache keeps, for a browse (no text) with filters, its matches and
// facet counts while the index does not change at all (Index.gen): a
// caller's scope makes every browse a filtered one, whose facets are
// counted document by document, where the unfiltered browse reads them
// off the posting lists. Any write to the index makes the entries stale.
type browseCache struct {
	mu      sync.Mutex
	entries map[string]*browseEntry
}

type browseEntry struct {
	gen    uint64
	ids    []uint32                // never modified once stored
	facets map[string][]FacetCount // never modified once stored
}

// browseCacheMax bounds the entries: a catalog has few scopes, and
// browses with other filters are cheap to redo.
const browseCacheMax = 16

// browseKeyOf is the cache key of a browse: its filters, exclusions and
// facet limit; "" when it cannot be cached (no filter, so nothing to save,
// or a filter matching values by function).
func browseKeyOf(q Query) string {
	if len(q.Filters) == 0 {
		return ""
	}
	var b strings.Builder
	for _, f := range q.Filters {
		if f.Match != nil {
			return ""
		}
		keys := make([]string, len(f.Terms))
		for i, t := range f.Terms {
			keys[i] = termKey(t.Field, strings.TrimSpace(t.Value))
		}
		slices.Sort(keys)
		for _, k := range keys {
			b.WriteString(strconv.Quote(k))
			b.WriteByte('|')
		}
		b.WriteByte(';')
	}
	b.WriteString("exclude:")
	for _, t := range q.Exclude {
		b.WriteString(strconv.Quote(termKey(t.Field, strings.TrimSpace(t.Value))))
		b.WriteByte('|')
	}
	b.WriteString(";limit:")
	b.WriteString(strconv.Itoa(q.FacetLimit))
	return b.String()
}

// get returns the entry for key made at index generation gen, or nil.
func (c *browseCache) get(key string, gen uint64) *browseEntry {
	if key == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil && e.gen == gen {
		return e
	}
	return nil
}

func (c *browseCache) put(key string, e *browseEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[string]*browseEntry)
	}
	if _, had := c.entries[key]; !had && len(c.entries) >= browseCacheMax {
		for k, old := range c.entries { // a stale one first, else any
			if old.gen != e.gen {
				delete(c.entries, k)
				break
			}
		}
		if len(c.entries) >= browseCacheMax {
			for k := range c.entries {
				delete(c.entries, k)
				break
			}
		}
	}
	c.entries[key] = e
}
