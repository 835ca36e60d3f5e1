package catalog

import (
	"strings"

	"github.com/a2aregistry/registry/internal/card"
)

// facetsOf derives the facets of a card on its own, the oracle the
// summary's stored facets are held to (records_test.go).
// facetsOf lists the filterable (field, value) pairs of a card. Values are
// stored in display form; matching is case-insensitive (see termKey).
func facetsOf(c *card.Card, signature, health, works string) []facetRecord {
	set := make(map[[2]string]struct{})
	var out []facetRecord
	add := func(field, value string) {
		value = strings.TrimSpace(value)
		if value == "" {
			return
		}
		k := [2]string{field, strings.ToLower(value)}
		if _, ok := set[k]; ok {
			return
		}
		set[k] = struct{}{}
		out = append(out, facetRecord{Field: field, Value: value})
	}
	for _, sk := range c.Skills {
		add(FieldSkill, sk.ID)
		add(fieldSkillName, sk.Name)
		for _, t := range sk.Tags {
			add(FieldTag, normalizeTag(t))
		}
		for _, m := range sk.InputModes {
			add(FieldInputMode, card.NormalizeMode(m))
		}
		for _, m := range sk.OutputModes {
			add(FieldOutputMode, card.NormalizeMode(m))
		}
	}
	if len(c.Skills) == 0 {
		for _, m := range c.DefaultInputModes {
			add(FieldInputMode, card.NormalizeMode(m))
		}
		for _, m := range c.DefaultOutputModes {
			add(FieldOutputMode, card.NormalizeMode(m))
		}
	}
	for _, it := range c.Interfaces {
		add(FieldBinding, canonicalBinding(it.Binding))
	}
	for _, v := range c.ProtocolVersions {
		add(FieldProtocolVersion, v)
	}
	types := c.SecurityTypes()
	for _, t := range types {
		add(FieldSecurityScheme, t)
	}
	if len(types) == 0 {
		add(FieldSecurityScheme, schemeNone)
	}
	add(FieldProvider, providerOf(c))
	add(FieldSignature, signature)
	add(FieldPublisherVerified, publisherVerifiedFalse)
	add(FieldHealth, health)
	add(FieldWorks, works)
	return out
}
