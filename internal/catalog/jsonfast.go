package catalog

import (
	"encoding/json"
	"unicode/utf8"
)

// The index build decodes, for every agent, the JSON columns the catalog
// wrote itself (the summary, each skill's tags, examples and media types,
// the audit codes): twenty and more json.Unmarshal calls an agent, a third
// of the build's database side at 300,000 agents. These readers decode
// the shapes json.Marshal writes (no spaces, escapes only where needed)
// without reflection; a string with an escape is handed to encoding/json
// alone, and anything else they do not recognise (spaces, another key, a
// number) falls back to json.Unmarshal of the whole value, so the result
// is always what json.Unmarshal gives. FuzzJSONFast holds them together.

// unmarshalStrings decodes a JSON array of strings, or null (nil).
func unmarshalStrings(raw string) ([]string, error) {
	if out, ok := fastStrings(raw); ok {
		return out, nil
	}
	var out []string
	err := json.Unmarshal([]byte(raw), &out)
	return out, err
}

func fastStrings(raw string) ([]string, bool) {
	if !utf8.ValidString(raw) {
		return nil, false
	}
	r := jsonReader{s: raw}
	out, ok := r.strings()
	return out, ok && r.i == len(raw)
}

// unmarshalSummaryRecord decodes an agents.summary column.
func unmarshalSummaryRecord(raw string, r *summaryRecord) error {
	if utf8.ValidString(raw) {
		var fast summaryRecord
		jr := jsonReader{s: raw}
		if jr.summary(&fast) && jr.i == len(raw) {
			*r = fast
			return nil
		}
	}
	return json.Unmarshal([]byte(raw), r)
}

// jsonReader reads JSON from s at i; each method reports false on input it
// does not handle, leaving the caller to fall back.
type jsonReader struct {
	s string
	i int
}

func (r *jsonReader) peek(c byte) bool { return r.i < len(r.s) && r.s[r.i] == c }

func (r *jsonReader) eat(c byte) bool {
	if r.peek(c) {
		r.i++
		return true
	}
	return false
}

func (r *jsonReader) eatLit(lit string) bool {
	if len(r.s)-r.i >= len(lit) && r.s[r.i:r.i+len(lit)] == lit {
		r.i += len(lit)
		return true
	}
	return false
}

// str reads a string. Without escapes it is a substring of s; with one,
// encoding/json decodes that literal (a single string, so its rules hold).
func (r *jsonReader) str() (string, bool) {
	if !r.eat('"') {
		return "", false
	}
	start, escaped := r.i, false
	for ; r.i < len(r.s); r.i++ {
		switch c := r.s[r.i]; {
		case c == '"':
			r.i++
			if !escaped {
				return r.s[start : r.i-1], true
			}
			var v string
			if json.Unmarshal([]byte(r.s[start-1:r.i]), &v) != nil {
				return "", false
			}
			return v, true
		case c == '\\':
			escaped = true
			r.i++ // the escaped byte is never the closing quote
		case c < 0x20:
			return "", false
		}
	}
	return "", false
}

// strings reads an array of strings, or null.
func (r *jsonReader) strings() ([]string, bool) {
	if r.eatLit("null") {
		return nil, true
	}
	if !r.eat('[') {
		return nil, false
	}
	out := []string{}
	if r.eat(']') {
		return out, true
	}
	for {
		v, ok := r.str()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if r.eat(']') {
			return out, true
		}
		if !r.eat(',') {
			return nil, false
		}
	}
}

// object reads an object, calling field for each key with the reader at
// its value; field returns the key's bit among the object's keys, 0 for a
// key it does not know. A key given twice is left to encoding/json, which
// decodes the second into what the first left.
func (r *jsonReader) object(field func(key string) uint) bool {
	if !r.eat('{') {
		return false
	}
	if r.eat('}') {
		return true
	}
	var seen uint
	for {
		k, ok := r.str()
		if !ok || !r.eat(':') {
			return false
		}
		bit := field(k)
		if bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		if r.eat('}') {
			return true
		}
		if !r.eat(',') {
			return false
		}
	}
}

// known returns bit when ok, else 0.
func known(bit uint, ok bool) uint {
	if ok {
		return bit
	}
	return 0
}

func (r *jsonReader) summary(s *summaryRecord) bool {
	return r.object(func(k string) uint {
		var ok bool
		switch k {
		case "name":
			s.Name, ok = r.str()
			return known(1<<0, ok)
		case "description":
			s.Description, ok = r.str()
			return known(1<<1, ok)
		case "version":
			s.Version, ok = r.str()
			return known(1<<2, ok)
		case "provider":
			s.Provider, ok = r.str()
			return known(1<<3, ok)
		case "protocol_versions":
			s.ProtocolVersions, ok = r.strings()
			return known(1<<4, ok)
		case "bindings":
			s.Bindings, ok = r.strings()
			return known(1<<5, ok)
		case "security_schemes":
			s.SecuritySchemes, ok = r.strings()
			return known(1<<6, ok)
		case "input_modes":
			s.InputModes, ok = r.strings()
			return known(1<<7, ok)
		case "output_modes":
			s.OutputModes, ok = r.strings()
			return known(1<<8, ok)
		case "skills":
			s.Skills, ok = r.skills()
			return known(1<<9, ok)
		}
		return 0
	})
}

func (r *jsonReader) skills() ([]skillSummaryRecord, bool) {
	if r.eatLit("null") {
		return nil, true
	}
	if !r.eat('[') {
		return nil, false
	}
	out := []skillSummaryRecord{}
	if r.eat(']') {
		return out, true
	}
	for {
		var sk skillSummaryRecord
		if !r.object(func(k string) uint {
			var ok bool
			switch k {
			case "id":
				sk.ID, ok = r.str()
				return known(1<<0, ok)
			case "name":
				sk.Name, ok = r.str()
				return known(1<<1, ok)
			case "tags":
				sk.Tags, ok = r.strings()
				return known(1<<2, ok)
			}
			return 0
		}) {
			return nil, false
		}
		out = append(out, sk)
		if r.eat(']') {
			return out, true
		}
		if !r.eat(',') {
			return nil, false
		}
	}
}
