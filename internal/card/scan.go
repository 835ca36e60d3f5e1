package card

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// decoder is a single-pass JSON decoder producing the same tree as
// encoding/json with UseNumber (map[string]any, []any, string, json.Number,
// bool, nil), but refusing what encoding/json accepts silently: duplicate
// keys (it keeps the last), invalid UTF-8 (it substitutes U+FFFD), and
// nesting or strings past our limits. One pass instead of a pre-scan plus
// encoding/json's own two (validate, then decode) halves the cost of
// Parse. Recursion is bounded by MaxDepth, checked before descending.
// FuzzDecoderMatchesEncodingJSON holds it to encoding/json.
type decoder struct {
	data []byte
	pos  int
	lim  Limits
	// path is the route to the value being decoded, for error messages.
	path []pathSeg
}

type pathSeg struct {
	key   string
	index int
	isKey bool
}

func (d *decoder) pathString() string {
	p := "$"
	for _, seg := range d.path {
		if seg.isKey {
			p = pathKey(p, seg.key)
		} else {
			p = pathIndex(p, seg.index)
		}
	}
	return p
}

func (d *decoder) skipWS() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) peek() byte {
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

func (d *decoder) syntax(what string) *ParseError {
	at := d.pathString()
	if d.pos >= len(d.data) {
		return parseErr(CodeInvalidJSON, at, "unexpected end of input at %s: %s", at, what)
	}
	return parseErr(CodeInvalidJSON, at, "unexpected %s at byte %d (%s): %s",
		strconv.QuoteRune(rune(d.data[d.pos])), d.pos, at, what)
}

// decode reads exactly one JSON value followed by optional whitespace.
func (d *decoder) decode() (any, *ParseError) {
	d.skipWS()
	if d.pos == len(d.data) {
		return nil, parseErr(CodeInvalidJSON, "$", "the document is empty")
	}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipWS()
	if d.pos != len(d.data) {
		return nil, parseErr(CodeInvalidJSON, "$", "unexpected data after the top-level value at byte %d", d.pos)
	}
	return v, nil
}

// value decodes the value at d.pos; depth is that of its enclosing container.
func (d *decoder) value(depth int) (any, *ParseError) {
	switch d.peek() {
	case '{':
		return d.object(depth + 1)
	case '[':
		return d.array(depth + 1)
	case '"':
		return d.str()
	default:
		return d.literal()
	}
}

func (d *decoder) tooDeep() *ParseError {
	at := d.pathString()
	return parseErr(CodeTooDeep, at, "%s: nesting exceeds the limit of %d levels", at, d.lim.MaxDepth)
}

func (d *decoder) object(depth int) (any, *ParseError) {
	if depth > d.lim.MaxDepth {
		return nil, d.tooDeep()
	}
	d.pos++ // '{'
	m := make(map[string]any)
	d.skipWS()
	if d.peek() == '}' {
		d.pos++
		return m, nil
	}
	for {
		d.skipWS()
		if d.peek() != '"' {
			return nil, d.syntax("expected a string object key")
		}
		key, err := d.str()
		if err != nil {
			return nil, err
		}
		k := key.(string)
		if _, dup := m[k]; dup {
			at := d.pathString()
			return nil, parseErr(CodeDuplicateKey, pathKey(at, k),
				"%s: key %s appears more than once; parsers disagree on which one counts, so the card is ambiguous",
				at, strconv.Quote(k))
		}
		d.skipWS()
		if d.peek() != ':' {
			return nil, d.syntax("expected ':' after an object key")
		}
		d.pos++
		d.skipWS()
		d.path = append(d.path, pathSeg{key: k, isKey: true})
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		d.path = d.path[:len(d.path)-1]
		m[k] = v
		d.skipWS()
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return m, nil
		default:
			return nil, d.syntax("expected ',' or '}' in an object")
		}
	}
}

func (d *decoder) array(depth int) (any, *ParseError) {
	if depth > d.lim.MaxDepth {
		return nil, d.tooDeep()
	}
	d.pos++ // '['
	a := []any{}
	d.skipWS()
	if d.peek() == ']' {
		d.pos++
		return a, nil
	}
	for i := 0; ; i++ {
		d.skipWS()
		d.path = append(d.path, pathSeg{index: i})
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		d.path = d.path[:len(d.path)-1]
		a = append(a, v)
		d.skipWS()
		switch d.peek() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return a, nil
		default:
			return nil, d.syntax("expected ',' or ']' in an array")
		}
	}
}

// str decodes a string starting at its opening quote. Strings with escapes
// (rare in cards) are handed to encoding/json, which knows every escape
// rule; the rest are copied as they are.
func (d *decoder) str() (any, *ParseError) {
	d.pos++ // '"'
	start := d.pos
	ascii, escaped := true, false
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			end := d.pos
			d.pos++
			if end-start > d.lim.MaxStringLen {
				at := d.pathString()
				return nil, parseErr(CodeLimitExceeded, at,
					"%s: a string of %d bytes exceeds the limit of %d", at, end-start, d.lim.MaxStringLen)
			}
			if !ascii && !utf8.Valid(d.data[start:end]) {
				at := d.pathString()
				return nil, parseErr(CodeInvalidUTF8, at, "%s: string at byte %d is not valid UTF-8", at, start-1)
			}
			if !escaped {
				return string(d.data[start:end]), nil
			}
			var s string
			if err := json.Unmarshal(d.data[start-1:end+1], &s); err != nil {
				d.pos = start - 1
				return nil, d.syntax("malformed escape sequence in a string")
			}
			return s, nil
		case c == '\\':
			escaped = true
			d.pos += 2
		case c < 0x20:
			// RFC 8259 §7: control characters must be escaped.
			return nil, d.syntax("control character in a string")
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			d.pos++
		}
	}
	d.pos = len(d.data)
	return nil, d.syntax("unterminated string")
}

// literal decodes true, false, null or a number (RFC 8259 §6 grammar),
// numbers as json.Number so they survive re-encoding exactly.
func (d *decoder) literal() (any, *ParseError) {
	rest := d.data[d.pos:]
	for _, lit := range []struct {
		text string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if len(rest) >= len(lit.text) && string(rest[:len(lit.text)]) == lit.text {
			d.pos += len(lit.text)
			return lit.v, nil
		}
	}
	start := d.pos
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	if d.peek() == '-' {
		d.pos++
	}
	switch c := d.peek(); {
	case c == '0':
		d.pos++
	case c >= '1' && c <= '9':
		digits()
	default:
		return nil, d.syntax("expected a value")
	}
	if d.peek() == '.' {
		d.pos++
		if digits() == 0 {
			return nil, d.syntax("expected a digit after the decimal point")
		}
	}
	if c := d.peek(); c == 'e' || c == 'E' {
		d.pos++
		if c := d.peek(); c == '+' || c == '-' {
			d.pos++
		}
		if digits() == 0 {
			return nil, d.syntax("expected a digit in the exponent")
		}
	}
	return json.Number(d.data[start:d.pos]), nil
}
