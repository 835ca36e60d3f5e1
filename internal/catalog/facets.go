package catalog

import (
	"strings"

	"github.com/a2aregistry/registry/internal/card"
)

// fieldSkillName is a filter-only field: `skill=X` matches a skill id or a
// skill name, but the skill facet lists ids only.
const fieldSkillName = "skill_name"

// schemeNone is the security_scheme value of an agent that asks for no
// security at all (card.Card.SecurityTypes is empty), so security teams can
// filter for open agents.
const schemeNone = "none"

// canonicalBinding spells the spec's bindings the spec's way whatever case a
// card used; extension bindings are kept as written.
func canonicalBinding(b string) string {
	for _, known := range []string{card.BindingJSONRPC, card.BindingGRPC, card.BindingHTTPJSON} {
		if strings.EqualFold(b, known) {
			return known
		}
	}
	return strings.TrimSpace(b)
}

// summaryOf builds the static part of a search hit; signature, health and
// update time are read from their columns at query time.
func summaryOf(c *card.Card) Summary {
	s := Summary{
		Name:             c.Name,
		Description:      truncateRunes(c.Description, 500),
		Version:          c.Version,
		Provider:         providerOf(c),
		ProtocolVersions: nonNil(c.ProtocolVersions),
		Bindings:         []string{},
		SecuritySchemes:  []string{},
		InputModes:       []string{},
		OutputModes:      []string{},
		Skills:           make([]SkillSummary, 0, len(c.Skills)),
	}
	s.Bindings = dedupe(bindingsOf(c), canonicalBinding)
	// card.SchemeUndeclared among them: an agent whose requirement names
	// a scheme the card never declares is not an open one.
	s.SecuritySchemes = append(s.SecuritySchemes, c.SecurityTypes()...)
	s.SecuritySchemes = dedupe(s.SecuritySchemes, strings.TrimSpace)
	var in, out []string
	for _, sk := range c.Skills {
		in = append(in, sk.InputModes...)
		out = append(out, sk.OutputModes...)
		s.Skills = append(s.Skills, SkillSummary{ID: sk.ID, Name: sk.Name, Tags: dedupe(sk.Tags, normalizeTag)})
	}
	if len(c.Skills) == 0 {
		in, out = c.DefaultInputModes, c.DefaultOutputModes
	}
	s.InputModes = dedupe(in, card.NormalizeMode)
	s.OutputModes = dedupe(out, card.NormalizeMode)
	return s
}

func bindingsOf(c *card.Card) []string {
	out := make([]string, 0, len(c.Interfaces))
	for _, it := range c.Interfaces {
		out = append(out, it.Binding)
	}
	return out
}

func sortKeyOf(name string) string {
	return strings.ToLower(strings.TrimSpace(name))
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
