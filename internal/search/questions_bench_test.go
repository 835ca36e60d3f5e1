package search

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/a2aregistry/registry/internal/synth"
)

// synthIndex builds an index of n synthetic agents (internal/synth), their
// text split into columns as the catalog does (catalog/text.go), once per
// size for all benchmarks.
var synthIndex = sync.OnceValues(func() (*Index, int) {
	n := 100_000
	if s := os.Getenv("REGISTRY_SEARCH_BENCH_AGENTS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	g := synth.New(1)
	docs := make([]Doc, n)
	for i := range docs {
		var c struct {
			Name, Description string
			Provider          struct{ Organization string }
			Skills            []struct {
				ID, Name, Description string
				Tags, Examples        []string
			}
		}
		if err := json.Unmarshal(g.Card(i), &c); err != nil {
			panic(err)
		}
		var tags, names, desc, examples strings.Builder
		desc.WriteString(c.Description)
		for _, sk := range c.Skills {
			tags.WriteString(strings.Join(sk.Tags, " ") + " ")
			names.WriteString(sk.Name + " " + sk.ID + " ")
			desc.WriteString("\n" + sk.Description)
			examples.WriteString(strings.Join(sk.Examples, "\n") + "\n")
		}
		docs[i] = Doc{ID: uint32(i + 1), Seq: 1, SortKey: strings.ToLower(c.Name),
			Facets: []Facet{{"provider", c.Provider.Organization}},
			Text:   Text{ColName: c.Name, ColTags: tags.String(), ColSkills: names.String(), ColDescription: desc.String(), ColProvider: c.Provider.Organization, ColExamples: examples.String()}}
	}
	x := newTestIndex()
	x.Apply(docs)
	x.MarkReady()
	return x, n
})

// BenchmarkQuestions measures questions of 3 to 10 words (synth's
// natural-language search class) on 100,000 synthetic agents
// (REGISTRY_SEARCH_BENCH_AGENTS for another size), a page of 20 as the
// console asks: "search" is the whole Search (matching, facets, ranking),
// "rank-pruned" and "rank-exhaustive" the ranking alone, with MaxScore
// pruning and scoring every match. Metrics: matches, documents scored
// and posting lists looked up per question, by each ranking, and the
// documents whose word positions were read (phrase proximity).
func BenchmarkQuestions(b *testing.B) {
	x, n := synthIndex()
	var questions []string
	for _, c := range synth.New(1).Vocabulary().SearchClasses() {
		if strings.HasPrefix(c.Name, "natural language") {
			for _, s := range c.Searches {
				questions = append(questions, s.Get("q"))
			}
		}
	}
	if len(questions) == 0 {
		b.Fatal("no natural-language questions in synth")
	}
	b.Logf("%d agents, %d questions", n, len(questions))
	const k = 21 // a page of 20 and one to tell whether there is more
	b.Run("search", func(b *testing.B) {
		cpu := cpuTime()
		for i := 0; b.Loop(); i++ {
			if _, err := x.Search(Query{Text: questions[i%len(questions)], Limit: k, FacetLimit: 10}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	})
	type prepared struct {
		qws []queryWord
		ms  []match
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	ps := make([]prepared, len(questions))
	for i, q := range questions {
		qws := x.expandQuery(Tokens(q))
		ps[i] = prepared{qws, x.textMatch(qws, nil)}
	}
	for _, prune := range []bool{true, false} {
		name := "rank-pruned"
		if !prune {
			name = "rank-exhaustive"
		}
		b.Run(name, func(b *testing.B) {
			var st rankStats
			matches := 0
			for i := 0; b.Loop(); i++ {
				p := ps[i%len(ps)]
				_, s := x.rank(p.qws, p.ms, nil, 0, k, nil, prune)
				st.docs += s.docs
				st.postings += s.postings
				st.phrases += s.phrases
				matches += len(p.ms)
			}
			per := func(v int) float64 { return float64(v) / float64(b.N) }
			b.ReportMetric(per(matches), "matches/op")
			b.ReportMetric(per(st.docs), "scored/op")
			b.ReportMetric(per(st.postings), "postings/op")
			b.ReportMetric(per(st.phrases), "phrases/op")
		})
	}
}
