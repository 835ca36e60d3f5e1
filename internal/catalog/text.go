package catalog

import (
	"strings"

	"github.com/a2aregistry/registry/internal/search"
)

// searchText is what full-text search sees of an agent, by column.
type searchText = search.Text

// skillText is the searchable part of one skill.
type skillText struct {
	id, name, description string
	tags, examples        []string
}

// textOfParts builds the searchable text. Upserts and index rebuilds from
// the database both go through it, so they index the same words.
func textOfParts(name, description, provider string, skills []skillText) searchText {
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
