package synth

import (
	"cmp"
	"slices"
	"strings"
)

// VocabSample is the number of cards (indices 0..VocabSample-1) Vocabulary
// measures.
const VocabSample = 4000

// Term is one query value and how common it is in the catalog.
type Term struct {
	Value string
	// Agents is how many of the sampled cards contain the value.
	Agents int
	// Share is the fraction of agents expected to contain it: measured on
	// the sample, except for RareWords where it is the design probability
	// (a sample of thousands cannot see them).
	Share float64
}

// Vocab tells a benchmark which query values exist and how common each is,
// so it can build a query mix (text only, facet only, text plus facets,
// mode wildcards) with known selectivity. Every list is sorted by Share,
// most common first.
type Vocab struct {
	Sample int
	// CommonWords are text-search terms: a card contains one when a
	// case-insensitive token of its name, description, or a skill's name,
	// description, tags or examples equals it (tokens are runs of ASCII
	// letters and digits, so tag "e-invoicing" yields "e" and "invoicing").
	CommonWords []Term
	// RareWords each occur in about 10 agents per 100,000.
	RareWords []Term
	// Tags are exact skill tags; a card contains one when any skill has it.
	Tags []Term
	// Modes are exact media types in any skill's effective input or output
	// modes (a skill without its own modes inherits the card defaults).
	Modes []Term
	// ModeFamilies are wildcards such as "image/*" over the same modes; the
	// informal "text" counts as text/*.
	ModeFamilies []Term
	Bindings     []Term
	// SecurityTypes use the Scheme* names; "none" counts cards without
	// security.
	SecurityTypes []Term
	// Shapes use the Shape* names.
	Shapes []Term
}

// PopularTags returns the n most common tags.
func (v Vocab) PopularTags(n int) []Term {
	return v.Tags[:min(n, len(v.Tags))]
}

// Vocabulary measures the generator's first VocabSample cards. The result is
// computed once and shared; callers must not modify its slices.
func (g *Generator) Vocabulary() Vocab {
	g.vocabOnce.Do(func() { g.vocab = g.measure(VocabSample) })
	return g.vocab
}

// counter counts, per value, the cards that contain it at least once.
type counter struct {
	n    map[string]int
	seen map[string]bool
}

func newCounter() *counter {
	return &counter{n: make(map[string]int), seen: make(map[string]bool)}
}

func (c *counter) add(v string) {
	if !c.seen[v] {
		c.seen[v] = true
		c.n[v]++
	}
}

func (c *counter) endCard() { clear(c.seen) }

func (c *counter) terms(sample int) []Term {
	out := make([]Term, 0, len(c.n))
	for v, n := range c.n {
		out = append(out, Term{Value: v, Agents: n, Share: float64(n) / float64(sample)})
	}
	sortTerms(out)
	return out
}

func sortTerms(ts []Term) {
	slices.SortFunc(ts, func(a, b Term) int {
		if c := cmp.Compare(b.Agents, a.Agents); c != 0 {
			return c
		}
		return cmp.Compare(a.Value, b.Value)
	})
}

func (g *Generator) measure(sample int) Vocab {
	watched := make(map[string]bool, len(commonQueryWords)+len(rareWords))
	for _, w := range commonQueryWords {
		watched[w] = true
	}
	for _, w := range rareWords {
		watched[w] = true
	}
	words, tags, modes, families := newCounter(), newCounter(), newCounter(), newCounter()
	bindings, security, shapes := newCounter(), newCounter(), newCounter()
	addText := func(s string) {
		forEachToken(s, func(tok string) {
			if watched[tok] {
				words.add(tok)
			}
		})
	}
	addModes := func(ms []string) {
		for _, m := range ms {
			modes.add(m)
			if fam, _, ok := strings.Cut(m, "/"); ok {
				families.add(fam + "/*")
			} else if m == modeText {
				families.add("text/*")
			}
		}
	}

	for i := range sample {
		a := g.agent(i)
		addText(a.name)
		addText(a.description)
		for _, s := range a.skills {
			addText(s.name)
			addText(s.desc)
			for _, t := range s.tags {
				addText(t)
				tags.add(t)
			}
			for _, e := range s.examples {
				addText(e)
			}
			addModes(s.inputModes(a))
			addModes(s.outputModes(a))
		}
		for _, b := range a.bindings {
			bindings.add(b)
		}
		if len(a.schemes) == 0 {
			security.add("none")
		}
		for _, s := range a.schemes {
			security.add(s.kind)
		}
		shapes.add(a.shape)
		for _, c := range []*counter{words, tags, modes, families, bindings, security, shapes} {
			c.endCard()
		}
	}

	v := Vocab{
		Sample:        sample,
		Tags:          tags.terms(sample),
		Modes:         modes.terms(sample),
		ModeFamilies:  families.terms(sample),
		Bindings:      bindings.terms(sample),
		SecurityTypes: security.terms(sample),
		Shapes:        shapes.terms(sample),
	}
	for _, w := range commonQueryWords {
		n := words.n[w]
		v.CommonWords = append(v.CommonWords, Term{Value: w, Agents: n, Share: float64(n) / float64(sample)})
	}
	sortTerms(v.CommonWords)
	for _, w := range rareWords {
		v.RareWords = append(v.RareWords, Term{Value: w, Agents: words.n[w], Share: rareWordShare})
	}
	return v
}

// inputModes are the skill's effective input modes: its own, or the card
// defaults when it declares none.
func (s *skill) inputModes(a *agent) []string {
	if s.in != nil {
		return s.in
	}
	return a.defaultIn
}

// outputModes are the skill's effective output modes.
func (s *skill) outputModes(a *agent) []string {
	if s.out != nil {
		return s.out
	}
	return a.defaultOut
}

// forEachToken calls fn with each lower-cased run of ASCII letters and
// digits in s.
func forEachToken(s string, fn func(string)) {
	var buf [64]byte
	tok := buf[:0]
	flush := func() {
		if len(tok) > 0 {
			fn(string(tok))
			tok = tok[:0]
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			tok = append(tok, c)
		case c >= 'A' && c <= 'Z':
			tok = append(tok, c+'a'-'A')
		default:
			flush()
		}
	}
	flush()
}
