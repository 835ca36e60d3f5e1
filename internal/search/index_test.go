package search

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestSearchBeforeReady(t *testing.T) {
	x := newTestIndex()
	x.Apply([]Doc{{ID: 1, Seq: 1, Text: Text{ColName: "invoice reader"}}})
	if _, err := x.Search(Query{Text: "invoice", Limit: 10}); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Search before MarkReady: err = %v, want ErrNotReady", err)
	}
	if st := x.State(); st.Ready || st.Docs != 1 {
		t.Fatalf("State() = %+v, want not ready with 1 doc", st)
	}
	x.MarkReady()
	res, err := x.Search(Query{Text: "invoice", Limit: 10})
	if err != nil || res.Total != 1 {
		t.Fatalf("Search after MarkReady = %+v, %v; want 1 hit", res, err)
	}
	if st := x.State(); !st.Ready || st.BuiltAt.IsZero() {
		t.Fatalf("State() = %+v, want ready with a build time", st)
	}
}

func TestRemove(t *testing.T) {
	doc := func(id uint32, seq int64, name, tag string) Doc {
		return Doc{ID: id, Seq: seq, SortKey: name, Text: Text{ColName: name}, Facets: []Facet{{"tag", tag}}}
	}
	type op struct {
		apply  *Doc
		remove uint32
		seq    int64
	}
	tests := []struct {
		name     string
		ops      []op
		wantIDs  []uint32 // matching "invoice" in id order
		wantTags []FacetCount
	}{
		{
			name:     "removes a present doc from words and terms",
			ops:      []op{{remove: 2, seq: 10}},
			wantIDs:  []uint32{1},
			wantTags: []FacetCount{{"a", 1}},
		},
		{
			name:     "unknown id is a tombstone only",
			ops:      []op{{remove: 99, seq: 10}},
			wantIDs:  []uint32{1, 2},
			wantTags: []FacetCount{{"a", 1}, {"b", 1}},
		},
		{
			name:     "older or equal removal is ignored",
			ops:      []op{{remove: 2, seq: 2}, {remove: 1, seq: 1}},
			wantIDs:  []uint32{1, 2},
			wantTags: []FacetCount{{"a", 1}, {"b", 1}},
		},
		{
			name:     "tombstone stops an older version",
			ops:      []op{{remove: 2, seq: 10}, {apply: new(doc(2, 9, "invoice late", "c"))}},
			wantIDs:  []uint32{1},
			wantTags: []FacetCount{{"a", 1}},
		},
		{
			name:     "newer version brings a removed doc back",
			ops:      []op{{remove: 2, seq: 10}, {apply: new(doc(2, 11, "invoice again", "c"))}},
			wantIDs:  []uint32{1, 2},
			wantTags: []FacetCount{{"a", 1}, {"c", 1}},
		},
		{
			name:     "equal seq update is a no-op",
			ops:      []op{{apply: new(doc(2, 2, "other", "c"))}},
			wantIDs:  []uint32{1, 2},
			wantTags: []FacetCount{{"a", 1}, {"b", 1}},
		},
		{
			name:     "removing twice",
			ops:      []op{{remove: 1, seq: 10}, {remove: 1, seq: 11}},
			wantIDs:  []uint32{2},
			wantTags: []FacetCount{{"b", 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := newTestIndex()
			x.Apply([]Doc{doc(1, 1, "invoice one", "a"), doc(2, 2, "invoice two", "b")})
			x.MarkReady()
			for _, o := range tt.ops {
				if o.apply != nil {
					x.Apply([]Doc{*o.apply})
				} else {
					x.Remove(o.remove, o.seq)
				}
			}
			res, err := x.Search(Query{Text: "invoice", Limit: 10, FacetLimit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var ids []uint32
			for _, h := range res.Hits {
				ids = append(ids, h.ID)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, tt.wantIDs) || res.Total != len(tt.wantIDs) {
				t.Errorf("hits = %v (total %d), want %v", ids, res.Total, tt.wantIDs)
			}
			if !slices.Equal(res.Facets["tag"], tt.wantTags) {
				t.Errorf("tag facet = %v, want %v", res.Facets["tag"], tt.wantTags)
			}
			if got := x.State().Docs; got != len(tt.wantIDs) {
				t.Errorf("State().Docs = %d, want %d", got, len(tt.wantIDs))
			}
			if got := x.text.docs; got != len(tt.wantIDs) {
				t.Errorf("text docs = %d, want %d", got, len(tt.wantIDs))
			}
		})
	}
}

// TestRemoveEverythingLeavesNothing removes every doc of a random catalog
// and checks that no posting, length total or doc survives.
func TestRemoveEverythingLeavesNothing(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(7, 7))}
	docs := make([]Doc, 500)
	for i := range docs {
		docs[i] = g.doc(uint32(i), int64(i+1))
	}
	x := build(g, docs)
	for _, d := range docs {
		x.Remove(d.ID, 1000)
	}
	for _, tm := range x.terms {
		if len(tm.postings) > 0 {
			t.Fatalf("term %s=%s keeps postings %v", tm.field, tm.display, tm.postings)
		}
	}
	for _, tm := range x.text.terms {
		if len(tm.postings) > 0 {
			t.Fatalf("word %s keeps postings %v", tm.word, tm.postings)
		}
	}
	if x.text.colTotal != [NumCols]uint64{} || x.text.docs != 0 || len(x.all) != 0 {
		t.Fatalf("totals %v, docs %d, all %d: want zero", x.text.colTotal, x.text.docs, len(x.all))
	}
	res, err := x.Search(Query{Limit: 5, FacetLimit: 5})
	if err != nil || res.Total != 0 || len(res.Facets["tag"]) != 0 {
		t.Fatalf("Search on emptied index = %+v, %v", res, err)
	}
}

// FuzzIndex drives an index with operations decoded from the input —
// apply, remove, stale apply, search — and checks every search against
// the oracle.
func FuzzIndex(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{0, 0, 0, 3, 3, 1, 1, 3, 2, 3, 0, 9, 3})
	f.Add([]byte("search as you type, with removals and updates"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 400 {
			return
		}
		g := gen{rand.New(rand.NewPCG(uint64(len(ops)), 3))}
		x := newTestIndex()
		x.MarkReady()
		o := newOracle()
		var seq int64
		for i, b := range ops {
			id := uint32(b>>2) % 24
			seq++
			switch b & 3 {
			case 0:
				d := g.doc(id, seq)
				x.Apply([]Doc{d})
				o.set(d)
			case 1:
				x.Remove(id, seq)
				o.remove(id)
			case 2:
				if s, ok := x.Seq(id); ok {
					x.Apply([]Doc{g.doc(id, s)})
				}
			case 3:
				var known []Doc
				for _, d := range o.docs {
					known = append(known, d)
				}
				slices.SortFunc(known, func(a, b Doc) int { return int(a.ID) - int(b.ID) })
				q := g.query(known)
				got, err := x.Search(q)
				if err != nil {
					t.Fatal(err)
				}
				if d := diffResults(got, o.search(q)); d != "" {
					t.Fatalf("op %d, query %q: %s", i, q.Text, d)
				}
			}
		}
	})
}

// Searches run beside updates (run with -race): every answer is one the
// index could give at some point, here one whose total stays within the
// catalog and whose facet counts never exceed it.
func TestSearchDuringApply(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(9, 9))}
	const n = 2000
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = g.doc(uint32(i+1), 1)
	}
	x := build(g, docs)
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for {
			select {
			case <-done:
				return
			default:
			}
			// Part filters too: their check reads the documents' parts.
			res, err := x.Search(Query{Text: "ex", Limit: 5, FacetLimit: 3, Filters: []Filter{modeFilter("text/*"), modeFilter("*/*")}})
			if err != nil {
				errs <- err
				return
			}
			if res.Total > n {
				errs <- errors.New("more matches than documents")
				return
			}
		}
	}()
	ug := gen{rand.New(rand.NewPCG(10, 10))}
	for round := range 3 {
		batch := make([]Doc, n)
		for i := range batch {
			batch[i] = ug.doc(uint32(i+1), int64(round+2))
		}
		x.Apply(batch)
		for i := uint32(1); i <= n; i += 7 {
			x.Remove(i, int64(round+2))
		}
	}
	close(done)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// SetFields changes status facets in place, and only on the state the
// change was made on; the result equals a fresh index of the new document.
func TestSetFields(t *testing.T) {
	doc := func(seq int64, health string, audit ...string) Doc {
		fs := []Facet{{"tag", "invoices"}, {"health", health}}
		for _, a := range audit {
			fs = append(fs, Facet{"audit", a})
		}
		return Doc{ID: 3, Seq: seq, SortKey: "reader", Text: Text{ColName: "invoice reader"}, Facets: fs}
	}
	tests := []struct {
		name       string
		prev, seq  int64
		values     map[string][]string
		wantOK     bool
		wantDoc    Doc // what a fresh index must equal afterwards
		wantHealth string
	}{
		{"replaces one field", 5, 6, map[string][]string{"health": {"down"}}, true, doc(6, "down"), "down"},
		{"replaces several and clears one", 5, 7, map[string][]string{"health": {"stale"}, "audit": nil}, true, doc(7, "stale"), "stale"},
		{"adds values to an empty field", 5, 6, map[string][]string{"audit": {"no_tls", "weak_flow"}}, true, doc(6, "up", "no_tls", "weak_flow"), "up"},
		{"refuses another prior state", 4, 6, map[string][]string{"health": {"down"}}, false, doc(5, "up"), "up"},
		{"refuses an older sequence", 5, 5, map[string][]string{"health": {"down"}}, false, doc(5, "up"), "up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := newTestIndex()
			x.Apply([]Doc{doc(5, "up")})
			x.MarkReady()
			if ok := x.SetFields(3, tt.prev, tt.seq, tt.values); ok != tt.wantOK {
				t.Fatalf("SetFields = %v, want %v", ok, tt.wantOK)
			}
			fresh := newTestIndex()
			fresh.Apply([]Doc{tt.wantDoc})
			fresh.MarkReady()
			for _, q := range []Query{
				{Limit: 10, FacetLimit: 10},
				{Text: "invoice", Limit: 10, FacetLimit: 10},
				{Filters: []Filter{{Terms: []Facet{{"health", tt.wantHealth}}}}, Limit: 10, FacetLimit: 10},
			} {
				got, err := x.Search(q)
				if err != nil {
					t.Fatal(err)
				}
				want, err := fresh.Search(q)
				if err != nil {
					t.Fatal(err)
				}
				if got.Total != want.Total || !slices.Equal(got.Hits, want.Hits) || !sameFacets(got.Facets, want.Facets) {
					t.Errorf("query %+v:\n got %+v\nwant %+v", q, got, want)
				}
			}
			if seq, _ := x.Seq(3); seq != tt.wantDoc.Seq {
				t.Errorf("Seq = %d, want %d", seq, tt.wantDoc.Seq)
			}
		})
	}
}

func sameFacets(a, b map[string][]FacetCount) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// Pages without query text follow the sort key, also among keys whose
// first eight bytes are equal (the prefix that rejects most docs says
// nothing then), and after renames that move docs across pages.
func TestPagesByName(t *testing.T) {
	names := []string{"", "a", "ab", "abcdefgh", "abcdefgh", "abcdefgha", "abcdefghb", "abcdefgh\x00", "abcdefg",
		"abcdefgi", "b", "zzzzzzzzzz", "zzzzzzzzz", "\xff\xff\xff\xff\xff\xff\xff\xff\xff"}
	r := rand.New(rand.NewPCG(1, 2))
	x := newTestIndex()
	var docs []Doc
	for i := range 300 {
		suffix := names[r.IntN(len(names))]
		name := names[r.IntN(len(names))] + suffix[:min(2, len(suffix))]
		docs = append(docs, Doc{ID: uint32(i + 1), Seq: 1, SortKey: name, Text: Text{ColName: "agent"}})
	}
	x.Apply(docs)
	x.MarkReady()
	for round := range 3 {
		if round > 0 {
			for i := range docs {
				if r.IntN(3) == 0 {
					docs[i].Seq++
					docs[i].SortKey = names[r.IntN(len(names))]
					x.Apply([]Doc{docs[i]})
				}
			}
		}
		want := make([]Hit, len(docs))
		for i, d := range docs {
			want[i] = Hit{ID: d.ID, SortKey: d.SortKey, Seq: d.Seq}
		}
		slices.SortFunc(want, byName)
		for _, limit := range []int{1, 3, 7, 40} {
			var got []Hit
			var after *Hit
			for {
				res, err := x.Search(Query{Limit: limit, After: after})
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, res.Hits...)
				if len(res.Hits) < limit {
					break
				}
				after = &res.Hits[len(res.Hits)-1]
			}
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, pages of %d: got %d hits, first difference at %d", round, limit, len(got), firstDiff(got, want))
			}
		}
	}
}

func firstDiff(a, b []Hit) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// The ASCII path of tokenize splits exactly as the general one.
func FuzzTokenizeASCII(f *testing.F) {
	for _, s := range []string{"", "Invoice-Reader v2.0: PDFs, e-mail & JSON!", "  a  ", "ABC_def123", "x\x00y\x7fz", "Ünïcode"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := tokenizeASCII(s)
		if !ok {
			return
		}
		want := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("tokenizeASCII(%q) = %q, want %q", s, got, want)
		}
	})
}

func TestTokenizeASCII(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "abcXYZ019 -_.,:;!?@#$%^&*()[]{}<>/\\|'\"\t\n\x00\x7f"
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		got, ok := tokenizeASCII(s)
		want := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if !ok || !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("tokenizeASCII(%q) = %q, %v; want %q", s, got, ok, want)
		}
	}
	if _, ok := tokenizeASCII("café"); ok {
		t.Error("non-ASCII text took the ASCII path")
	}
}
