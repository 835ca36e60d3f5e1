package a2aagent

import (
	"reflect"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
)

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		in      string
		text    string
		filters map[string][]string
		refine  bool
	}{
		{"find an agent that converts currencies and accepts JSON", "converts currencies",
			map[string][]string{"input_mode": {"application/json"}}, false},
		{"only signed ones", "", map[string][]string{"signature": {"verified"}}, true},
		{"over gRPC", "", map[string][]string{"binding": {card.BindingGRPC}}, false},
		{"just those over gRPC", "", map[string][]string{"binding": {card.BindingGRPC}}, true},
		{"Translate a PDF and give back JSON", "Translate a PDF", map[string][]string{"output_mode": {"application/json"}}, false},
		{"an agent that reads PDF files and returns JSON", "",
			map[string][]string{"input_mode": {"application/pdf"}, "output_mode": {"application/json"}}, false},
		{"agents that summarise meetings", "summarise meetings", map[string][]string{}, false},
		{"which ones take images", "", map[string][]string{"input_mode": {"image/*"}}, true},
		// The vocabulary is the search's own (query.Suggest): what the
		// search pages suggest, a conversation applies.
		{"translate contracts with no auth over JSON-RPC", "translate contracts",
			map[string][]string{"security_scheme": {"none"}, "binding": {card.BindingJSONRPC}}, false},
	} {
		r := read(tc.in)
		if r.text != tc.text || !reflect.DeepEqual(r.filters, tc.filters) || r.refine != tc.refine {
			t.Errorf("read(%q) = %q %v %v; want %q %v %v", tc.in, r.text, r.filters, r.refine, tc.text, tc.filters, tc.refine)
		}
	}
}

func TestMergeNarrows(t *testing.T) {
	prev := read("find an agent that converts currencies and accepts JSON")
	got := merge(prev, read("only signed ones"))
	got = merge(got, read("over gRPC"))
	want := map[string][]string{"input_mode": {"application/json"}, "signature": {"verified"}, "binding": {card.BindingGRPC}}
	if got.text != "converts currencies" || !reflect.DeepEqual(got.filters, want) {
		t.Errorf("merged = %q %v", got.text, got.filters)
	}
	if len(prev.filters) != 1 {
		t.Errorf("merge changed the previous reading: %v", prev.filters)
	}
}
