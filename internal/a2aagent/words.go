package a2aagent

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/query"
)

// A request in words is read as search text plus filters. The filters are
// the phrases a person uses for what the JSON API names as filters: the
// ones every door understands (media types, bindings, protocol versions,
// security schemes) come from query.Suggest, which the search pages offer
// as suggestions and this agent, holding a conversation, applies; the
// ones only a conversation uses ("only signed ones", "healthy ones") are
// below. Each phrase is removed from the text once it became a filter, so
// that "over gRPC" does not also demand the word "grpc" in a description.
type phrase struct {
	re     *regexp.Regexp
	field  string
	values []string
}

func ph(pattern, field string, values ...string) phrase {
	return phrase{re: regexp.MustCompile(`(?i)\b(?:` + pattern + `)\b`), field: field, values: values}
}

var phrases = []phrase{
	ph(`(?:only |just )?(?:the )?(?:signed|verified)(?: ones| cards| agents)?|with (?:a )?(?:valid |verified )?signatures?`,
		catalog.FieldSignature, catalog.SignatureVerified),
	ph(`(?:that are |which are )?(?:healthy|up and running|online)`, catalog.FieldHealth, catalog.HealthUp),
	ph(`(?:that |which )?(?:work|works|working)(?: ones)?`, catalog.FieldWorks, catalog.WorksAll),
}

// filler is what a request says around its subject: "find me an agent
// that …", "only those …". It carries no meaning for the search.
var filler = regexp.MustCompile(`(?i)^\s*(?:please\s+)?(?:(?:can|could) you\s+)?(?:find|search(?: for)?|look(?:ing)? for|show(?: me)?|list|i need|i want|get(?: me)?|give me|are there(?: any)?|is there(?: an?)?)?\s*(?:me\s+)?(?:(?:an?|some|any|the)\b)?\s*(?:(?:agents?|ones?)\b)?\s*(?:(?:that|which|who|to|for)\b)?\s*(?:can\b\s*)?`)

// refineStart marks a follow-up that narrows the previous result rather
// than asking something new.
var refineStart = regexp.MustCompile(`(?i)^\s*(?:only|just|and|but|also|of (?:those|these|them)|those|these|which(?: ones| of)?|now|filter|narrow|limit)\b`)

// leftovers are the connecting words a removed phrase can leave behind.
var leftovers = regexp.MustCompile(`(?i)\b(?:and|or|that|which|ones?|those|these|only|just|also|but|of them|of those|now)\b`)

// reading is what a message asks for.
type reading struct {
	text    string
	filters map[string][]string
	// refine: the message narrows the conversation's previous search.
	refine bool
}

func read(msg string) reading {
	r := reading{filters: map[string][]string{}, refine: refineStart.MatchString(msg)}
	text := msg
	add := func(field, value string) {
		if !slices.Contains(r.filters[field], value) {
			r.filters[field] = append(r.filters[field], value)
		}
	}
	for _, p := range phrases {
		if p.re.MatchString(text) {
			for _, v := range p.values {
				add(p.field, v)
			}
			text = p.re.ReplaceAllString(text, " ")
		}
	}
	for _, sg := range query.Suggest(text, nil) {
		add(sg.Field, sg.Value)
		text = strings.Replace(text, sg.Words, " ", 1)
	}
	text = filler.ReplaceAllString(text, "")
	if r.refine {
		text = leftovers.ReplaceAllString(text, " ")
	}
	r.text = trimConnectors(text)
	return r
}

// merge narrows prev by r: filters add up, and the text of a follow-up
// that names a subject of its own is added to the previous one.
func merge(prev, r reading) reading {
	out := reading{text: prev.text, filters: maps.Clone(prev.filters)}
	if out.filters == nil {
		out.filters = map[string][]string{}
	}
	for f, vs := range r.filters {
		for _, v := range vs {
			if !slices.Contains(out.filters[f], v) {
				out.filters[f] = append(out.filters[f], v)
			}
		}
	}
	if r.text != "" {
		out.text = strings.TrimSpace(out.text + " " + r.text)
	}
	return out
}

// connectors are words that mean nothing at either end of what is left.
var connectors = []string{"and", "or", "that", "which", "with", "but", "who", "over", "via", "using"}

func trimConnectors(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == ',' || r == ';' })
	for len(words) > 0 && slices.Contains(connectors, strings.ToLower(words[len(words)-1])) {
		words = words[:len(words)-1]
	}
	for len(words) > 0 && slices.Contains(connectors, strings.ToLower(words[0])) {
		words = words[1:]
	}
	return strings.Trim(strings.Join(words, " "), ".:!? ")
}
