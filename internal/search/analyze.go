package search

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Text analysis: documents and queries go through the same steps, so a
// query word meets the document words it should.
//
//   - Unicode folding: compatibility decomposition (NFKD: fullwidth
//     "ＰＤＦ" is "PDF"), diacritics dropped from Latin letters ("café" is
//     "cafe"), full case folding ("Straße" is "strasse"; Unicode §3.13).
//   - Words are runs of letters, digits and marks. Scripts written without
//     spaces between words (Han, kana, Hangul, Thai, Lao, Khmer, Myanmar)
//     are cut into overlapping pairs of characters, as Lucene's
//     CJKBigramFilter does: "漢字を勉強" gives "漢字", "字を", "を勉",
//     "勉強", and a query in those scripts matches the pairs it shares.
//   - Words written in camel case are indexed whole and in their parts
//     ("StayFinder": "stayfinder", "stay", "finder"; camelParts).
//   - Stop words (the Snowball English list) are indexed as they are, not
//     stemmed, and dropped from queries that have other words (Tokens):
//     a skill named "S" or a band named "The Who" can still be found.
//   - English words are stemmed with the Snowball English (Porter2)
//     stemmer, so "bookings" meets "booking" and "book".
//   - British -ise spellings are taken to their -ize form before
//     stemming (spellingVariants), since Porter2 stems "summarise" and
//     "summarize" apart.

// unspaced reports whether r belongs to a script written without spaces
// between words.
func unspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}

var folder = sync.Pool{New: func() any { c := cases.Fold(); return &c }}

// fold lowercases text and drops Latin diacritics; non-ASCII text only
// (tokenizeASCII lowercases the rest).
func fold(text string) string {
	text = norm.NFKD.String(text)
	var b strings.Builder
	b.Grow(len(text))
	latin := false
	for _, r := range text {
		if unicode.Is(unicode.Mn, r) && latin {
			continue // a diacritic on a Latin letter
		}
		latin = r < 0x250 || unicode.Is(unicode.Latin, r)
		b.WriteRune(r)
	}
	c := folder.Get().(*cases.Caser)
	defer folder.Put(c)
	// NFC puts back the marks kept (Japanese voicing marks, Thai vowels).
	return norm.NFC.String(c.String(b.String()))
}

// tokenize splits text into terms: folded, stemmed words and pairs of
// characters of unspaced scripts; the same function analyzes queries
// and documents.
func tokenize(text string) []string {
	words, ok := tokenizeASCII(text)
	if !ok {
		words = tokenizeUnicode(fold(text))
	}
	out := words[:0]
	for _, w := range words {
		if a, _ := analyzeWord(w); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// camelParts returns the parts of the words of text written in camel
// case, lowercased: "StayFinder" gives "stay", "finder", "PDFReader"
// "pdf", "reader" (and "PDFs" nothing). Product names glue words
// together, and someone looking for a place to stay writes them apart;
// the whole word is indexed too (tokenize). ASCII words only.
func camelParts(text string) []string {
	var out []string
	isLower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	isUpper := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	inWord := func(c byte) bool { return isLower(c) || isUpper(c) || '0' <= c && c <= '9' }
	for i := 0; i < len(text); {
		if !inWord(text[i]) {
			i++
			continue
		}
		start := i
		for i < len(text) && inWord(text[i]) {
			i++
		}
		w, from := text[start:i], 0
		for j := 1; j < len(w); j++ {
			// A capital after a lowercase letter begins a part, and so does
			// the last capital of a run followed by two lowercase letters
			// ("PDFReader", not "PDFs").
			if isUpper(w[j]) && (isLower(w[j-1]) || isUpper(w[j-1]) && j+2 < len(w) && isLower(w[j+1]) && isLower(w[j+2])) {
				out = append(out, strings.ToLower(w[from:j]))
				from = j
			}
		}
		if from > 0 {
			out = append(out, strings.ToLower(w[from:]))
		}
	}
	return out
}

// rawWords is tokenize without stop word removal and stemming: the words
// as written, folded, for query analysis.
func rawWords(text string) []string {
	words, ok := tokenizeASCII(text)
	if !ok {
		words = tokenizeUnicode(fold(text))
	}
	return words
}

// tokenizeUnicode splits folded text into words and character pairs.
func tokenizeUnicode(text string) []string {
	words := make([]string, 0, len(text)/6+1)
	// run holds the byte ranges of consecutive characters of an unspaced
	// script, each with the marks that follow it.
	var run [][2]int
	flush := func() {
		if len(run) == 1 {
			words = append(words, text[run[0][0]:run[0][1]])
		}
		for i := 0; i+1 < len(run); i++ {
			words = append(words, text[run[i][0]:run[i+1][1]])
		}
		run = run[:0]
	}
	start := -1 // where the spaced word being read began
	endWord := func(i int) {
		if start >= 0 {
			words = append(words, text[start:i])
			start = -1
		}
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case len(run) > 0 && unicode.Is(unicode.M, r):
			run[len(run)-1][1] = i + size
		case unspaced(r):
			endWord(i)
			run = append(run, [2]int{i, i + size})
		case wordRune(r):
			flush()
			if start < 0 {
				start = i
			}
		default:
			flush()
			endWord(i)
		}
		i += size
	}
	flush()
	endWord(len(text))
	return words
}

// analyzeWord reduces one folded word to the term indexed, "" for an
// overlong word, and tells whether it is a stop word.
func analyzeWord(w string) (string, bool) {
	if len(w) > MaxTokenLen {
		return "", false
	}
	if !isASCIIWord(w) {
		return w, false
	}
	if english.IsStopWord(w) {
		return w, true
	}
	return stem(w), false
}

func isASCIIWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// tokenizeASCII splits ASCII text as tokenize's general path does, in one
// pass over bytes instead of a function call per rune: most card text is
// ASCII, and text analysis is a large share of storing a new version and
// of building the index. It reports false, having done nothing, when text
// holds any other byte or a control character.
func tokenizeASCII(text string) ([]string, bool) {
	upper := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= 0x80 {
			return nil, false
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if upper {
		text = strings.ToLower(text)
	}
	words := make([]string, 0, len(text)/6+1)
	for i := 0; i < len(text); {
		for i < len(text) && !asciiWordByte[text[i]] {
			i++
		}
		start := i
		for i < len(text) && asciiWordByte[text[i]] {
			i++
		}
		if i > start {
			words = append(words, text[start:i])
		}
	}
	return words, true
}

// asciiWordByte tells the bytes of words in lowercase ASCII text: what
// unicode.IsLetter and unicode.IsDigit accept below 0x80.
var asciiWordByte = func() (t [256]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
	}
	return t
}()

// stems caches the stemmer's answers: a catalog repeats a vocabulary of
// some tens of thousands of words across all its cards, and Porter2 costs
// a microsecond and allocations per word. Bounded, so that text made of
// ever new words (an attack, random tokens) cannot grow it without end.
var stems struct {
	sync.RWMutex
	m map[string]string
}

const maxCachedStems = 1 << 17

func stem(w string) string {
	stems.RLock()
	s, ok := stems.m[w]
	stems.RUnlock()
	if ok {
		return s
	}
	s = stemWord(w)
	stems.Lock()
	if stems.m == nil {
		stems.m = make(map[string]string, 1024)
	}
	if len(stems.m) < maxCachedStems {
		stems.m[strings.Clone(w)] = s
	}
	stems.Unlock()
	return s
}

// stemWord stems one lowercase ASCII word. Words with digits ("mp4",
// "v2", "gpt4o") are names, not English, and stay as they are.
func stemWord(w string) string {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	if v, ok := spellingVariants[w]; ok {
		w = v
	}
	return english.Stem(w, true)
}

// spellingVariants maps British -ise (and -yse, -our) spellings common in
// cards to the -ize forms, with their inflections: Porter2 leaves
// "summaris" and "summar" apart.
var spellingVariants = func() map[string]string {
	m := map[string]string{}
	for _, base := range []string{"summar", "organ", "optim", "recogn", "local", "priorit", "personal", "custom",
		"visual", "categor", "author", "digit", "synthes", "standard", "normal", "anonym", "tokan", "serial",
		"initial", "final", "util", "special", "general", "central", "minim", "maxim", "real", "familiar",
		"memor", "monet", "modern", "emphas", "critic", "apolog", "character", "capital", "vectoris", "sanit",
		"stabil", "random", "parallel", "internal", "globalis", "industrial", "rational", "legal"} {
		for _, suf := range [][2]string{{"ise", "ize"}, {"ised", "ized"}, {"ises", "izes"}, {"ising", "izing"},
			{"isation", "ization"}, {"isations", "izations"}, {"iser", "izer"}, {"isers", "izers"}} {
			m[base+suf[0]] = base + suf[1]
		}
	}
	for _, p := range [][2]string{{"analyse", "analyze"}, {"analysed", "analyzed"}, {"analyses", "analyzes"},
		{"analysing", "analyzing"}, {"colour", "color"}, {"colours", "colors"}, {"behaviour", "behavior"},
		{"favourite", "favorite"}, {"catalogue", "catalog"}, {"catalogues", "catalogs"}, {"licence", "license"},
		{"cancelled", "canceled"}, {"cancelling", "canceling"}, {"travelling", "traveling"}, {"travellers", "travelers"},
		{"traveller", "traveler"}, {"modelling", "modeling"}, {"labelling", "labeling"}, {"centre", "center"},
		{"programme", "program"}, {"defence", "defense"}, {"enquiry", "inquiry"}, {"enquiries", "inquiries"}} {
		m[p[0]] = p[1]
	}
	return m
}()
