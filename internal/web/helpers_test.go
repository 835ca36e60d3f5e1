package web

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestIsFragmentRequest(t *testing.T) {
	tests := []struct {
		name   string
		header map[string]string
		want   bool
	}{
		{name: "plain browser request", want: false},
		{name: "htmx swap", header: hxFragment, want: true},
		{name: "boosted", header: hxBoost, want: false},
		{name: "history restore", header: hxRestore, want: false},
		{name: "header not true", header: map[string]string{hxRequest: "1"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			if got := isFragmentRequest(r); got != tt.want {
				t.Errorf("isFragmentRequest = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"br, gzip;q=0.5", true},
		{"GZIP", true},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"deflate, br", false},
		{"x-gzip", false},
	}
	for _, tt := range tests {
		if got := acceptsGzip(tt.header); got != tt.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("word ", 100)
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{name: "short kept", in: "  hello  ", n: 10, want: "hello"},
		{name: "cut at a word", in: long, n: 12, want: "word word…"},
		{name: "one long word cut inside", in: strings.Repeat("x", 20), n: 5, want: "xxxxx…"},
		{name: "runes, not bytes", in: "ééééééé", n: 3, want: "ééé…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := excerpt(tt.in, tt.n); got != tt.want {
				t.Errorf("excerpt = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFacetIDUnique(t *testing.T) {
	values := []string{"a/b", "a_b", "a b", "a_2f_b", "ab", "a-b", "a.b", "a\u202eb", "A/B"}
	seen := map[string]string{}
	for _, v := range values {
		id := facetID("tag", v)
		if prev, ok := seen[id]; ok {
			t.Errorf("facetID(%q) = facetID(%q) = %q", v, prev, id)
		}
		seen[id] = v
		if strings.ContainsAny(id, " /\"'<>%") {
			t.Errorf("facetID(%q) = %q holds characters a selector must escape", v, id)
		}
	}
}
