package a2aagent

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// A request in words is read as search text plus filters. The filters are
// the phrases a person uses for what the JSON API names as filters
// ("only signed ones", "over gRPC", "accepts JSON"); every other word is
// left to the search's ranking, which reads natural language itself.
// Each phrase is removed from the text once it became a filter, so that
// "over gRPC" does not also demand the word "grpc" in a description.
type phrase struct {
	re     *regexp.Regexp
	field  string
	values []string
}

func ph(pattern, field string, values ...string) phrase {
	return phrase{re: regexp.MustCompile(`(?i)\b(?:` + pattern + `)\b`), field: field, values: values}
}

// modes are the media types people name in words.
var modes = []struct{ words, mode string }{
	{`json`, "application/json"},
	{`pdfs?`, "application/pdf"},
	{`images?|pictures?|photos?`, "image/*"},
	{`audio|sound|speech`, "audio/*"},
	{`videos?`, "video/*"},
	{`csv`, "text/csv"},
	{`plain text|text`, "text/plain"},
}

var phrases = func() []phrase {
	ps := []phrase{
		ph(`(?:only |just )?(?:the )?(?:signed|verified)(?: ones| cards| agents)?|with (?:a )?(?:valid |verified )?signatures?`,
			catalog.FieldSignature, catalog.SignatureVerified),
		ph(`(?:over|via|using|speaks?|speaking|with) grpc|grpc`, catalog.FieldBinding, card.BindingGRPC),
		ph(`(?:over|via|using|speaks?|speaking|with) (?:json-?rpc)|json-?rpc`, catalog.FieldBinding, card.BindingJSONRPC),
		ph(`(?:over|via|using|speaks?|speaking|with) (?:rest|http\+json)|http\+json`, catalog.FieldBinding, card.BindingHTTPJSON),
		ph(`(?:that are |which are )?(?:healthy|up and running|online)`, catalog.FieldHealth, catalog.HealthUp),
		ph(`(?:that |which )?(?:work|works|working)(?: ones)?`, catalog.FieldWorks, catalog.WorksAll),
	}
	for _, m := range modes {
		ps = append(ps,
			ph(`(?:accepts?|accepting|takes?|taking|reads?|reading|consumes?|input(?:s)?(?: of)?|from) (?:an? )?(?:`+m.words+`)(?: input| files?| documents?)?`,
				catalog.FieldInputMode, m.mode),
			ph(`(?:returns?|returning|gives?(?: back)?|giving(?: back)?|produces?|producing|outputs?|emits?|answers? in|responds? (?:in|with)|to) (?:an? )?(?:`+m.words+`)(?: output| files?)?`,
				catalog.FieldOutputMode, m.mode))
	}
	return ps
}()

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
	for _, p := range phrases {
		if p.re.MatchString(text) {
			for _, v := range p.values {
				if !slices.Contains(r.filters[p.field], v) {
					r.filters[p.field] = append(r.filters[p.field], v)
				}
			}
			text = p.re.ReplaceAllString(text, " ")
		}
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
var connectors = []string{"and", "or", "that", "which", "with", "but", "who"}

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
