package contentscan

import (
	"bufio"
	_ "embed"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// confusablesTable is Unicode's confusables.txt (UTS #39) reduced to its
// mapping columns by gen_confusables.go. No maintained Go module with this
// data is served by the module proxy we may use (github.com/mtibben/
// confusables has no published version), and golang.org/x/text has no
// confusables data, so the table is vendored with its provenance header.
//
//go:embed confusables.txt
var confusablesTable string

// prototypes maps a code point to its prototype (UTS #39 §4).
var prototypes = sync.OnceValue(func() map[rune]string {
	m := make(map[rune]string, 6600)
	sc := bufio.NewScanner(strings.NewReader(confusablesTable))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		src, dst, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		s, err := strconv.ParseUint(src, 16, 32)
		if err != nil {
			continue
		}
		var b strings.Builder
		for _, h := range strings.Fields(dst) {
			r, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				continue
			}
			b.WriteRune(rune(r))
		}
		m[rune(s)] = b.String()
	}
	return m
})

// asciiLookalikes maps non-ASCII letters whose prototype is one ASCII
// letter or digit (Cyrillic а → a, Greek ο → o, fullwidth ａ → a) to it. The
// injection patterns match on it, so "іgnore" with a Cyrillic і still
// reads as "ignore"; Russian or Greek words do not become English ones.
var asciiLookalikes = sync.OnceValue(func() map[rune]rune {
	m := make(map[rune]rune, 1024)
	for src, dst := range prototypes() {
		if src < 0x80 || len(dst) != 1 || !unicode.IsLetter(src) {
			continue
		}
		c := rune(dst[0])
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			m[src] = unicode.ToLower(c)
		}
	}
	return m
})

// Skeleton is the UTS #39 §4 skeleton of s: NFD, default-ignorable code
// points removed, each code point replaced by its prototype, NFD again. Two
// strings with the same skeleton are visually confusable ("Paypal" with a
// capital I for the l, or with a Cyrillic а).
func Skeleton(s string) string {
	s = norm.NFD.String(s)
	p := prototypes()
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if defaultIgnorable(r) {
			continue
		}
		if t, ok := p[r]; ok {
			b.WriteString(t)
		} else {
			b.WriteRune(r)
		}
	}
	return norm.NFD.String(b.String())
}

// NameKey is the key two agent names (or providers) are compared under:
// the skeleton, lower-cased (so "PAYPAL" and "Paypal" meet too), skeleton
// again (lower-casing can produce a letter with a prototype), with runs of
// white space made one space. Empty when s has no visible content.
func NameKey(s string) string {
	k := Skeleton(strings.ToLower(Skeleton(s)))
	return strings.Join(strings.Fields(k), " ")
}

// defaultIgnorable reports the Default_Ignorable_Code_Point characters a
// skeleton drops (DerivedCoreProperties.txt; the ranges that matter in
// text: soft hyphen, joiners and marks, bidi controls, invisible operators,
// variation selectors, tag characters and the BOM).
func defaultIgnorable(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x061C, r == 0x115F, r == 0x1160,
		r == 0x17B4, r == 0x17B5, r >= 0x180B && r <= 0x180F,
		r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E,
		r >= 0x2060 && r <= 0x206F, r == 0x3164, r >= 0xFE00 && r <= 0xFE0F,
		r == 0xFEFF, r == 0xFFA0, r >= 0x1BCA0 && r <= 0x1BCA3,
		r >= 0x1D173 && r <= 0x1D17A, r >= 0xE0000 && r <= 0xE0FFF:
		return true
	}
	return false
}
