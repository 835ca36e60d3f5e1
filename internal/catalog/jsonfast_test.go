package catalog

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/synth"
)

// jsonFastSeeds are values as the catalog writes them and as it never
// does: the fast readers must decode the first and hand the second to
// encoding/json.
var jsonFastSeeds = []string{
	`[]`, `null`, `["a"]`, `["text/plain","application/json"]`, `["a\"b","c\\d","\u003cx\u003e","é","\ud83d\ude00"]`,
	`[ "a" ]`, `["a",]`, `["a" "b"]`, `[1]`, `["a"`, `"a"`, ``, `["\x"]`, "[\"a\x01\"]", "[\"\xff\"]", `["a"]x`, `[null]`,
	`{"name":"n","description":"d \u0026 e","version":"1","provider":"p","protocol_versions":["0.3.0"],"bindings":["JSONRPC"],` +
		`"security_schemes":[],"input_modes":["text/plain"],"output_modes":null,"skills":[{"id":"s","name":"S","tags":["t","u"]},{"id":"s2","name":""}]}`,
	`{}`, `{"Name":"n"}`, `{"name":"a","name":"b"}`, `{"skills":[{"id":"a","tags":["x"]}],"skills":[{"id":"b"}]}`,
	`{"skills":[{"id":"a","id":"b"}]}`, `{"skills":[null]}`, `{"other":1}`, `{"name":null}`, `{"skills":null}`, `{ "name":"a"}`,
	`{"name":"a",}`, `{"name":"a"}}`, `{"skills":[{"id":"a"},]}`, `{"bindings":["a"],"input_modes":"x"}`,
}

// checkJSONFast compares the fast readers with json.Unmarshal on raw.
func checkJSONFast(t *testing.T, raw string) {
	t.Helper()
	var want []string
	wantErr := json.Unmarshal([]byte(raw), &want)
	got, err := unmarshalStrings(raw)
	if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
		t.Errorf("strings %q: got %#v, %v; json.Unmarshal %#v, %v", raw, got, err, want, wantErr)
	}
	var wantSum, gotSum summaryRecord
	wantErr = json.Unmarshal([]byte(raw), &wantSum)
	err = unmarshalSummaryRecord(raw, &gotSum)
	if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(gotSum, wantSum) {
		t.Errorf("summary %q: got %#v, %v; json.Unmarshal %#v, %v", raw, gotSum, err, wantSum, wantErr)
	}
}

func TestJSONFastMatchesEncodingJSON(t *testing.T) {
	for _, raw := range jsonFastSeeds {
		checkJSONFast(t, raw)
	}
	// Summaries and skill lists as the catalog stores them, of synthetic
	// cards: every one is read by the fast path, none falls back.
	gen := synth.New(3)
	for i := range 300 {
		c, err := card.Parse(gen.Card(i), card.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		raw, err := encodeSummaryRecord(recordOfSummary(summaryOf(c)))
		if err != nil {
			t.Fatal(err)
		}
		checkJSONFast(t, raw)
		r := jsonReader{s: raw}
		if sum := (summaryRecord{}); !r.summary(&sum) || r.i != len(raw) {
			t.Errorf("card %d: the stored summary is not read by the fast path: %s", i, raw)
		}
		for _, sk := range c.Skills {
			for _, l := range [][]string{sk.Tags, sk.Examples, sk.InputModes} {
				b, err := json.Marshal(l)
				if err != nil {
					t.Fatal(err)
				}
				checkJSONFast(t, string(b))
				if _, ok := fastStrings(string(b)); !ok {
					t.Errorf("card %d: a stored list is not read by the fast path: %s", i, b)
				}
			}
		}
	}
}

func FuzzJSONFast(f *testing.F) {
	for _, raw := range jsonFastSeeds {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) { checkJSONFast(t, raw) })
}
