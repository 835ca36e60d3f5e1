package catalog

import (
	"strings"

	"github.com/a2aregistry/registry/internal/search"
)

// searchText is what full-text search sees of an agent, by column.
type searchText = search.Text

// indexedSkill is what the search index takes of one skill: its text, and
// its id, name and media types for the skill's part of the document
// (skillParts).
type indexedSkill struct {
	id, name, description string
	tags, examples        []string
	// inputModes and outputModes are effective (card.Skill's): a skill
	// without its own has the card's defaults.
	inputModes, outputModes []string
}

// textOfParts builds the searchable text. Upserts and index rebuilds from
// the database both go through it, so they index the same words.
func textOfParts(name, description, provider string, skills []indexedSkill) searchText {
	var tags, names, desc, examples strings.Builder
	desc.WriteString(description)
	for _, sk := range skills {
		for _, t := range sk.tags {
			tags.WriteString(t)
			tags.WriteByte(' ')
		}
		names.WriteString(sk.name)
		names.WriteByte(' ')
		names.WriteString(sk.id)
		names.WriteByte(' ')
		desc.WriteByte('\n')
		desc.WriteString(sk.description)
		for _, e := range sk.examples {
			examples.WriteString(e)
			examples.WriteByte('\n')
		}
	}
	var t searchText
	t[search.ColName] = name
	t[search.ColTags] = tags.String()
	t[search.ColSkills] = names.String()
	t[search.ColDescription] = desc.String()
	t[search.ColProvider] = provider
	t[search.ColExamples] = examples.String()
	return t
}
