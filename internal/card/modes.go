package card

import "strings"

// informalModes are mode values real cards use instead of media types (the
// early A2A samples wrote "text", "file", "data"). Those named after a
// top-level media type stand for that whole type.
var informalModes = map[string]bool{
	"text": true, "image": true, "audio": true, "video": true,
	"file": true, "data": true, "json": true,
}

// NormalizeMode lowercases and trims a mode and drops media type parameters
// ("Text/Plain; charset=utf-8" → "text/plain"); RFC 2045 §5.1 makes type,
// subtype and parameter names case-insensitive.
func NormalizeMode(s string) string {
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	return strings.ToLower(strings.TrimSpace(s))
}

// MatchMode reports whether a searched mode and a declared mode overlap,
// ignoring case and parameters. A wildcard on either side covers the other
// ("image/*" matches "image/png" both ways; "*" and "*/*" match anything),
// and an informal top-level name stands for its wildcard ("text" ≡
// "text/*"), so a search for text/plain finds an agent declaring "text".
// Anything else must be equal.
func MatchMode(pattern, mode string) bool {
	a, b := wildcardForm(NormalizeMode(pattern)), wildcardForm(NormalizeMode(mode))
	if a == "" || b == "" {
		return false
	}
	if a == "*/*" || b == "*/*" || a == b {
		return true
	}
	at, as, aok := strings.Cut(a, "/")
	bt, bs, bok := strings.Cut(b, "/")
	if !aok || !bok || at != bt {
		return false
	}
	return as == "*" || bs == "*"
}

func wildcardForm(m string) string {
	switch m {
	case "*":
		return "*/*"
	case "text", "image", "audio", "video":
		return m + "/*"
	}
	return m
}

// validMode reports whether m is a media type (RFC 6838 §4.2 type/subtype,
// wildcards allowed, parameters allowed) or a known informal value.
func validMode(m string) bool {
	n := NormalizeMode(m)
	if informalModes[n] || n == "*" {
		return true
	}
	t, sub, ok := strings.Cut(n, "/")
	return ok && isToken(t) && isToken(sub) && (t != "*" || sub == "*")
}

// isToken checks RFC 9110 §5.6.2 token characters.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// modes reads a list of modes: trimmed, blanks and repeats dropped,
// non-media-types kept but reported. present tells whether the field
// exists (as an array).
func (p *parser) modes(o map[string]any, key, base string) ([]string, bool) {
	list, ok := p.strList(o, key, base, p.lim.MaxModes, "modes")
	if !ok {
		return []string{}, false
	}
	out := make([]string, 0, len(list))
	for i, m := range list {
		t := strings.TrimSpace(m)
		if t == "" {
			path := pathIndex(pathKey(base, key), i)
			p.add(LintInvalidMode, SeverityInfo, path, "%s is blank; ignored", path)
			continue
		}
		if !validMode(t) {
			path := pathIndex(pathKey(base, key), i)
			p.add(LintInvalidMode, SeverityInfo, path, "%s %q is neither a media type nor a known informal mode", path, t)
		}
		dup := false
		for _, o := range out {
			if o == t {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, t)
		}
	}
	return out, true
}
