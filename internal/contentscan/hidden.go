package contentscan

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a2aregistry/registry/internal/card"
)

// invisible reports characters that change text without being seen: the
// format characters (category Cf) and controls other than tab and newline.
func invisible(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	return unicode.Is(unicode.Cf, r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

func isZeroWidth(r rune) bool {
	return r >= 0x200B && r <= 0x200D || r == 0x2060 || r == 0xFEFF
}

func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// hiddenFindings reports bidirectional controls, zero-width characters and
// tag characters in one field: one finding per kind, naming the code
// points and where the first one is.
func hiddenFindings(f field) []Finding {
	if isASCII(f.text) {
		// Every character reported here is beyond ASCII.
		return nil
	}
	var out []Finding
	runes := []rune(f.text)
	offsets := make([]int, len(runes)+1)
	for i, off := 0, 0; i < len(runes); i++ {
		offsets[i] = off
		off += utf8.RuneLen(runes[i])
	}
	offsets[len(runes)] = len(f.text)

	type hit struct {
		first, count int
		seen         []rune
	}
	hits := map[string]*hit{}
	note := func(code string, i int) {
		h := hits[code]
		if h == nil {
			h = &hit{first: i}
			hits[code] = h
		}
		h.count++
		if len(h.seen) < 5 && !containsRune(h.seen, runes[i]) {
			h.seen = append(h.seen, runes[i])
		}
	}
	var smuggled strings.Builder
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case isBidiControl(r):
			note(CodeBidiControl, i)
		case isZeroWidth(r):
			if !joinerAllowed(runes, i) {
				note(CodeZeroWidth, i)
			}
		case isTag(r):
			if n := flagTagSequence(runes, i); n > 0 {
				i += n - 1
				continue
			}
			note(CodeTagCharacters, i)
			if r >= 0xE0020 && r <= 0xE007E {
				smuggled.WriteRune(r - 0xE0000)
			}
		}
	}
	for _, code := range []string{CodeBidiControl, CodeZeroWidth, CodeTagCharacters} {
		h := hits[code]
		if h == nil {
			continue
		}
		ex := excerpt(f.text, offsets[h.first], offsets[h.first+1])
		switch code {
		case CodeTagCharacters:
			out = append(out, newFinding(code, card.SeverityWarning, f.path, ex,
				"%d invisible tag character(s) spelling %q", h.count, smuggled.String()))
		default:
			out = append(out, newFinding(code, card.SeverityWarning, f.path, ex,
				"%d invisible character(s): %s", h.count, codePoints(h.seen)))
		}
	}
	return out
}

func containsRune(rs []rune, r rune) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

func codePoints(rs []rune) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("U+%04X", r)
	}
	return strings.Join(parts, ", ")
}

// joinerAllowed reports whether the ZWJ or ZWNJ at runes[i] does a job
// text needs: joining two emoji into one (👩‍💻, UTS #51 §2.3), or
// controlling how letters of a script that shapes or forms conjuncts join
// (Persian می‌خواهم, Devanagari half forms; RFC 5892 Appendix A.1 and A.2
// allow them in the same places). Between Latin letters it only hides.
func joinerAllowed(runes []rune, i int) bool {
	r := runes[i]
	if r != 0x200C && r != 0x200D {
		return false
	}
	prev, next := i-1, i+1
	// Variation selectors and emoji modifiers belong to the emoji before.
	for prev >= 0 && (runes[prev] == 0xFE0F || runes[prev] == 0xFE0E) {
		prev--
	}
	if prev < 0 || next >= len(runes) {
		return false
	}
	if r == 0x200D && pictographic(runes[prev]) && pictographic(runes[next]) {
		return true
	}
	s := joiningScript(runes[prev])
	return s != nil && (unicode.IsLetter(runes[next]) || unicode.IsMark(runes[next])) && unicode.Is(s, runes[next])
}

// joiningScripts are scripts in which ZWJ and ZWNJ change shaping: cursive
// joining (Arabic, Syriac, N'Ko, Mongolian) and Brahmic conjuncts.
var joiningScripts = []*unicode.RangeTable{
	unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian, unicode.Devanagari, unicode.Bengali,
	unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya, unicode.Tamil, unicode.Telugu, unicode.Kannada,
	unicode.Malayalam, unicode.Sinhala, unicode.Myanmar, unicode.Khmer, unicode.Tibetan,
}

func joiningScript(r rune) *unicode.RangeTable {
	if !unicode.IsLetter(r) && !unicode.IsMark(r) {
		return nil
	}
	for _, s := range joiningScripts {
		if unicode.Is(s, r) {
			return s
		}
	}
	return nil
}

// pictographic approximates Extended_Pictographic (emoji-data.txt): the
// emoji blocks, miscellaneous symbols and dingbats, arrows and the few
// older symbols that emoji ZWJ sequences use (❤ U+2764, ⚕ U+2695, ⬛ U+2B1B).
func pictographic(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF, r >= 0x2300 && r <= 0x23FF,
		r >= 0x2B00 && r <= 0x2BFF, r >= 0x2190 && r <= 0x21FF,
		r == 0x00A9, r == 0x00AE, r == 0x203C, r == 0x2049, r == 0x2122, r == 0x2139,
		r == 0x3030, r == 0x303D, r == 0x3297, r == 0x3299:
		return true
	}
	return false
}

// flagTagSequence returns the length of the tag characters starting at
// runes[i] when they complete an emoji subdivision flag (UTS #51 §2.2:
// U+1F3F4, then a lower-case region and subdivision code spelled in tag
// characters, then CANCEL TAG, e.g. 🏴 "gbsct" for Scotland); 0 otherwise.
// The code is limited to the 3 to 7 letters and digits real flags use, so
// a flag cannot carry a sentence.
func flagTagSequence(runes []rune, i int) int {
	if i == 0 || runes[i-1] != 0x1F3F4 {
		return 0
	}
	j := i
	for j < len(runes) && (runes[j] >= 0xE0030 && runes[j] <= 0xE0039 || runes[j] >= 0xE0061 && runes[j] <= 0xE007A) {
		j++
	}
	if n := j - i; n < 3 || n > 7 || j >= len(runes) || runes[j] != 0xE007F {
		return 0
	}
	return j - i + 1
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
