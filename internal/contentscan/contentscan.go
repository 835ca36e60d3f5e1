// Package contentscan reads the text of an A2A agent card the way a
// security reviewer would: hidden Unicode (bidirectional controls,
// zero-width and tag characters), text that addresses the model reading
// the card (prompt injection and prompt-format imitation), links that lead
// away from the card's origin, and a name or provider made to look like
// another catalogued agent's (UTS #39 confusable skeletons).
//
// Findings are advisory (warning or info): a card is never refused for
// its text. Each says what was found with hidden characters written as
// ⟨U+XXXX⟩, where (a JSON path into the card), and why it matters. The
// codes are stable API, like the verifier's security-audit codes: never
// rename one.
package contentscan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/a2aregistry/registry/internal/card"
)

// Finding codes, in the verification report's audit facet beside the
// security-audit codes.
const (
	// CodeBidiControl: a bidirectional embedding, override or isolate
	// (U+202A–U+202E, U+2066–U+2069) reorders how the text displays, so
	// what a reviewer reads differs from what a model or program reads
	// (Unicode TR #36 §2.1; CVE-2021-42574 "Trojan Source"). Warning.
	CodeBidiControl = "content_bidi_control"
	// CodeZeroWidth: a zero-width character (U+200B–U+200D, U+2060,
	// U+FEFF) outside the places scripts and emoji need one; it splits a
	// word for filters and reviewers while a model reads it whole.
	// Warning.
	CodeZeroWidth = "content_zero_width"
	// CodeTagCharacters: Unicode tag characters (U+E0000–U+E007F) outside
	// an emoji flag sequence: invisible, yet models read them as ASCII
	// ("ASCII smuggling"). Warning.
	CodeTagCharacters = "content_tag_characters"
	// CodePromptInjection: a description or example addresses the model
	// that reads the card ("ignore previous instructions", "you must
	// call …"). Warning.
	CodePromptInjection = "content_prompt_injection"
	// CodePromptImitation: text imitates a chat prompt format (a fake
	// `system:` line, `<|im_start|>`, `[INST]`) to pass as instructions
	// from the orchestrator's own prompt. Warning.
	CodePromptImitation = "content_prompt_imitation"
	// CodeForeignLink: a link in the card's text points to an origin other
	// than the card's own. Info.
	CodeForeignLink = "content_foreign_link"
	// CodeConfusableName: the agent's name is the same as, or confusable
	// with, another catalogued agent's from a different origin. Warning.
	CodeConfusableName = "content_confusable_name"
	// CodeConfusableProvider: the provider is confusable with, but not the
	// same as, another catalogued agent's provider from a different
	// origin. Warning.
	CodeConfusableProvider = "content_confusable_provider"
)

// Codes lists every finding code in a stable order.
var Codes = []string{
	CodeBidiControl, CodeZeroWidth, CodeTagCharacters, CodePromptInjection,
	CodePromptImitation, CodeForeignLink, CodeConfusableName, CodeConfusableProvider,
}

// why explains each code to the person reading a finding.
var why = map[string]string{
	CodeBidiControl: "Bidirectional controls reorder how text is displayed, so a reviewer reads something other " +
		"than what a model or program receives (Unicode TR #36 §2.1, \"Trojan Source\" CVE-2021-42574). " +
		"Arabic and Hebrew text displays correctly without them.",
	CodeZeroWidth: "Zero-width characters are invisible: they split words so filters and reviewers miss them while " +
		"a model reads the text whole. Scripts that need joiners (Arabic, Indic) and emoji sequences are not flagged.",
	CodeTagCharacters: "Tag characters are invisible but models read them as ASCII letters, so they can carry " +
		"instructions no reviewer sees (\"ASCII smuggling\"). Only emoji flag sequences use them legitimately.",
	CodePromptInjection: "Card text is read by the orchestrating model that chooses agents. Text addressed to that " +
		"model, rather than describing the agent, tries to steer it (OWASP LLM01: prompt injection).",
	CodePromptImitation: "Chat-format markers and fake system lines make card text look like part of the " +
		"orchestrator's own prompt, so a model may follow it as instructions (OWASP LLM01).",
	CodeForeignLink: "A link to another origin may lead a model or a person to content the agent's operator does not " +
		"control; it is worth checking that the destination is expected.",
	CodeConfusableName: "An agent named like another, from a different origin, can be chosen in its place by a person " +
		"or a model; confusable letters (Cyrillic а for Latin a, I for l) make the copy look identical (UTS #39).",
	CodeConfusableProvider: "A provider written with letters confusable with another provider's impersonates that " +
		"organisation (UTS #39 confusable detection).",
}

// Why says why a finding with code matters; "" for an unknown code.
func Why(code string) string { return why[code] }

// Finding is one content-scan result.
type Finding struct {
	Code     string        `json:"code"`
	Severity card.Severity `json:"severity"`
	// Path is a JSON path into the card ("$.skills[2].examples[0]").
	Path string `json:"path"`
	// Message says what was found, hidden characters written ⟨U+XXXX⟩.
	Message string `json:"message"`
	// Excerpt is the text where it was found, shortened, written the same way.
	Excerpt string `json:"excerpt,omitempty"`
	// Why says why it matters.
	Why string `json:"why"`
	// Related are the other catalogued agents a confusable-name or
	// -provider finding is about. They are kept out of Message, so a
	// reader who may not see one of them can be shown the finding without
	// it.
	Related []Related `json:"related,omitempty"`
}

// Related is another agent a finding compares with.
type Related struct {
	AgentID string `json:"agent_id"`
	// Text is its name or provider as written, hidden characters made
	// visible.
	Text string `json:"text"`
}

// fieldKind says which checks read a field.
type fieldKind int

const (
	kindName  fieldKind = iota // names, ids, tags, provider: hidden characters only
	kindProse                  // descriptions and examples: every text check
)

type field struct {
	path string
	text string
	kind fieldKind
}

// fields lists the card's free text with its JSON path, read from the raw
// bytes so that a path names exactly what the card holds (the parsed
// card skips entries of the wrong type, which would shift indexes). Every
// card era spells these keys the same way. A card without raw bytes (built
// in memory) is read from its parsed fields.
func fields(c *card.Card) []field {
	var doc map[string]any
	if len(c.Raw) == 0 || json.Unmarshal(c.Raw, &doc) != nil {
		return parsedFields(c)
	}
	var out []field
	str := func(path string, v any, k fieldKind) {
		if s, ok := v.(string); ok {
			out = append(out, field{path, s, k})
		}
	}
	list := func(path string, v any, k fieldKind) {
		a, _ := v.([]any)
		for i, x := range a {
			str(fmt.Sprintf("%s[%d]", path, i), x, k)
		}
	}
	str("$.name", doc["name"], kindName)
	str("$.description", doc["description"], kindProse)
	if p, ok := doc["provider"].(map[string]any); ok {
		str("$.provider.organization", p["organization"], kindName)
	}
	if caps, ok := doc["capabilities"].(map[string]any); ok {
		exts, _ := caps["extensions"].([]any)
		for i, x := range exts {
			if e, ok := x.(map[string]any); ok {
				str(fmt.Sprintf("$.capabilities.extensions[%d].description", i), e["description"], kindProse)
			}
		}
	}
	skills, _ := doc["skills"].([]any)
	for i, x := range skills {
		sk, ok := x.(map[string]any)
		if !ok {
			continue
		}
		p := fmt.Sprintf("$.skills[%d]", i)
		str(p+".id", sk["id"], kindName)
		str(p+".name", sk["name"], kindName)
		str(p+".description", sk["description"], kindProse)
		list(p+".tags", sk["tags"], kindName)
		list(p+".examples", sk["examples"], kindProse)
	}
	return out
}

func parsedFields(c *card.Card) []field {
	out := []field{{"$.name", c.Name, kindName}, {"$.description", c.Description, kindProse}}
	if c.Provider != nil {
		out = append(out, field{"$.provider.organization", c.Provider.Organization, kindName})
	}
	for i, e := range c.Capabilities.Extensions {
		out = append(out, field{fmt.Sprintf("$.capabilities.extensions[%d].description", i), e.Description, kindProse})
	}
	for i, sk := range c.Skills {
		p := fmt.Sprintf("$.skills[%d]", i)
		out = append(out, field{p + ".id", sk.ID, kindName}, field{p + ".name", sk.Name, kindName},
			field{p + ".description", sk.Description, kindProse})
		for j, t := range sk.Tags {
			out = append(out, field{fmt.Sprintf("%s.tags[%d]", p, j), t, kindName})
		}
		for j, e := range sk.Examples {
			out = append(out, field{fmt.Sprintf("%s.examples[%d]", p, j), e, kindProse})
		}
	}
	return out
}

// Scanner runs the content checks. The zero value skips the confusable
// check; Names gives it the catalogue to compare with.
type Scanner struct {
	Names Names
}

// Scan checks c. origins are the card's own origins (where it was
// fetched from); links elsewhere and names shared with agents elsewhere
// are reported. The error is the name lookup's: the other findings are
// returned with it.
func (s Scanner) Scan(ctx context.Context, c *card.Card, origins []string) ([]Finding, error) {
	out := []Finding{}
	for _, f := range fields(c) {
		if f.text == "" {
			continue
		}
		out = append(out, hiddenFindings(f)...)
		if f.kind == kindProse {
			out = append(out, injectionFindings(f)...)
			out = append(out, linkFindings(f, origins)...)
		}
	}
	if s.Names == nil {
		return out, nil
	}
	cf, err := confusableFindings(ctx, s.Names, c, origins)
	return append(out, cf...), err
}

func newFinding(code string, sev card.Severity, path, excerpt, format string, args ...any) Finding {
	return Finding{Code: code, Severity: sev, Path: path, Message: fmt.Sprintf(format, args...),
		Excerpt: excerpt, Why: why[code]}
}

// maxExcerpt is the number of characters an excerpt keeps either side of
// what was found.
const maxExcerpt = 40

// excerpt is text[start:end] with up to maxExcerpt characters of context
// either side, hidden characters made visible.
func excerpt(text string, start, end int) string {
	from, to := start, end
	for n := 0; n < maxExcerpt && from > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(text[:from])
		from -= size
	}
	for n := 0; n < maxExcerpt && to < len(text); n++ {
		_, size := utf8.DecodeRuneInString(text[to:])
		to += size
	}
	s := Visible(text[from:to])
	if from > 0 {
		s = "…" + s
	}
	if to < len(text) {
		s += "…"
	}
	return s
}

// Visible writes every invisible or control character of s as ⟨U+XXXX⟩,
// and a run of tag characters as the ASCII text they spell, so what a
// reviewer reads is what the bytes say.
func Visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isTag(r) {
			j, text := i, []rune{}
			for j < len(s) {
				t, n := utf8.DecodeRuneInString(s[j:])
				if !isTag(t) {
					break
				}
				if t >= 0xE0020 && t <= 0xE007E {
					text = append(text, t-0xE0000)
				}
				j += n
			}
			fmt.Fprintf(&b, "⟨U+%04X…: tag text %q⟩", r, string(text))
			i = j
			continue
		}
		if invisible(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		} else {
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}
