package search

import (
	"fmt"
	"slices"
	"testing"
)

func skillPart(id string, modes ...string) []Facet {
	p := []Facet{{"skill", id}, {"skill_name", id + " skill"}}
	for _, m := range modes {
		p = append(p, Facet{"mode", m})
	}
	return p
}

func skillFilter(id string) Filter {
	return Filter{Terms: []Facet{{"skill", id}, {"skill_name", id}}}
}

func modeFilter(pattern string) Filter { return Filter{Field: "mode", Match: matchMode(pattern)} }

// TestPartFilters: filters on a skill and on media types must be met by
// one skill, and facet counts follow the skills that met them.
func TestPartFilters(t *testing.T) {
	docs := []Doc{
		// Skill ocr takes a PDF; the skill asked for (translate) takes text.
		{ID: 1, Seq: 1, SortKey: "a", Parts: [][]Facet{skillPart("ocr", "application/pdf"), skillPart("translate", "text/plain")}},
		// One skill does both.
		{ID: 2, Seq: 1, SortKey: "b", Parts: [][]Facet{skillPart("translate", "application/pdf", "text/plain"), skillPart("chat", "text/html")}},
		// One skill only: a document of one part.
		{ID: 3, Seq: 1, SortKey: "c", Parts: [][]Facet{skillPart("translate", "application/pdf")}},
		// A media type given for the whole document belongs to every skill.
		{ID: 4, Seq: 1, SortKey: "d", Facets: []Facet{{"mode", "application/pdf"}}, Parts: [][]Facet{skillPart("ocr"), skillPart("translate", "text/plain")}},
		// No skills: the document is one part.
		{ID: 5, Seq: 1, SortKey: "e", Facets: []Facet{{"mode", "application/pdf"}, {"mode", "text/plain"}}},
	}
	x := newTestIndex()
	x.Apply(docs)
	x.MarkReady()
	tests := []struct {
		name      string
		filters   []Filter
		wantIDs   []uint32
		wantSkill []FacetCount
		wantMode  []FacetCount
	}{
		{
			name:      "skill and media type meet in one skill",
			filters:   []Filter{skillFilter("translate"), modeFilter("application/pdf")},
			wantIDs:   []uint32{2, 3, 4},
			wantSkill: []FacetCount{{"translate", 3}},
			wantMode:  []FacetCount{{"application/pdf", 3}, {"text/plain", 2}},
		},
		{
			name:      "skill by name",
			filters:   []Filter{skillFilter("translate skill"), modeFilter("text/*")},
			wantIDs:   []uint32{1, 2, 4},
			wantSkill: []FacetCount{{"translate", 3}},
			wantMode:  []FacetCount{{"text/plain", 3}, {"application/pdf", 2}},
		},
		{
			name:      "two media types meet in one skill",
			filters:   []Filter{modeFilter("application/pdf"), modeFilter("text/plain")},
			wantIDs:   []uint32{2, 4, 5},
			wantSkill: []FacetCount{{"translate", 2}},
			wantMode:  []FacetCount{{"application/pdf", 3}, {"text/plain", 3}},
		},
		{
			name:      "one media type: facets count the skills that take it",
			filters:   []Filter{modeFilter("text/html")},
			wantIDs:   []uint32{2},
			wantSkill: []FacetCount{{"chat", 1}},
			wantMode:  []FacetCount{{"text/html", 1}},
		},
		{
			name:      "without part filters every skill counts",
			filters:   nil,
			wantIDs:   []uint32{1, 2, 3, 4, 5},
			wantSkill: []FacetCount{{"translate", 4}, {"ocr", 2}, {"chat", 1}},
			wantMode:  []FacetCount{{"application/pdf", 5}, {"text/plain", 4}, {"text/html", 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := x.Search(Query{Filters: tc.filters, Limit: 10, FacetLimit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var ids []uint32
			for _, h := range res.Hits {
				ids = append(ids, h.ID)
			}
			if !slices.Equal(ids, tc.wantIDs) || res.Total != len(tc.wantIDs) {
				t.Errorf("ids = %v (total %d), want %v", ids, res.Total, tc.wantIDs)
			}
			if !slices.Equal(res.Facets["skill"], tc.wantSkill) {
				t.Errorf("skill facet = %v, want %v", res.Facets["skill"], tc.wantSkill)
			}
			if !slices.Equal(res.Facets["mode"], tc.wantMode) {
				t.Errorf("mode facet = %v, want %v", res.Facets["mode"], tc.wantMode)
			}
		})
	}
}

// TestManyParts: a document of more than 64 parts keeps masks of several
// words; an update that moves the media type to another skill moves the
// match.
func TestManyParts(t *testing.T) {
	doc := func(seq int64, pdfAt int) Doc {
		d := Doc{ID: 1, Seq: seq, SortKey: "a"}
		for i := range 130 {
			p := skillPart(fmt.Sprintf("s%d", i), "text/plain")
			if i == pdfAt {
				p = append(p, Facet{"mode", "application/pdf"})
			}
			d.Parts = append(d.Parts, p)
		}
		return d
	}
	x := newTestIndex()
	x.Apply([]Doc{doc(1, 100)})
	x.MarkReady()
	total := func(sk string) int {
		t.Helper()
		res, err := x.Search(Query{Filters: []Filter{skillFilter(sk), modeFilter("application/pdf")}, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res.Total
	}
	if total("s100") != 1 || total("s99") != 0 || total("s101") != 0 {
		t.Fatalf("pdf on skill 100: s100 %d, s99 %d, s101 %d matches; want 1, 0, 0", total("s100"), total("s99"), total("s101"))
	}
	x.Apply([]Doc{doc(2, 3)})
	if total("s3") != 1 || total("s100") != 0 {
		t.Fatalf("pdf moved to skill 3: s3 %d, s100 %d matches; want 1, 0", total("s3"), total("s100"))
	}
	if x.SetFields(1, 2, 3, map[string][]string{"mode": {"image/png"}}) {
		t.Fatal("SetFields changed a part field in place; want it refused (the whole document is applied)")
	}
}

// TestHybridPartFilters: documents the vector ranking brings are held to
// the part filters as the text matches are.
func TestHybridPartFilters(t *testing.T) {
	docs := []Doc{
		{ID: 1, Seq: 1, SortKey: "a", Text: Text{ColName: "Ticket printer"}, Parts: [][]Facet{skillPart("translate", "application/pdf"), skillPart("ocr")}},
		// Found by its vector only; its PDF skill is not the one asked for.
		{ID: 2, Seq: 1, SortKey: "b", Text: Text{ColName: "Rail booking", ColDescription: "reserve seats on trains"},
			Parts: [][]Facet{skillPart("ocr", "application/pdf"), skillPart("translate", "text/plain")}},
		// Found by its vector only, and a match.
		{ID: 3, Seq: 1, SortKey: "c", Text: Text{ColName: "Rail booking too", ColDescription: "reserve seats on trains"},
			Parts: [][]Facet{skillPart("translate", "application/pdf"), skillPart("chat")}},
	}
	x := newTestIndex()
	x.Apply(docs)
	x.MarkReady()
	var vs []Vector
	for _, d := range docs {
		vs = append(vs, Vector{ID: d.ID, Values: hashVec(EmbedText(d.Text), 64)})
	}
	x.SetVectors("hash", 64, vs)
	res, err := x.Search(Query{Text: "ticket", Vector: hashVec("rail booking reserve seats on trains", 64), VectorSpace: "hash",
		Limit: 10, FacetLimit: 10, Filters: []Filter{skillFilter("translate"), modeFilter("application/pdf")}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint32
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	slices.Sort(ids)
	if !res.Hybrid || !slices.Equal(ids, []uint32{1, 3}) || res.Total != 2 {
		t.Fatalf("hybrid %v, hits %v (total %d), want 1 (by word) and 3 (by vector)", res.Hybrid, ids, res.Total)
	}
}

// TestPartFilterGroups holds checkParts, which reads only the entries of
// the part fields a filter is on and reads the others only for documents
// some of whose parts fail the filters, to the oracle: filters on media
// types, on a skill and on both; media types given to every part; the
// media types' terms made before every skill's and after; facets counted
// and not.
func TestPartFilterGroups(t *testing.T) {
	modes := []string{"text/plain", "text/csv", "image/png", "application/pdf"}
	var docs []Doc
	for i := range 240 {
		d := Doc{ID: uint32(i + 1), Seq: 1, SortKey: fmt.Sprintf("d%03d", i)}
		if i%7 == 0 {
			d.Facets = append(d.Facets, Facet{"mode", modes[i%len(modes)]}) // every part's
		}
		for p := range 1 + i%5 {
			var ms []string
			for j, m := range modes {
				if (i+p*3+j)%(2+p) == 0 {
					ms = append(ms, m)
				}
			}
			d.Parts = append(d.Parts, skillPart(fmt.Sprintf("s%d", (i*5+p)%37), ms...))
		}
		docs = append(docs, d)
	}
	// A document that brings a media type of its own when the rest of
	// the index is known: its term id is past every other.
	late := Doc{ID: 1000, Seq: 1, SortKey: "z", Parts: [][]Facet{skillPart("s1", "text/zzz"), skillPart("s2", "image/png")}}
	queries := []Query{
		{Filters: []Filter{modeFilter("text/*")}},
		{Filters: []Filter{modeFilter("image/*")}},
		{Filters: []Filter{modeFilter("text/zzz")}},
		{Filters: []Filter{modeFilter("text/*"), modeFilter("image/*")}},
		{Filters: []Filter{skillFilter("s3"), modeFilter("text/*")}},
		{Filters: []Filter{skillFilter("s30"), modeFilter("application/pdf")}},
	}
	for name, order := range map[string]func([]Doc) []Doc{
		"modes first": func(ds []Doc) []Doc { return ds },
		"modes last": func(ds []Doc) []Doc {
			// Every skill first, in parts of their own documents' ids
			// with no media type, then the documents as they are.
			var skills []Doc
			for _, d := range ds {
				sd := Doc{ID: d.ID, Seq: 0, SortKey: d.SortKey}
				for _, p := range d.Parts {
					sd.Parts = append(sd.Parts, p[:2])
				}
				skills = append(skills, sd)
			}
			return append(skills, ds...)
		},
	} {
		t.Run(name, func(t *testing.T) {
			x := newTestIndex()
			o := newOracle()
			for _, d := range order(append(slices.Clone(docs), late)) {
				x.Apply([]Doc{d})
			}
			for _, d := range append(slices.Clone(docs), late) {
				o.set(d)
			}
			x.MarkReady()
			for _, q := range queries {
				for _, limit := range []int{0, 5} {
					q.Limit, q.FacetLimit = 300, limit
					got, err := x.Search(q)
					if err != nil {
						t.Fatal(err)
					}
					if d := diffResults(got, o.search(q)); d != "" {
						t.Errorf("%d filters, facet limit %d: %s", len(q.Filters), limit, d)
					}
				}
			}
		})
	}
}
