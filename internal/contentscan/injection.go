package contentscan

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/a2aregistry/registry/internal/card"
)

// pattern is one kind of text that addresses the reading model. The list
// is short on purpose: each entry is phrasing a card describing an agent
// has no reason to use, so benign cards (in any language) are not
// flagged. Patterns match the folded text (see fold): lower case, words
// separated by single spaces, invisible characters removed and look-alike
// letters mapped to ASCII, so "IGNORE   previous\ninstructions",
// "ig\u200bnore previous instructions" and a Cyrillic "іgnore" all match.
type pattern struct {
	code string
	// what names the pattern in the finding's message.
	what string
	// need are groups of words: a match contains one word of every
	// group, a cheap test that spares most text the regular expression.
	// Common words ("you ", " to ") alone would let most prose through.
	need [][]string
	re   *regexp.Regexp
	// unless are what, right after a match, makes it an instruction to
	// a person instead ("you must call" + " us").
	unless []string
}

func words(expr string) *regexp.Regexp { return regexp.MustCompile(`\b(?:` + expr + `)\b`) }

var patterns = []pattern{
	{CodePromptInjection, "an order to ignore earlier instructions", [][]string{{"ignore", "disregard", "forget", "override", "bypass"},
		{"instruction", "prompt", "direction", "rule", "guideline", "guidance", "guardrail", "message", "context", "command",
			"directive", "constraint", "order", "polic", "programming", "training", "safety"}}, words(
		`(?:ignore|disregard|forget|override|bypass)(?: (?:all|any|of|the|your|my|these|those|every))*` +
			` (?:previous|prior|earlier|above|preceding|foregoing|system|original|initial|developer|safety|existing|former|all)` +
			`(?: (?:the|your|my|of|system|safety|developer|previous|prior))*` +
			` (?:instructions?|prompts?|directions?|rules|guidelines|guidance|guardrails|messages?|context|commands?|directives?|constraints?|orders|policies)|` +
			`(?:ignore|disregard|forget|override|bypass) your (?:own )?(?:instructions|system prompt|prompt|rules|guidelines|guardrails|directives|programming|training|safety)`), nil},
	{CodePromptInjection, "an order to disregard what came before", [][]string{{"ignore", "disregard", "forget"}}, words(
		`(?:ignore|disregard|forget)(?: (?:all|everything|anything|the text|the))? (?:above|before this|prior to this|said before|you were told)`), nil},
	{CodePromptInjection, "new instructions for the model", [][]string{{"new instruction", "new task", "new role", "new objective",
		"new directive", "new system prompt", "from now on you", "you are no longer", "override"}}, words(
		`(?:your |the )?new (?:instructions?|task|role|objective|directives?|system prompt) (?:is|are|follows?)|` +
			`from now on you (?:are|will|must|should|shall)|you are no longer (?:an?|the) (?:assistant|ai|agent|model)|` +
			`(?:system|admin|administrator|developer|emergency) override`), nil},
	{CodePromptInjection, "an order to call or route through something", [][]string{{"you must", "you are required to", "you shall",
		"you should", "you need to", "you have to", "this agent", "this tool", "this skill", "this function", "our agent", "our tool",
		"our skill", "our function"}}, words(
		`you (?:must|are required to|shall)(?: (?:always|first|also|immediately|now|only))* ` +
			`(?:call|invoke|execute|trigger|forward|transfer|route|delegate)|` +
			`you (?:should|need to|have to)(?: (?:always|first|also|immediately|now|only))* ` +
			`(?:call|invoke|use|route to|delegate to|forward to) (?:this|our|the) (?:\pL+ )?(?:agent|tool|function|skill)s?|` +
			`(?:always|only|must) (?:use|call|invoke|prefer|choose|select|route to) (?:this|our) (?:agent|tool|skill|function)s?`),
		// "To cancel, you must call us": an instruction to a person.
		[]string{" us", " me", " our ", " your ", " customer", " support", " a human", " the office", " the hotline", " the help"}},
	{CodePromptInjection, "an order to keep something from the user", [][]string{{"the user"}}, words(
		`(?:do not|don t|dont|never) (?:tell|inform|notify|alert|warn|let) the user|` +
			`(?:do not|don t|dont|never) (?:mention|reveal|show|disclose)(?: (?:this|it|that))? to the user|` +
			`without (?:telling|informing|notifying|alerting|asking) the user`), nil},
	{CodePromptInjection, "a request to disclose prompts or secrets", [][]string{{"reveal", "print", "repeat", "leak", "dump", "disclose", "exfiltrate", "output"},
		{"prompt", "instructions", "message", "api key", "credentials", "secrets", "password", "history"}}, words(
		`(?:reveal|print|repeat|leak|dump|disclose|exfiltrate|output) (?:me |us )?(?:your|the|all|any)` +
			`(?: (?:full|entire|hidden|secret))* (?:(?:system|hidden|initial|original|previous) (?:prompt|instructions|message)|` +
			`api keys?|credentials|secrets|passwords?|conversation history|chat history)`), nil},
	{CodePromptInjection, "text addressed to the model itself", [][]string{{" to ", " for ", "if you", " mode", "as a"},
		{" ai", " llm", " model", " assistant", " orchestrator", " mode"}}, words(
		`(?:attention|note|message|instructions?) (?:to|for) (?:the |any )?(?:ai|llm|language model|assistant|model|orchestrator)s?|` +
			`if you are an? (?:ai|llm|language model|ai assistant|ai agent|assistant)|` +
			`as an? (?:ai|llm|ai language model|language model|ai assistant|ai agent) you (?:must|should|will|are required to)|` +
			`(?:enable|enter|activate|switch to|you are now in) (?:developer|dan|jailbreak|god|unrestricted) mode`), nil},
}

// imitations match chat-prompt formats in text folded without joining
// lines (foldLines), so a line that starts with "system:" is seen as one.
var imitations = []pattern{
	{CodePromptImitation, "a chat-template token", [][]string{{"<", "["}}, regexp.MustCompile(
		`<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|start_header_id|end_header_id|eot_id|begin_of_text)\s*\|>|` +
			`\[/?inst\]|<<\s*/?sys\s*>>|<(?:start|end)_of_turn>`), nil},
	{CodePromptImitation, "a fake system or developer message", [][]string{{"system", "developer", "sys>"}}, regexp.MustCompile(
		`(?m)^\s*(?:#+\s*)?\[?(?:system|system prompt|system message|developer)\]?\s*:|` +
			`</?(?:system|system_prompt|sys)>|\[(?:system|system message)\]`), nil},
	{CodePromptImitation, "a prompt-template section header", [][]string{{"##"}}, regexp.MustCompile(
		`(?m)^\s*#{2,}\s*(?:system|instructions?|response)\s*:?\s*$`), nil},
}

// injectionFindings reports each pattern that matches one field.
func injectionFindings(f field) []Finding {
	var out []Finding
	check := func(ps []pattern, folded string, offs []int) {
		for _, p := range ps {
			if !p.mayMatch(folded) {
				continue
			}
			loc := p.match(folded)
			if loc == nil {
				continue
			}
			start, end := offs[loc[0]], offs[loc[1]]
			out = append(out, newFinding(p.code, card.SeverityWarning, f.path, excerpt(f.text, start, end),
				"%s: %q", p.what, Visible(f.text[start:end])))
		}
	}
	folded, offs := fold(f.text, false)
	check(patterns, folded, offs)
	folded, offs = fold(f.text, true)
	check(imitations, folded, offs)
	return out
}

// fold prepares text for matching: invisible characters dropped (their
// only effect would be to split words), tag characters read as the ASCII
// they spell (a model reads them so), compatibility forms (NFKC: fullwidth
// letters) and look-alike letters mapped to ASCII, lower-cased. Without
// keepPunct every run of other characters becomes one space; with it
// punctuation stays and only spaces and tabs are collapsed. offs[i] is the
// byte offset in text of the character folded[i] came from, and
// offs[len(folded)] is len(text), so a match maps back to the original.
func fold(text string, keepPunct bool) (string, []int) {
	if isASCII(text) {
		return foldASCII(text, keepPunct)
	}
	return foldUnicode(text, keepPunct)
}

func foldUnicode(text string, keepPunct bool) (string, []int) {
	look := asciiLookalikes()
	var b strings.Builder
	offs := make([]int, 0, len(text)+1)
	space := true // no leading space
	asciiParts := make([]rune, 0, 4)
	emit := func(s string, at int) {
		for i := 0; i < len(s); i++ {
			offs = append(offs, at)
		}
		b.WriteString(s)
	}
	for i, r := range text {
		switch {
		case r >= 0xE0020 && r <= 0xE007E:
			r -= 0xE0000
		case r >= 0x20 && r < 0x7F, unicode.IsSpace(r):
		case invisible(r) || defaultIgnorable(r):
			continue
		}
		parts := asciiParts[:0]
		if r < utf8.RuneSelf {
			parts = append(parts, r)
		} else {
			parts = []rune(norm.NFKC.String(string(r)))
		}
		for _, c := range parts {
			c = unicode.ToLower(c)
			if c >= utf8.RuneSelf {
				if a, ok := look[c]; ok {
					c = a
				}
			}
			sep := !unicode.IsLetter(c) && !unicode.IsDigit(c) && !unicode.IsMark(c)
			if keepPunct {
				sep = c == ' ' || c == '\t' || unicode.IsSpace(c) && c != '\n'
			}
			if sep {
				if !space {
					emit(" ", i)
					space = true
				}
				continue
			}
			emit(string(c), i)
			space = c == '\n'
		}
	}
	offs = append(offs, len(text))
	return b.String(), offs
}

// foldASCII is fold for ASCII text, byte by byte: most card text is
// ASCII, and fold's general path costs a Unicode lookup or more a rune.
func foldASCII(text string, keepPunct bool) (string, []int) {
	b := make([]byte, 0, len(text))
	offs := make([]int, 0, len(text)+1)
	space := true // no leading space
	for i := 0; i < len(text); i++ {
		c := text[i]
		isSpace := c == ' ' || '\t' <= c && c <= '\r'
		if (c < 0x20 || c == 0x7f) && !isSpace {
			continue // invisible: a control character
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		sep := !('a' <= c && c <= 'z' || '0' <= c && c <= '9')
		if keepPunct {
			sep = isSpace && c != '\n'
		}
		if sep {
			if !space {
				b = append(b, ' ')
				offs = append(offs, i)
				space = true
			}
			continue
		}
		b = append(b, c)
		offs = append(offs, i)
		space = c == '\n'
	}
	offs = append(offs, len(text))
	return string(b), offs
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// mayMatch tells whether folded holds a word of every group p needs.
func (p pattern) mayMatch(folded string) bool {
	for _, words := range p.need {
		if !containsAny(folded, words) {
			return false
		}
	}
	return true
}

// match is the first match of p in folded that no unless word follows.
func (p pattern) match(folded string) []int {
	for _, loc := range p.re.FindAllStringIndex(folded, -1) {
		rest := folded[loc[1]:]
		if !slices.ContainsFunc(p.unless, func(u string) bool { return strings.HasPrefix(rest, u) }) {
			return loc
		}
	}
	return nil
}
