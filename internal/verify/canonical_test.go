package verify

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/gowebpki/jcs"
)

// TestPythonSerialization compares the Python dialect of the writer with
// payloads produced by CPython's json.dumps(..., separators=(',', ':'),
// sort_keys=True) (ensure_ascii defaults to True), committed in
// testdata/python_payloads.json: escapes, surrogate pairs, DEL, float
// repr (1.0, 1e+16, 1e-05, -0.0) and big integers.
func TestPythonSerialization(t *testing.T) {
	data, err := os.ReadFile("testdata/python_payloads.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixtures []struct {
		Name    string          `json:"name"`
		Card    json.RawMessage `json:"card"`
		Payload string          `json:"python_payload"`
	}
	if err := json.Unmarshal(data, &fixtures); err != nil {
		t.Fatal(err)
	}
	for _, fx := range fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			tree, err := decodeStrict(fx.Card)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := newPayloads(tree.(map[string]any)).build(formSpec{strip: stripEmpty, python: true})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != fx.Payload {
				t.Errorf("got  %s\nwant %s", got, fx.Payload)
			}
		})
	}
}

// TestJCSMatchesReference holds the JCS writer to gowebpki/jcs (itself
// checked against the RFC 8785 test vectors) on edge cases: number
// spelling, escapes, key order by UTF-16 code units.
func TestJCSMatchesReference(t *testing.T) {
	inputs := []string{
		`{"b":1.0,"a":1e21,"c":-0,"d":0.000001,"e":1e-7,"f":123456789012345678901234567890,"g":5e-324,"h":1.7976931348623157e308}`,
		`{"\u20ac":1,"\ud83d\ude00":2,"\ufb33":3,"a":4,"":5}`,
		`{"s":"\u0000\u001f\u007f\u2028 <>& \" \\ / \b\f\n\r\t é 😀"}`,
		`{"nested":{"z":[true,false,null,{"y":[],"x":{}}],"a":"b"}}`,
	}
	for _, in := range inputs {
		want, err := jcs.Transform([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		tree, err := decodeStrict([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := (writer{buf: &buf}).value(tree, 0); err != nil {
			t.Fatal(err)
		}
		if buf.String() != string(want) {
			t.Errorf("in   %s\ngot  %s\nwant %s", in, buf.String(), want)
		}
	}
}

func TestPythonFloatRepr(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{1, "1.0"}, {1e16, "1e+16"}, {1e15, "1000000000000000.0"}, {0.0001, "0.0001"},
		{0.00001, "1e-05"}, {1.5e-7, "1.5e-07"}, {-2.5, "-2.5"}, {123.456, "123.456"},
		{1e100, "1e+100"}, {5e-324, "5e-324"}, {0.1, "0.1"},
	}
	for _, tt := range tests {
		if got := pythonFloatRepr(tt.f); got != tt.want {
			t.Errorf("repr(%v) = %s, want %s", tt.f, got, tt.want)
		}
	}
}

func TestProjectionDropsUnknownAndDefaults(t *testing.T) {
	in := `{"name":"n","url":"https://x","capabilities":{"streaming":false,"extensions":[{"uri":"u","required":false}]},
	"securitySchemes":{"s":{"httpAuthSecurityScheme":{"scheme":"bearer"},"apiKeySecurityScheme":{"name":"k"}}},
	"skills":[{"id":"a","input_modes":["text/plain"]}]}`
	tree, err := decodeStrict([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got, dropped, err := newPayloads(tree.(map[string]any)).build(formSpec{project: true, strip: stripEmpty})
	if err != nil {
		t.Fatal(err)
	}
	// streaming is `optional bool` (kept when false); required is a plain
	// proto bool (false dropped); apiKeySecurityScheme is a second oneof
	// member (ts-proto keeps the first in schema order); input_modes is
	// read by its proto name and written by its JSON name.
	want := `{"capabilities":{"extensions":[{"uri":"u"}],"streaming":false},"name":"n","securitySchemes":{"s":{"apiKeySecurityScheme":{"name":"k"}}},"skills":[{"id":"a","inputModes":["text/plain"]}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, p := range []string{"$.url", "$.securitySchemes.s.httpAuthSecurityScheme"} {
		if !contains(dropped, p) {
			t.Errorf("dropped %v lacks %s", dropped, p)
		}
	}
}

// FuzzCanonicalize: every form of any JSON object is produced without
// panicking, the JCS form agrees with gowebpki/jcs, and each form is
// stable (canonicalizing its own output changes nothing for JCS).
func FuzzCanonicalize(f *testing.F) {
	f.Add([]byte(baseCard))
	f.Add([]byte(`{"a":1.0,"b":[{"c":""}],"signatures":[1]}`))
	f.Add([]byte(`{"supportedInterfaces":[null,1,"x"],"securitySchemes":{"a":[]},"skills":{"x":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := decodeStrict(data)
		if err != nil {
			return
		}
		top, ok := tree.(map[string]any)
		if !ok {
			return
		}
		pl := newPayloads(top)
		for _, spec := range forms {
			out, _, err := pl.build(spec)
			if err != nil {
				continue
			}
			if !spec.python {
				again, err := jcs.Transform(out)
				if err != nil || !bytes.Equal(again, out) {
					t.Fatalf("%s form not JCS-stable: %s -> %s (%v)", spec.form, out, again, err)
				}
			}
		}
	})
}

// FuzzVerify: arbitrary bytes never panic the verifier and never verify
// without a key.
func FuzzVerify(f *testing.F) {
	f.Add(signJCS(f, baseCard, map[string]any{"kid": "k1"}))
	f.Add([]byte(`{"signatures":[{"protected":"eyJhbGciOiJub25lIn0","signature":"AA"}]}`))
	f.Add([]byte(`{"signatures":{}}`))
	v := New(Options{Keys: StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{"*"}}}})
	unkeyed := New(Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		v.VerifySignatures(t.Context(), data, nil)
		if rep := unkeyed.VerifySignatures(t.Context(), data, nil); rep.Status == StatusVerified {
			t.Fatalf("verified without any key: %s", data)
		}
	})
}
