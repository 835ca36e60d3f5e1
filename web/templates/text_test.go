package templates

import (
	"context"
	"strings"
	"testing"
)

func render(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	if err := Text(s).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestText(t *testing.T) {
	badge := func(cp string) string {
		return `<span class="cp" title="invisible character U+` + cp + ` in the card">⟨U+` + cp + `⟩</span>`
	}
	tests := []struct {
		name, in, want string
	}{
		{name: "plain", in: "Invoice agent", want: "Invoice agent"},
		{name: "markup escaped", in: `<script>x</script>&"'`, want: "&lt;script&gt;x&lt;/script&gt;&amp;&#34;&#39;"},
		{name: "right-to-left override", in: "a\u202Efdp.exe", want: "a" + badge("202E") + "fdp.exe"},
		{name: "isolates and marks", in: "\u2066x\u2069\u200F", want: badge("2066") + "x" + badge("2069") + badge("200F")},
		{name: "zero width", in: "pay\u200Bpal\uFEFF", want: "pay" + badge("200B") + "pal" + badge("FEFF")},
		{name: "control characters", in: "a\x1b[31mb\x00", want: "a" + badge("001B") + "[31mb" + badge("0000")},
		{name: "newline and tab kept", in: "a\n\tb", want: "a\n\tb"},
		{name: "line separator", in: "a\u2028b", want: "a" + badge("2028") + "b"},
		{name: "escaped text next to a badge", in: "<\u202E>", want: "&lt;" + badge("202E") + "&gt;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(t, tt.in); got != tt.want {
				t.Errorf("Text(%q) =\n%s\nwant\n%s", tt.in, got, tt.want)
			}
		})
	}
}

func TestVisible(t *testing.T) {
	if got, want := Visible("Evil\u202Efdp.exe"), "Evil⟨U+202E⟩fdp.exe"; got != want {
		t.Errorf("Visible = %q, want %q", got, want)
	}
	if got := Visible("plain"); got != "plain" {
		t.Errorf("Visible(plain) = %q", got)
	}
}

func TestLinkURL(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"https://example.com/x", true},
		{"http://example.com", true},
		{"HTTPS://example.com", true},
		{"javascript:alert(1)", false},
		{"JaVaScRiPt:alert(1)", false},
		{"data:text/html,<script>", false},
		{"/agents/other", false},
		{"//evil.example/", false},
		{"https:///nohost", false},
		{"", false},
	}
	for _, tt := range tests {
		if _, ok := linkURL(tt.in); ok != tt.want {
			t.Errorf("linkURL(%q) ok = %v, want %v", tt.in, ok, tt.want)
		}
	}
}
