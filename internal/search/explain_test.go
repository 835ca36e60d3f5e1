package search

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestExplainAgreesWithSearch: every hit's explanation gives its score
// and its partial flag, and a matched word is one of the document's.
func TestExplainAgreesWithSearch(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(21, 2))}
	docs := make([]Doc, 800)
	for i := range docs {
		docs[i] = g.doc(uint32(i+1), 1)
	}
	x := build(g, docs)
	for range 200 {
		q := g.query(docs)
		q.Filters, q.Demote, q.Exclude = nil, nil, nil
		if q.Text == "" {
			continue
		}
		res, err := x.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			e, ok := x.Explain(q.Text, h.ID)
			if !ok {
				t.Fatalf("%q: no explanation of hit %d", q.Text, h.ID)
			}
			if math.Abs(e.Score-h.Score) > 1e-9*max(1, h.Score) || e.Partial != h.Partial {
				t.Fatalf("%q: hit %+v explained as %+v", q.Text, h, e)
			}
			words := tokenize(docs[h.ID-1].Text[ColName] + " " + docs[h.ID-1].Text[ColTags] + " " + docs[h.ID-1].Text[ColSkills] + " " +
				docs[h.ID-1].Text[ColDescription] + " " + docs[h.ID-1].Text[ColProvider] + " " + docs[h.ID-1].Text[ColExamples])
			for _, w := range e.Words {
				if w.Matched != "" && (!slices.Contains(words, w.Matched) || len(w.Columns) == 0) {
					t.Fatalf("%q: doc %d explained by %+v, not one of its words", q.Text, h.ID, w)
				}
			}
		}
	}
	if _, ok := x.Explain("zzzzqqq", 1); ok {
		t.Error("a document explained for a text it does not match")
	}
}

func TestExplainSaysHow(t *testing.T) {
	x := newTestIndex()
	var d Doc
	d.ID, d.Seq = 1, 1
	d.Text[ColName] = "Rail booking"
	d.Text[ColDescription] = "Sells train tickets"
	x.Apply([]Doc{d})
	x.MarkReady()
	e, ok := x.Explain("reservation for a trian", 1)
	if !ok {
		t.Fatal("no explanation")
	}
	want := []WordMatch{
		{Word: "reserv", Matched: "book", Kind: MatchRelated, Weight: domainWeight, Columns: []string{"name"}},
		{Word: "trian", Matched: "train", Kind: MatchTypo, Weight: typoWeight, Columns: []string{"description"}},
	}
	if len(e.Words) != len(want) {
		t.Fatalf("words %+v", e.Words)
	}
	for i, w := range want {
		got := e.Words[i]
		if got.Word != w.Word || got.Matched != w.Matched || got.Kind != w.Kind || got.Weight != w.Weight || !slices.Equal(got.Columns, w.Columns) || got.Score <= 0 {
			t.Errorf("word %d = %+v, want %+v", i, got, w)
		}
	}
}

func TestComplete(t *testing.T) {
	x := newTestIndex()
	for i, tags := range [][]string{{"Invoices", "finance"}, {"invoices", "OCR"}, {"Invoice matching"}, {"Café reviews"}, {"e-invoicing"}} {
		d := Doc{ID: uint32(i + 1), Seq: 1}
		for _, tg := range tags {
			d.Facets = append(d.Facets, Facet{"tag", tg})
		}
		x.Apply([]Doc{d})
	}
	x.MarkReady()
	complete := func(prefix string) []Completion {
		t.Helper()
		got, err := x.Complete(CompleteQuery{Prefix: prefix, Fields: []string{"tag"}, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := []Completion{{"tag", "Invoices", 2}, {"tag", "Invoice matching", 1}}
	if got := complete("INV"); !slices.Equal(got, want) {
		t.Errorf("Complete(INV) = %+v, want %+v", got, want)
	}
	if got := complete("cafe"); len(got) != 1 || got[0].Value != "Café reviews" {
		t.Errorf("Complete(cafe) = %+v", got)
	}
	if got := complete("rev"); len(got) != 1 {
		t.Errorf("Complete(rev), a later word = %+v", got)
	}
	if got := complete(""); got != nil {
		t.Errorf("Complete of nothing = %+v", got)
	}
}

// TestCompleteInScope: only the values of documents the filters let
// through are offered, counted over those documents alone; a word only
// hidden documents hold is never offered.
func TestCompleteInScope(t *testing.T) {
	x := newTestIndex()
	x.Apply([]Doc{
		{ID: 1, Seq: 1, Facets: []Facet{{"tag", "invoices"}, {"health", "public"}}},
		{ID: 2, Seq: 1, Facets: []Facet{{"tag", "invoices"}, {"tag", "invisible-project"}, {"health", "secret"}}},
		{ID: 3, Seq: 1, Facets: []Facet{{"tag", "invoicing"}, {"health", "public"}, {"mode", "removed"}}},
	})
	x.MarkReady()
	q := CompleteQuery{Fields: []string{"tag"}, Limit: 5,
		Filters: []Filter{{Terms: []Facet{{"health", "public"}}}}, Exclude: []Facet{{"mode", "removed"}}}
	for _, tc := range []struct {
		prefix string
		want   []Completion
	}{
		{"inv", []Completion{{"tag", "invoices", 1}}},
		{"invis", nil},
		{"invoicing", nil},
	} {
		q.Prefix = tc.prefix
		got, err := x.Complete(q)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Complete(%q) in scope = %+v, %v; want %+v", tc.prefix, got, err, tc.want)
		}
	}
	if _, err := newTestIndex().Complete(q); !errors.Is(err, ErrNotReady) {
		t.Errorf("Complete before the build = %v, want ErrNotReady", err)
	}
}

// TestQuestionsDuringApply runs questions of several words (the pooled
// word masks), explanations and completions from several goroutines
// while documents change, for the race detector.
func TestQuestionsDuringApply(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(12, 12))}
	const n = 1500
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = g.doc(uint32(i+1), 1)
	}
	x := build(g, docs)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range 3 {
		wg.Go(func() {
			qg := gen{rand.New(rand.NewPCG(uint64(w), 13))}
			for {
				select {
				case <-done:
					return
				default:
				}
				text := qg.words(2 + qg.r.IntN(5))
				res, err := x.Search(Query{Text: text, Limit: 5, FacetLimit: 3})
				if err != nil {
					t.Error(err)
					return
				}
				for _, h := range res.Hits {
					x.Explain(text, h.ID)
				}
				x.Complete(CompleteQuery{Prefix: text[:1], Fields: []string{"tag", "skill_name"}, Limit: 5, Filters: []Filter{{Terms: []Facet{{"health", "up"}}}}})
			}
		})
	}
	ug := gen{rand.New(rand.NewPCG(14, 14))}
	for round := range 3 {
		batch := make([]Doc, n/2)
		for i := range batch {
			batch[i] = ug.doc(uint32(ug.r.IntN(n)+1), int64(round+2))
		}
		x.Apply(batch)
	}
	close(done)
	wg.Wait()
}

// TestQueriesColumn: a manifest's representative queries are a column of
// their own, counted apart from the others (a word repeated past tfMax in
// one column leaves its neighbours' counts alone), kept through the
// packed word list, and named in explanations.
func TestQueriesColumn(t *testing.T) {
	x := newTestIndex()
	var d Doc
	d.ID, d.Seq = 1, 1
	d.Text[ColName] = "Ledger"
	d.Text[ColExamples] = "payroll"
	d.Text[ColQueries] = "run payroll for my team\n" + strings.Repeat("payroll ", 40)
	x.Apply([]Doc{d, {ID: 2, Seq: 1, Text: Text{ColName: "Team roster"}}})
	x.MarkReady()
	a := analyze(&d.Text)
	counted := false
	for _, w := range a.words {
		if w.word != "payrol" {
			continue
		}
		counted = true
		if got := [NumCols]uint32{ColExamples: 1, ColQueries: tfMax}; w.tf != packCols(got) {
			t.Errorf("payroll counted %#x, want %#x", w.tf, packCols(got))
		}
		if back := unpackTF(packTF(w.tf)); back != w.tf {
			t.Errorf("packed and unpacked %#x, want %#x", back, w.tf)
		}
	}
	if !counted {
		t.Errorf("payroll not counted: %+v", a.words)
	}
	e, ok := x.Explain("payroll", 1)
	if !ok || len(e.Words) != 1 || !slices.Equal(e.Words[0].Columns, []string{"examples", "queries"}) {
		t.Fatalf("explanation %+v", e)
	}
	r, err := x.Search(Query{Text: "payroll for my team", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) != 2 || r.Hits[0].ID != 1 {
		t.Errorf("hits %+v, want the ledger first", r.Hits)
	}
}

func packCols(counts [NumCols]uint32) uint32 {
	var tf uint32
	for c, n := range counts {
		tf |= n << (c * tfBits)
	}
	return tf
}
