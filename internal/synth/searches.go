package synth

import "net/url"

// SearchClass is one class of searches the benchmarks measure, each search
// given as the query parameters of GET /api/v1/agents (q, limit and
// filter fields).
type SearchClass struct {
	Name     string
	Searches []url.Values
}

// SearchClasses are the searches of the catalog, mixed and console
// benchmarks, drawn from the vocabulary: words a user would type (on
// 0.1–5% of agents), the worst case of words on over a tenth of all
// cards, rare words, popular tags and bindings, a word with two facets,
// media-type wildcards, browsing with no filter, and questions of 3 to 10
// words as people type them.
func (v Vocab) SearchClasses() []SearchClass {
	params := func(kv ...string) url.Values {
		q := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			q.Add(kv[i], kv[i+1])
		}
		return q
	}
	var words, common []Term
	for _, w := range v.CommonWords {
		switch {
		case w.Share >= 0.001 && w.Share <= 0.05 && len(words) < 12:
			words = append(words, w)
		case w.Share > 0.10 && len(common) < 6:
			common = append(common, w)
		}
	}
	tags := v.PopularTags(12)
	var text, frequent, rare, facet, combo, modes []url.Values
	for _, w := range words {
		text = append(text, params("q", w.Value))
	}
	for _, w := range common {
		frequent = append(frequent, params("q", w.Value))
	}
	for _, w := range v.RareWords {
		rare = append(rare, params("q", w.Value))
	}
	for i, t := range tags {
		facet = append(facet, params("tag", t.Value), params("binding", v.Bindings[i%len(v.Bindings)].Value))
		combo = append(combo, params("q", words[i%len(words)].Value, "tag", tags[(i+1)%len(tags)].Value, "binding", "JSONRPC"))
	}
	for _, fam := range v.ModeFamilies {
		modes = append(modes, params("input_mode", fam.Value), params("output_mode", fam.Value))
	}
	var questions []url.Values
	for _, q := range naturalQuestions {
		questions = append(questions, params("q", q))
	}
	return []SearchClass{
		{"text-only", text},
		{"text-only (>10% hit)", frequent},
		{"text-only (rare)", rare},
		{"facet-only", facet},
		{"text + 2 facets", combo},
		{"mode wildcard", modes},
		{"browse (no filter)", []url.Values{{}, params("limit", "100")}},
		{"natural language (3-10 words)", questions},
	}
}

// naturalQuestions are questions of 3 to 10 words in users' words about
// the synthetic catalog's domains: most of their words are common ones
// (find, agent, data, report), the case that ranked "should" matching
// must keep fast.
var naturalQuestions = []string{
	"find me an agent that books hotels near the office",
	"summarise a legal contract in plain english",
	"which agent can extract totals from a pdf invoice",
	"translate my word documents into german and french",
	"help me triage customer support tickets by urgency",
	"write unit tests for my python code",
	"track a parcel and tell me when it arrives",
	"scan receipts from photos into expense entries",
	"find research papers about protein folding and summarize them",
	"schedule a meeting with the whole team next week",
	"check my kubernetes cluster for failing pods",
	"is this email a phishing attempt",
	"forecast next quarter revenue from historical sales data",
	"generate product descriptions for my online store",
	"transcribe a podcast recording with speaker labels",
	"an agent to answer questions about our hr policy",
}
