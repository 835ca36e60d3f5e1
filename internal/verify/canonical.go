package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// Form names one way of turning a card into the bytes a signer signed. The
// A2A specification (v1.0 §8.4) says JCS over the card without
// `signatures`, but the SDKs that actually sign cards do something else (see
// forms below), so a verifier that only knows the letter of the spec
// rejects most real signed cards.
type Form string

// Stable names of the canonical forms, recorded in reports.
const (
	// FormJCS is the specification's form: RFC 8785 (JCS) over the card
	// as received, minus `signatures`.
	FormJCS Form = "jcs"
	// FormSpecPresence is the v1.0 text's own form (§8.4.1): JCS after the
	// proto field-presence rules, so required fields stay even when empty
	// and unset optional ones are dropped (see presence).
	FormSpecPresence Form = "spec_presence"
	// FormJSSDK is @a2a-js/sdk ≥ 1.0.1 (src/signature.ts,
	// canonicalizeAgentCard): the card is round-tripped through the v1.0
	// proto schema (AgentCard.fromJSON/toJSON, which drops unknown fields
	// and false non-optional booleans), empty values are removed
	// recursively, and keys are sorted (JCS).
	FormJSSDK Form = "js_sdk"
	// FormPythonSDK is a2a-python 1.x (a2a/utils/signing.py,
	// _canonicalize_agent_card): the same proto round trip (MessageToDict)
	// and emptiness stripping, then json.dumps(separators=(',', ':'),
	// sort_keys=True) with its default ensure_ascii=True, so non-ASCII
	// text becomes \uXXXX escapes; proto Struct numbers print as floats.
	FormPythonSDK Form = "python_sdk"
	// FormStripped removes empty values ("", [], {}, null) from the card as
	// received, without a schema round trip, then JCS.
	FormStripped Form = "stripped"
	// FormPythonLegacy is a2a-python 0.3.x: pydantic
	// model_dump(exclude_defaults=True, exclude_none=True) drops
	// protocolVersion "0.3.0" and preferredTransport "JSONRPC", empties are
	// stripped, then the Python serialization above.
	FormPythonLegacy Form = "python_legacy"
	// FormPythonLegacyFalsy is the earliest 0.3.x clean_empty, whose
	// `if v` filter also drops false and 0.
	FormPythonLegacyFalsy Form = "python_legacy_falsy"
	// FormPythonLegacyVersion is the 0.3.x variant that re-adds
	// protocolVersion after dropping defaults.
	FormPythonLegacyVersion Form = "python_legacy_version"
)

// formSpec describes how one form is built from the decoded card.
type formSpec struct {
	form Form
	// project round-trips through the v1.0 proto schema.
	project bool
	strip   stripMode
	// dropDefaults removes the v0.3 pydantic defaults; keepVersion keeps
	// protocolVersion among them.
	dropDefaults, keepVersion bool
	python                    bool
	// presence applies the proto field-presence rules (§8.4.1).
	presence bool
}

type stripMode int

const (
	stripNone  stripMode = iota
	stripEmpty           // "", [], {}, null
	stripFalsy           // also false and 0
)

// forms are tried in this order; identical payloads are verified once. The
// spec form comes first, and for a typical card every SDK form produces the
// same bytes, so a valid signature costs one verification.
var forms = [...]formSpec{
	{form: FormJCS},
	{form: FormSpecPresence, presence: true},
	{form: FormJSSDK, project: true, strip: stripEmpty},
	{form: FormPythonSDK, project: true, strip: stripEmpty, python: true},
	{form: FormStripped, strip: stripEmpty},
	{form: FormPythonLegacy, strip: stripEmpty, dropDefaults: true, python: true},
	{form: FormPythonLegacyFalsy, strip: stripFalsy, dropDefaults: true, python: true},
	{form: FormPythonLegacyVersion, strip: stripEmpty, dropDefaults: true, keepVersion: true, python: true},
}

// ErrCanonical is wrapped when a card cannot be turned into a payload:
// not one JSON object, a duplicate key, a number JSON cannot carry.
var ErrCanonical = errors.New("verify: card cannot be canonicalized")

// maxDepth bounds the recursion of decoding and canonicalization.
const maxDepth = 64

// decodeStrict decodes one JSON value into map[string]any / []any /
// string / json.Number / bool / nil. Unlike encoding/json it refuses
// duplicate object keys: RFC 8259 §4 leaves their meaning open and parsers
// disagree (first wins, last wins), so a signed card with duplicates could
// verify here and say something else to a client (RFC 7515 §5.2 likewise
// requires rejecting duplicate header names).
func decodeStrict(raw []byte) (any, error) {
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrCanonical)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the top-level value", ErrCanonical)
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nesting deeper than %d", ErrCanonical, maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCanonical, err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("%w: %w", ErrCanonical, err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("%w: object key is not a string", ErrCanonical)
				}
				if _, dup := m[k]; dup {
					return nil, fmt.Errorf("%w: duplicate key %q", ErrCanonical, k)
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				m[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrCanonical, err)
			}
			return m, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrCanonical, err)
			}
			return a, nil
		}
		return nil, fmt.Errorf("%w: unexpected %v", ErrCanonical, t)
	default:
		return t, nil
	}
}

// payloads builds the candidate payloads of a decoded card lazily, in the
// order of forms.
type payloads struct {
	card map[string]any // without signatures
	// projected is the v1.0 schema round trip, built on first use.
	projected *projection
}

func newPayloads(top map[string]any) *payloads {
	card := make(map[string]any, len(top))
	for k, v := range top {
		if k != "signatures" {
			card[k] = v
		}
	}
	return &payloads{card: card}
}

// build returns the payload of spec, and the JSON paths of non-empty
// fields the form leaves out (fields the signature does not cover).
func (p *payloads) build(spec formSpec) ([]byte, []string, error) {
	var v any = p.card
	var dropped []string
	if spec.project {
		if p.projected == nil {
			p.projected = project(p.card)
		}
		v, dropped = p.projected.card, p.projected.dropped
	}
	if spec.presence {
		v = presence(p.card, msgCard)
	}
	if spec.dropDefaults {
		m := maps(v)
		if s, _ := m["preferredTransport"].(string); s == "JSONRPC" {
			delete(m, "preferredTransport")
		}
		if s, _ := m["protocolVersion"].(string); s == "0.3.0" && !spec.keepVersion {
			delete(m, "protocolVersion")
		}
		v = m
	}
	switch spec.strip {
	case stripEmpty, stripFalsy:
		var falsy []string
		v = clean(v, spec.strip, "$", &falsy)
		dropped = append(dropped, falsy...)
		if v == nil {
			v = map[string]any{}
		}
	}
	var buf bytes.Buffer
	w := writer{buf: &buf, python: spec.python, pyFloats: spec.python && spec.project}
	if err := w.value(v, 0); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), dropped, nil
}

// maps returns a shallow copy of a top-level object.
func maps(v any) map[string]any {
	src, _ := v.(map[string]any)
	m := make(map[string]any, len(src))
	for k, x := range src {
		m[k] = x
	}
	return m
}

// clean removes empty values recursively, as the SDKs' cleanEmpty /
// _clean_empty do: "", null, and arrays and objects that are empty after
// cleaning. In stripFalsy mode false and 0 go too. It records the paths of
// what it removes that meant something: false and 0, and containers that
// had entries (`{"schemes":{"bearer":{"list":[]}}}` is a requirement of
// the bearer scheme, yet cleans away to nothing), so a report can say
// that the signature does not cover them.
func clean(v any, mode stripMode, path string, removed *[]string) any {
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		if t == "" {
			return nil
		}
		return t
	case bool:
		if !t && mode == stripFalsy {
			*removed = append(*removed, path)
			return nil
		}
		return t
	case json.Number:
		if mode == stripFalsy {
			if f, err := strconv.ParseFloat(string(t), 64); err == nil && f == 0 {
				*removed = append(*removed, path)
				return nil
			}
		}
		return t
	case []any:
		mark := len(*removed)
		out := make([]any, 0, len(t))
		for i, x := range t {
			if c := clean(x, mode, path+"["+strconv.Itoa(i)+"]", removed); c != nil {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			if len(t) > 0 && !allEmptyLeaves(t) {
				*removed = append((*removed)[:mark], path)
			}
			return nil
		}
		return out
	case map[string]any:
		mark := len(*removed)
		out := make(map[string]any, len(t))
		for k, x := range t {
			if c := clean(x, mode, path+"."+k, removed); c != nil {
				out[k] = c
			}
		}
		if len(out) == 0 {
			if len(t) > 0 && !allEmptyLeaves(t) {
				*removed = append((*removed)[:mark], path)
			}
			return nil
		}
		return out
	}
	return v
}

// allEmptyLeaves tells a container of nothing but "" and null (and
// containers of those), whose removal loses no information, from one
// whose keys or false/0 values carry meaning.
func allEmptyLeaves(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case []any:
		for _, x := range t {
			if !allEmptyLeaves(x) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, x := range t {
			if x != nil && x != "" {
				return false
			}
		}
		return true
	}
	return false
}

// writer serializes a decoded value in one of two dialects:
//   - JCS (RFC 8785): keys sorted by UTF-16 code units, ES6 number
//     formatting (§3.2.2.3), strings escaped minimally (§3.2.2.2);
//   - Python's json.dumps(sort_keys=True, separators=(',', ':'),
//     ensure_ascii=True): keys sorted by code point, every character
//     outside printable ASCII escaped as \uXXXX (surrogate pairs above
//     U+FFFF), integers as written and floats as repr().
type writer struct {
	buf    *bytes.Buffer
	python bool
	// pyFloats prints every number as a Python float: MessageToDict turns
	// google.protobuf.Struct numbers (extension params) into doubles.
	pyFloats bool
}

func (w writer) value(v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nesting deeper than %d", ErrCanonical, maxDepth)
	}
	switch t := v.(type) {
	case nil:
		w.buf.WriteString("null")
	case bool:
		if t {
			w.buf.WriteString("true")
		} else {
			w.buf.WriteString("false")
		}
	case string:
		w.str(t)
	case json.Number:
		return w.number(t)
	case []any:
		w.buf.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			if err := w.value(x, depth+1); err != nil {
				return err
			}
		}
		w.buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		if w.python {
			slices.Sort(keys) // UTF-8 byte order is code point order
		} else {
			slices.SortFunc(keys, compareUTF16)
		}
		w.buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			w.str(k)
			w.buf.WriteByte(':')
			if err := w.value(t[k], depth+1); err != nil {
				return err
			}
		}
		w.buf.WriteByte('}')
	default:
		return fmt.Errorf("%w: a value of no JSON type", ErrCanonical)
	}
	return nil
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785
// §3.2.3 requires; it differs from byte order only when a character above
// U+FFFF meets one in U+E000–U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := utf16Unit(ra), utf16Unit(rb)
			if ua != ub {
				return int(ua) - int(ub)
			}
			return int(ra) - int(rb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// utf16Unit is the first UTF-16 code unit of r.
func utf16Unit(r rune) uint16 {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return uint16(hi)
	}
	return uint16(r)
}

const hexDigits = "0123456789abcdef"

func (w writer) str(s string) {
	b := w.buf
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			switch {
			case r < 0x20 || w.python && r == 0x7f:
				w.u(uint16(r))
			case w.python && r > 0x7f:
				if r >= 0x10000 {
					hi, lo := utf16.EncodeRune(r)
					w.u(uint16(hi))
					w.u(uint16(lo))
				} else {
					w.u(uint16(r))
				}
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

func (w writer) u(c uint16) {
	w.buf.WriteString(`\u`)
	w.buf.WriteByte(hexDigits[c>>12])
	w.buf.WriteByte(hexDigits[c>>8&0xf])
	w.buf.WriteByte(hexDigits[c>>4&0xf])
	w.buf.WriteByte(hexDigits[c&0xf])
}

func (w writer) number(n json.Number) error {
	s := string(n)
	isInt := !strings.ContainsAny(s, ".eE")
	if w.python && isInt && !w.pyFloats {
		// json.loads reads an integer literal as an exact int.
		if s == "-0" {
			s = "0"
		}
		w.buf.WriteString(s)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("%w: number %s is out of range", ErrCanonical, s)
	}
	if w.python {
		w.buf.WriteString(pythonFloatRepr(f))
		return nil
	}
	out, err := jcs.NumberToJSON(f)
	if err != nil {
		return fmt.Errorf("%w: number %s: %w", ErrCanonical, s, err)
	}
	w.buf.WriteString(out)
	return nil
}

// pythonFloatRepr is Python's repr(float): the shortest round-tripping
// digits, positional when the decimal exponent is in [-4, 16), with ".0"
// added to integral values, otherwise d.ddde±XX.
func pythonFloatRepr(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := x + 1
	var out string
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			out = "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			out = digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			out = digits[:decpt] + "." + digits[decpt:]
		}
	} else {
		sign := "+"
		if x < 0 {
			sign, x = "-", -x
		}
		xs := strconv.Itoa(x)
		if len(xs) < 2 {
			xs = "0" + xs
		}
		out = mant + "e" + sign + xs
	}
	if neg {
		return "-" + out
	}
	return out
}

// Payload is what a signer signs for the card raw (as served; its
// `signatures` are left out) in form f: the registry signs its own card
// with it, in the form that both the JS SDK and this package verify.
func Payload(raw []byte, f Form) ([]byte, error) {
	tree, err := decodeStrict(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCanonical, err)
	}
	top, ok := tree.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: not a JSON object", ErrCanonical)
	}
	for _, spec := range forms {
		if spec.form == f {
			b, _, err := newPayloads(top).build(spec)
			return b, err
		}
	}
	return nil, fmt.Errorf("%w: unknown form %q", ErrCanonical, f)
}
