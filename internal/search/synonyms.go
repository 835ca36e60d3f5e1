package search

import (
	"cmp"
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// Related words widen a query beyond the words of the cards: "ticket"
// finds a card that says "booking", "convert" one that says "conversion".
// They are used at query time only, so the index stays the cards' own
// words and the table can change without a rebuild, and a match through a
// related word weighs less than a match of the word itself.
//
// Two sources: a table generated from WordNet 3.0 (Princeton
// University; licence in LICENSE.wordnet) by internal/wordnetgen, and
// domainGroups, a short hand-kept list of the words of this domain that a
// general lexicon does not relate (or does not know: "pdf", "cve").

//go:generate go run ./internal/wordnetgen -wordnet /usr/share/wordnet -out related_wordnet.txt

//go:embed related_wordnet.txt
var wordnetTable string

// Weights of a match through a related word, against the word itself.
const (
	domainWeight  = 0.5
	wordnetWeight = 0.35
)

// domainGroups are groups of words that mean the same to someone looking
// for an agent; each word of a group is related to the others.
var domainGroups = []string{
	"ticket booking reservation reserve fare",
	"convert conversion converter transform transformation",
	"summarize summary digest condense gist overview tldr recap",
	"pdf document",
	"invoice bill receipt",
	"scan scanned ocr",
	"cv resume applicant candidate",
	"salary payroll payslip wage paycheck",
	"chart graph plot visualization diagram dashboard",
	"spreadsheet excel csv xlsx",
	"email mail inbox",
	"scam phishing fraud spam",
	"vulnerable vulnerability cve exploit",
	"docker container kubernetes",
	"outage incident downtime",
	"translate translation translator localize localization",
	"subtitle caption",
	"meeting call zoom",
	"appointment schedule",
	"package parcel shipment delivery",
	"weather forecast",
	"currency money dollar euro exchange",
	"recipe cook cooking meal",
	"workout fitness training exercise",
	"doctor clinic physician medical",
	"tax vat",
	"slide presentation powerpoint deck",
	"blog article seo",
	"sentiment feeling opinion",
	"contract agreement",
	"nda confidentiality",
	"paper publication",
	"sql database",
	"helpdesk support",
	"flight airfare airline",
	"hotel lodging accommodation",
	"train rail railway",
	"cafe coffee",
	"transcribe transcription transcript",
	"interpreter interpretation",
}

type relatedWord struct {
	word   string
	weight float64
}

// relatedTable maps an analyzed word to its related analyzed words, the
// heavier relation winning when both sources relate two words. A variable
// so that tests can relate words of their own.
var relatedTable = sync.OnceValue(func() map[string][]relatedWord {
	weights := map[[2]string]float64{}
	relate := func(a, b string, w float64) {
		a, _ = analyzeWord(a)
		b, _ = analyzeWord(b)
		if a == "" || b == "" || a == b {
			return
		}
		for _, k := range [][2]string{{a, b}, {b, a}} {
			weights[k] = max(weights[k], w)
		}
	}
	for _, line := range strings.Split(wordnetTable, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		ws := strings.Fields(line)
		for _, r := range ws[min(1, len(ws)):] {
			relate(ws[0], r, wordnetWeight)
		}
	}
	for _, g := range domainGroups {
		ws := strings.Fields(g)
		for i, a := range ws {
			for _, b := range ws[i+1:] {
				relate(a, b, domainWeight)
			}
		}
	}
	out := make(map[string][]relatedWord, len(weights)/3)
	for k, w := range weights {
		out[k[0]] = append(out[k[0]], relatedWord{k[1], w})
	}
	for _, rs := range out {
		sortRelated(rs)
	}
	return out
})

// sortRelated orders related words by weight, then word, so that a
// query expands the same way every time.
func sortRelated(rs []relatedWord) {
	slices.SortFunc(rs, func(a, b relatedWord) int {
		if a.weight != b.weight {
			return cmp.Compare(b.weight, a.weight)
		}
		return strings.Compare(a.word, b.word)
	})
}

// related returns the words related to an analyzed query word.
func related(word string) []relatedWord { return relatedTable()[word] }
