package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// A run's credentials must not come back in anything the proxy hands
// back, even when the agent echoes them: an agent may repeat a header in
// a text part (raw), put it in a data part (JSON-escaped once encoded:
// `"` as \", `<` as \u003c), quote it in a URL (percent-encoded), or send
// it as a file or a base64 string. Replacing the raw secret in encoded
// JSON misses all but the first, so redaction works on decoded values:
// every string of an event, in each of the forms below, and the bytes
// inside any string that is itself base64.

const redacted = "[redacted]"

// minBase64Fragment is the shortest piece of a base64 alphabet form that
// is replaced inside longer base64 text; shorter ones would match by
// chance.
const minBase64Fragment = 8

// redactor replaces a run's secrets in every form listed above.
type redactor struct {
	secrets [][]byte
	// forms are the textual forms of every secret, longest first, so a
	// form that contains another is replaced whole.
	forms []string
}

func newRedactor(secrets []string) *redactor {
	if len(secrets) == 0 {
		return nil
	}
	r := &redactor{}
	seen := map[string]bool{}
	add := func(f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			r.forms = append(r.forms, f)
		}
	}
	for _, s := range secrets {
		r.secrets = append(r.secrets, []byte(s))
		add(s)
		add(jsonEscaped(s, true))
		add(jsonEscaped(s, false))
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
		add(strings.ReplaceAll(url.QueryEscape(s), "+", "%20"))
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			add(enc.EncodeToString([]byte(s)))
		}
		// Inside longer base64 text the secret starts at any of three
		// byte offsets; each gives a run of characters that depend on the
		// secret's bytes alone.
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for k := range 3 {
				if f := base64Fragment(enc, []byte(s), k); len(f) >= minBase64Fragment {
					add(f)
				}
			}
		}
	}
	slices.SortFunc(r.forms, func(a, b string) int { return len(b) - len(a) })
	return r
}

// jsonEscaped is s as encoding/json writes it inside a string, without
// the quotes.
func jsonEscaped(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s)
	out := strings.TrimSuffix(b.String(), "\n")
	return strings.TrimSuffix(strings.TrimPrefix(out, `"`), `"`)
}

// base64Fragment is the part of enc's encoding of (k bytes, secret, …)
// that only the secret's bits decide: characters whose six bits all fall
// inside it.
func base64Fragment(enc *base64.Encoding, secret []byte, k int) string {
	full := enc.EncodeToString(append(make([]byte, k), secret...))
	first := (8*k + 5) / 6
	last := (8 * (k + len(secret))) / 6 // exclusive
	if last > len(full) {
		last = len(full)
	}
	if first >= last {
		return ""
	}
	return full[first:last]
}

// String replaces every form of every secret in s.
func (r *redactor) String(s string) string {
	if r == nil {
		return s
	}
	// A string that is base64 as a whole (a file part's bytes) is
	// redacted inside, so it stays base64 that decodes.
	s = r.inBase64(s)
	for _, f := range r.forms {
		if strings.Contains(s, f) {
			s = strings.ReplaceAll(s, f, redacted)
		}
	}
	return s
}

// inBase64 redacts the secrets inside s when s is base64 (a file part's
// bytes, or a blob in text) whose decoded bytes hold one, and encodes it
// back the way it came.
func (r *redactor) inBase64(s string) string {
	if len(s) < minBase64Fragment {
		return s
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		changed := false
		for _, sec := range r.secrets {
			if bytes.Contains(b, sec) {
				b, changed = bytes.ReplaceAll(b, sec, []byte(redacted)), true
			}
		}
		if changed {
			return enc.EncodeToString(b)
		}
		return s
	}
	return s
}

// JSON redacts every string (keys included) of the JSON value b; b is
// returned as it was when nothing needed redacting, so the encoding an
// agent's event had is kept.
func (r *redactor) JSON(b []byte) []byte {
	if r == nil || len(b) == 0 {
		return b
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []byte(r.String(string(b)))
	}
	v, changed := r.value(v)
	if !changed {
		return b
	}
	out, err := json.Marshal(v)
	if err != nil {
		return []byte(`{"error":"event could not be encoded"}`)
	}
	return out
}

func (r *redactor) value(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		s := r.String(v)
		return s, s != v
	case []any:
		changed := false
		for i, e := range v {
			var c bool
			v[i], c = r.value(e)
			changed = changed || c
		}
		return v, changed
	case map[string]any:
		changed := false
		out := make(map[string]any, len(v))
		for k, e := range v {
			nk := r.String(k)
			ne, c := r.value(e)
			changed = changed || c || nk != k
			out[nk] = ne
		}
		return out, changed
	}
	return v, false
}
