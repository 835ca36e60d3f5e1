package proxy

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestRedactor holds the redactor to the forms an agent can echo a secret
// in, inside JSON values and keys, and to leaving clean JSON byte for byte.
func TestRedactor(t *testing.T) {
	const secret = `k<e>y&"q\ +/=% z`
	r := newRedactor([]string{secret})
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tt := range []struct {
		name, in string
		gone     string // must not be in the output
	}{
		{"raw in text", `{"text":"` + strings.NewReplacer(`"`, `\"`, `\`, `\\`).Replace(secret) + `"}`, secret},
		{"JSON-escaped in text", `{"text":"{\"t\":\"k\\u003ce\\u003ey\\u0026\\\"q\\\\ +/=% z\"}"}`, `k\u003ce\u003ey\u0026\"q\\ +/=% z`},
		{"query encoded", `{"u":"https://x.example/?t=k%3Ce%3Ey%26%22q%5C+%2B%2F%3D%25+z"}`, "k%3Ce%3Ey%26%22q%5C+%2B%2F%3D%25+z"},
		{"path encoded", `{"u":"https://x.example/k%3Ce%3Ey&%22q%5C%20+%2F=%25%20z"}`, "k%3Ce%3Ey&%22q%5C%20+%2F=%25%20z"},
		{"base64 alone", `{"t":"` + b64(secret) + `"}`, b64(secret)},
		{"url base64 unpadded", `{"t":"` + base64.RawURLEncoding.EncodeToString([]byte(secret)) + `"}`, base64.RawURLEncoding.EncodeToString([]byte(secret))},
		{"inside a file's bytes", `{"raw":"` + b64("Authorization: Bearer "+secret+"\n") + `"}`, b64("Authorization: Bearer " + secret + "\n")},
		{"base64 of a longer text, in text", `{"t":"see ` + b64("xx"+secret+"yy") + ` ok"}`, b64("xx" + secret + "yy")[4:20]},
		{"a key", `{"` + b64(secret) + `":1}`, b64(secret)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := string(r.JSON([]byte(tt.in)))
			if strings.Contains(out, tt.gone) {
				t.Errorf("JSON(%s) = %s, still holds %q", tt.in, out, tt.gone)
			}
			if out == tt.in {
				t.Errorf("JSON(%s) = %s, no redaction", tt.in, out)
			}
		})
	}
	// A file's bytes stay base64 that decodes, the secret replaced.
	out := string(r.JSON([]byte(`{"raw":"` + b64("Bearer "+secret) + `"}`)))
	if want := `{"raw":"` + b64("Bearer "+redacted) + `"}`; out != want {
		t.Errorf("file bytes redacted to %s, want %s", out, want)
	}
	clean := `{"b":1.50,"a":"<ok>"}`
	if out := string(r.JSON([]byte(clean))); out != clean {
		t.Errorf("clean JSON re-encoded: %s", out)
	}
	if got := r.String("error: " + secret); strings.Contains(got, secret) {
		t.Errorf("String = %q", got)
	}
}
