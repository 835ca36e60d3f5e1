package card

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"", "{}", "[]", "null", `{"a":1,"a":2}`, `{"name":"\ud800"}`, `{"skills":[{"id":1}]}`,
		`{"supportedInterfaces":[{"url":"grpc.example.com:443","protocolBinding":"grpc"}],"url":"x"}`,
		`{"securitySchemes":{"a":{"oauth2SecurityScheme":{"flows":{"implicit":{}}}}},"securityRequirements":[{"schemes":{"a":{"list":[1]}}}]}`,
		"{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	lim := Limits{MaxBytes: 64 << 10, MaxDepth: 16, MaxSkills: 50, MaxStringLen: 4 << 10}
	f.Fuzz(func(t *testing.T, raw []byte) {
		in := bytes.Clone(raw)
		c, err := Parse(raw, lim)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not a *ParseError wrapping ErrInvalid", err)
			}
			if pe.Code == "" || pe.Path == "" || pe.Message == "" {
				t.Fatalf("incomplete ParseError %+v", pe)
			}
			if c != nil {
				t.Fatal("card returned with an error")
			}
			return
		}
		if !bytes.Equal(c.Raw, in) || !bytes.Equal(raw, in) {
			t.Fatal("Raw differs from the input, or the input was modified")
		}
		for _, f := range c.Findings {
			if f.Code == "" || f.Path == "" || f.Path[0] != '$' || f.Message == "" {
				t.Fatalf("incomplete finding %+v", f)
			}
			if f.Severity != SeverityError && f.Severity != SeverityWarning && f.Severity != SeverityInfo {
				t.Fatalf("bad severity %+v", f)
			}
		}
		if c.Interfaces == nil || c.SecuritySchemes == nil || c.SecurityRequirements == nil || c.Skills == nil ||
			c.DefaultInputModes == nil || c.DefaultOutputModes == nil || c.ProtocolVersions == nil || c.Findings == nil {
			t.Fatalf("nil list in %+v", c)
		}
		ids := map[string]bool{}
		for _, s := range c.Skills {
			if s.InputModes == nil || s.OutputModes == nil || s.Tags == nil {
				t.Fatalf("nil modes or tags in skill %+v", s)
			}
			if s.ID == "" {
				// Kept for its name, with its finding (see skills).
				if s.Name == "" || !slices.ContainsFunc(c.Findings, func(f Finding) bool {
					return (f.Code == LintMissingField || f.Code == LintWrongType) && strings.HasSuffix(f.Path, ".id")
				}) {
					t.Fatalf("skill without id kept without a name or a finding: %+v, %+v", s, c.Findings)
				}
				continue
			}
			if ids[s.ID] {
				t.Fatalf("skill id repeated: %q", s.ID)
			}
			ids[s.ID] = true
		}
		for _, i := range c.Interfaces {
			if i.URL == "" || i.Binding == "" || i.ProtocolVersion == "" || i.Path == "" {
				t.Fatalf("incomplete interface %+v", i)
			}
		}
		if c.Shape != ShapeV02 && c.Shape != ShapeV03 && c.Shape != ShapeV10 && c.Shape != ShapeMixed {
			t.Fatalf("shape %q", c.Shape)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "examples", "cards", "invoice-extractor.json"))
	if err != nil {
		b.Skip("example card missing:", err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(raw, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDecoderMatchesEncodingJSON holds the hand-written decoder to
// encoding/json: whatever it accepts, encoding/json accepts and decodes to
// the same tree; whatever it calls invalid JSON, encoding/json rejects.
func FuzzDecoderMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"],"b":{}}`, `[]`, `0`, `-0.0E-0`, `"\ud83d\ude00"`, `"\ud800"`,
		`{"a":1,"a":2}`, `{"a":01}`, `[1,]`, `"a\tb"`, "\"\x7f\"", `1.`, `.5`, `tru`, `nul`, `{"":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d := decoder{data: raw, lim: Limits{MaxDepth: 64, MaxStringLen: 1 << 20}}
		got, perr := d.decode()
		valid := json.Valid(raw)
		if perr != nil {
			if perr.Code == CodeInvalidJSON && valid {
				t.Fatalf("rejected valid JSON %q: %v", raw, perr)
			}
			return
		}
		if !valid {
			t.Fatalf("accepted invalid JSON %q as %#v", raw, got)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %q as %#v, encoding/json says %#v", raw, got, want)
		}
	})
}
