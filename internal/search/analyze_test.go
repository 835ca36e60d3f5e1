package search

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"stems english", "Bookings booked invoices", []string{"book", "book", "invoic"}},
		{"british and american spellings meet", "summarise summarize summarised", []string{"summar", "summar", "summar"}},
		{"keeps stop words in documents", "The Who", []string{"the", "who"}},
		{"words with digits stay whole", "mp4 v2 gpt4o", []string{"mp4", "v2", "gpt4o"}},
		{"folds diacritics", "Café Résumé naïve", []string{"cafe", "resum", "naiv"}},
		{"folds full width and case", "ＰＤＦ Straße", []string{"pdf", "strass"}},
		{"cuts japanese into pairs", "漢字を勉強", []string{"漢字", "字を", "を勉", "勉強"}},
		{"one character alone", "字", []string{"字"}},
		{"mixed scripts split", "kanji漢字drill", []string{"kanji", "漢字", "drill"}},
		{"thai keeps its marks", "แปล", []string{"แป", "ปล"}},
		{"control characters separate", "pdf\x00to\x1bword\tnow", []string{"pdf", "to", "word", "now"}},
		{"punctuation only", "!!! ??? ...", nil},
		{"invalid utf-8", "in\xffvoice", []string{"in", "voic"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tokenize(tc.text); !slices.Equal(got, tc.want) {
				t.Errorf("tokenize(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"drops how people ask", "find me an agent that books train tickets", []string{"book", "train", "ticket"}},
		{"drops repeats", "invoice invoices INVOICE", []string{"invoic"}},
		{"keeps stop words when nothing else is left", "the who", []string{"the", "who"}},
		{"keeps noise words when nothing else is left", "find an agent", []string{"find", "an", "agent"}},
		{"empty", "   ", []string{}},
		{"at most MaxTokens", strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma ", 3),
			[]string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi"}},
		{"drops overlong words", strings.Repeat("x", MaxTokenLen+1) + " pdf", []string{"pdf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Tokens(tc.text); !slices.Equal(got, tc.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

// TestSearchBadInput: whatever the text, a search answers (possibly with
// nothing) and never panics.
func TestSearchBadInput(t *testing.T) {
	x := newTestIndex()
	var d Doc
	d.ID, d.Seq = 1, 1
	d.Text[ColName] = "日本語の翻訳 Thai แปลภาษา invoice reader"
	x.Apply([]Doc{d})
	x.MarkReady()
	r := rand.New(rand.NewPCG(5, 5))
	long := make([]byte, 10_000)
	for i := range long {
		long[i] = byte(r.IntN(256))
	}
	for _, tc := range []struct {
		text string
		hits int
	}{
		{"", 1},
		{string(long), 0},
		{strings.Repeat("invoice ", 1250), 1},
		{"\x00\x01\x02\x7f", 1}, // no words: every document, as with no text
		{"翻訳", 1},
		{"แปลภาษา", 1},
		{"invoce", 1}, // one letter missing
	} {
		res, err := x.Search(Query{Text: tc.text, Limit: 10})
		if err != nil {
			t.Fatalf("Search(%.20q): %v", tc.text, err)
		}
		if len(res.Hits) < tc.hits {
			t.Errorf("Search(%.20q): %d hits, want at least %d", tc.text, len(res.Hits), tc.hits)
		}
	}
}

// FuzzAnalyze: analysis never panics, never yields empty or overlong
// words, and the ASCII fast path splits as the general one does.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"", "Bookings", "漢字を勉強", "แปลภาษา", "Ｐdf\x00\xff", "e\u0301lan", "ÅNGSTRÖM ß"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range tokenize(s) {
			if w == "" || len(w) > MaxTokenLen && isASCIIWord(w) {
				t.Fatalf("tokenize(%q) gave %q", s, w)
			}
		}
		if ascii, ok := tokenizeASCII(s); ok {
			if general := tokenizeUnicode(fold(s)); !slices.Equal(ascii, general) && len(ascii)+len(general) > 0 {
				t.Fatalf("tokenizeASCII(%q) = %q, the general path %q", s, ascii, general)
			}
		}
		toks := Tokens(s)
		if len(toks) > MaxTokens {
			t.Fatalf("Tokens(%q) gave %d tokens", s, len(toks))
		}
		for _, w := range toks {
			if !utf8.ValidString(w) && utf8.ValidString(s) {
				t.Fatalf("Tokens(%q) gave invalid %q", s, w)
			}
		}
	})
}

func TestTypos(t *testing.T) {
	x := newTestIndex()
	for i, w := range []string{"invoice", "receipt", "translation", "cat"} {
		var d Doc
		d.ID, d.Seq = uint32(i+1), 1
		d.Text[ColDescription] = w
		x.Apply([]Doc{d})
	}
	x.MarkReady()
	for _, tc := range []struct {
		q    string
		want []uint32
	}{
		{"invoce", []uint32{1}},      // deletion
		{"reciept", []uint32{2}},     // swap
		{"transaltion", []uint32{3}}, // stemmed, then a swap
		{"invoicexx", nil},           // two edits
		{"cot", nil},                 // too short to correct
		{"invoice receipt", []uint32{1, 2}},
	} {
		res, err := x.Search(Query{Text: tc.q, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []uint32
		for _, h := range res.Hits {
			got = append(got, h.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q found %v, want %v", tc.q, got, tc.want)
		}
	}
}

// TestRankingTiers: a document matching every word ranks before one
// matching fewer, however much heavier the latter's matches; a related
// word counts as a match but weighs less than the word.
func TestRankingTiers(t *testing.T) {
	x := newTestIndex()
	docs := []struct{ name, desc string }{
		{"Train Train Train", "train"},          // 1: one word, heavily
		{"Rail tickets", "sells train tickets"}, // 2: both words
		{"Booking desk", "train booking"},       // 3: train, and booking for ticket
		{"Weather", "rain"},                     // 4: nothing
	}
	for i, d := range docs {
		var doc Doc
		doc.ID, doc.Seq = uint32(i+1), 1
		doc.Text[ColName], doc.Text[ColDescription] = d.name, d.desc
		x.Apply([]Doc{doc})
	}
	x.MarkReady()
	res, err := x.Search(Query{Text: "train tickets", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []uint32
	for _, h := range res.Hits {
		got = append(got, h.ID)
	}
	if want := []uint32{2, 3, 1}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v (hits %+v)", got, want, res.Hits)
	}
	if res.Hits[2].Partial != true || res.Hits[1].Partial != false {
		t.Errorf("partial flags %+v", res.Hits)
	}
}

func TestCamelParts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"StayFinder", []string{"stay", "finder"}},
		{"the PDFReader app", []string{"pdf", "reader"}},
		{"PDFs and JSON", nil},
		{"iPhone, eBay", []string{"i", "phone", "e", "bay"}},
		{"RailBook2Go", []string{"rail", "book2go"}},
		{"plain words only", nil},
		{"CaféFinder", nil},
	} {
		if got := camelParts(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("camelParts(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Tokens("StayFinder"); !slices.Equal(got, []string{"stayfind", "stay", "finder"}) {
		t.Errorf("Tokens(StayFinder) = %q", got)
	}
}
