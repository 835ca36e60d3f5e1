package card

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Parse reads one agent card of any protocol version.
//
// A *ParseError (errors.Is(err, ErrInvalid)) means the bytes cannot be read
// as a card at all: too large, not UTF-8, not JSON, not an object, too deep,
// a duplicate key, a list past lim, an object that is no agent card
// (CodeNotACard) or a card without a name (CodeMissingName; neither is
// checked again with lim.Stored). Every other problem (a missing field,
// a field of the wrong type, a bad URL) becomes a Finding and the field is
// treated as absent, so a sloppy card is still indexed and shown with its
// faults. Zero fields of lim take their DefaultLimits values.
//
// Card.Raw is raw itself, not a copy: the caller must not modify raw after
// the call.
func Parse(raw []byte, lim Limits) (*Card, error) {
	lim = lim.withDefaults()
	if len(raw) > lim.MaxBytes {
		return nil, parseErr(CodeTooLarge, "$", "the card is %d bytes, over the limit of %d", len(raw), lim.MaxBytes)
	}
	if bytes.HasPrefix(raw, utf8BOM) {
		// RFC 8259 §8.1: implementations MUST NOT add a byte order mark.
		return nil, parseErr(CodeInvalidJSON, "$", "the card starts with a UTF-8 byte order mark, which JSON forbids (RFC 8259 §8.1)")
	}
	dec := decoder{data: raw, lim: lim}
	v, perr := dec.decode()
	if perr != nil {
		return nil, perr
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, parseErr(CodeNotObject, "$", "the card is JSON but %s, not an object", jsonType(v))
	}

	p := &parser{lim: lim}
	c := p.card(top)
	if p.err != nil {
		return nil, p.err
	}
	if !lim.Stored {
		if perr := admit(top); perr != nil {
			return nil, perr
		}
	}
	c.Raw = raw
	c.Findings = p.findings
	if c.Findings == nil {
		c.Findings = []Finding{}
	}
	slices.SortStableFunc(c.Findings, func(a, b Finding) int {
		if n := strings.Compare(a.Path, b.Path); n != 0 {
			return n
		}
		if n := strings.Compare(a.Code, b.Code); n != 0 {
			return n
		}
		return strings.Compare(a.Message, b.Message)
	})
	return c, nil
}

// parser walks the decoded card. Lint findings accumulate; the first limit
// violation is kept in err and ends the parse.
type parser struct {
	lim      Limits
	shape    Shape
	findings []Finding
	err      *ParseError
}

func (p *parser) add(code string, sev Severity, path, format string, args ...any) {
	p.findings = append(p.findings, Finding{Code: code, Severity: sev, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) limit(path string, n, max int, what string) bool {
	if n <= max {
		return true
	}
	if p.err == nil {
		p.err = parseErr(CodeLimitExceeded, path, "%s: %d %s exceed the limit of %d", path, n, what, max)
	}
	return false
}

// jsonType names a decoded value's JSON type for messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a value of another kind"
}

func (p *parser) wrongType(path, want string, v any) {
	p.add(LintWrongType, SeverityError, path, "%s must be %s, not %s", path, want, jsonType(v))
}

// field returns o[key], treating null as absent: several SDKs write null for
// unset optional fields.
func field(o map[string]any, key string) (any, bool) {
	v, ok := o[key]
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

// str returns the string at o[key]. A value of another type is reported and
// treated as absent.
func (p *parser) str(o map[string]any, key, base string) (string, bool) {
	v, ok := field(o, key)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		p.wrongType(pathKey(base, key), "a string", v)
		return "", false
	}
	return s, true
}

// reqStr is str for a required field: absent or blank is reported at sev.
func (p *parser) reqStr(o map[string]any, key, base string, sev Severity) string {
	s, ok := p.str(o, key, base)
	if !ok {
		if _, present := field(o, key); !present {
			p.add(LintMissingField, sev, pathKey(base, key), "%s is required (%s)", pathKey(base, key), p.cite(base))
		}
		return ""
	}
	if strings.TrimSpace(s) == "" {
		p.add(LintMissingField, sev, pathKey(base, key), "%s is required but empty (%s)", pathKey(base, key), p.cite(base))
		return ""
	}
	return s
}

func (p *parser) boolean(o map[string]any, key, base string) bool {
	v, ok := field(o, key)
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		p.wrongType(pathKey(base, key), "a boolean", v)
	}
	return b
}

func (p *parser) object(o map[string]any, key, base string) (map[string]any, bool) {
	v, ok := field(o, key)
	if !ok {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.wrongType(pathKey(base, key), "an object", v)
		return nil, false
	}
	return m, true
}

// array returns o[key] if it is an array within max entries; what names the
// entries in the limit message.
func (p *parser) array(o map[string]any, key, base string, max int, what string) ([]any, bool) {
	v, ok := field(o, key)
	if !ok {
		return nil, false
	}
	a, ok := v.([]any)
	if !ok {
		p.wrongType(pathKey(base, key), "an array", v)
		return nil, false
	}
	if !p.limit(pathKey(base, key), len(a), max, what) {
		return nil, false
	}
	return a, true
}

// strList returns the string entries of o[key]; other entries are reported
// and skipped.
func (p *parser) strList(o map[string]any, key, base string, max int, what string) ([]string, bool) {
	a, ok := p.array(o, key, base, max, what)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(a))
	for i, v := range a {
		s, ok := v.(string)
		if !ok {
			p.wrongType(pathIndex(pathKey(base, key), i), "a string", v)
			continue
		}
		out = append(out, s)
	}
	return out, true
}

// rawJSON re-encodes a decoded value for the model's json.RawMessage fields.
// Numbers survive exactly (UseNumber); key order does not, which is why
// signatures are checked over Card.Raw, never over these.
func rawJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func pathKey(base, key string) string {
	if isIdent(key) {
		return base + "." + key
	}
	return base + "[" + strconv.Quote(key) + "]"
}

func pathIndex(base string, i int) string {
	return base + "[" + strconv.Itoa(i) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// specObjects name, per JSON path prefix, the object of the spec that
// defines the fields there: its v0.3 section (seed specification) and its
// name, which v1.0 kept.
var specObjects = []struct{ prefix, section, object string }{
	{"$.skills", "§5.5.4", "AgentSkill"},
	{"$.additionalInterfaces", "§5.5.5", "AgentInterface"},
	{"$.supportedInterfaces", "", "AgentInterface"},
	{"$.provider", "§5.5.1", "AgentProvider"},
	{"$.capabilities.extensions", "§5.5.2.1", "AgentExtension"},
	{"$.capabilities", "§5.5.2", "AgentCapabilities"},
	{"$.securitySchemes", "§5.5.3", "SecurityScheme"},
	{"$.signatures", "§5.5.6", "AgentCardSignature"},
}

// cite names the spec object defining the fields under path, in the
// version the card is written for: "v0.3 §5.5.4 AgentSkill", "v1.0
// AgentSkill".
func (p *parser) cite(path string) string {
	section, object := "§5.5", "AgentCard"
	for _, o := range specObjects {
		if strings.HasPrefix(path, o.prefix) {
			section, object = o.section, o.object
			break
		}
	}
	if p.shape == ShapeV10 || p.shape == ShapeMixed || section == "" {
		return "v1.0 " + object
	}
	return "v0.3 " + section + " " + object
}
