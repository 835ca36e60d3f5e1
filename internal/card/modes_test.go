package card

import "testing"

func TestNormalizeMode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"text/plain", "text/plain"},
		{" Text/Plain ; charset=UTF-8", "text/plain"},
		{"TEXT", "text"},
		{"application/vnd.geo+json", "application/vnd.geo+json"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := NormalizeMode(tt.in); got != tt.want {
			t.Errorf("NormalizeMode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMatchMode(t *testing.T) {
	tests := []struct {
		pattern, mode string
		want          bool
	}{
		{"image/png", "image/png", true},
		{"image/*", "image/png", true},
		{"image/png", "image/*", true},
		{"image/*", "text/plain", false},
		{"*/*", "application/pdf", true},
		{"*", "text", true},
		{"application/pdf", "*/*", true},
		{"text/*", "text", true},
		{"text/plain", "text", true},
		{"text", "text/markdown", true},
		{"image", "text/plain", false},
		{"IMAGE/PNG", "image/png; q=1", true},
		{"application/json", "application/pdf", false},
		{"application/json", "data", false},
		{"data", "data", true},
		{"application", "application/json", false},
		{"", "text/plain", false},
		{"text/plain", "", false},
	}
	for _, tt := range tests {
		if got := MatchMode(tt.pattern, tt.mode); got != tt.want {
			t.Errorf("MatchMode(%q, %q) = %v, want %v", tt.pattern, tt.mode, got, tt.want)
		}
	}
}

func TestValidMode(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"text/plain", true}, {"image/*", true}, {"*/*", true}, {"*", true}, {"text", true}, {"file", true},
		{"application/json; charset=utf-8", true}, {"pdf", false}, {"*/png", false}, {"text/", false},
		{"/plain", false}, {"text/pl ain", false}, {"a/b/c", false},
	}
	for _, tt := range tests {
		if got := validMode(tt.in); got != tt.want {
			t.Errorf("validMode(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestNormalizeProtocolVersion(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"0.3.0", "0.3", true}, {"0.2.5", "0.2", true}, {"1.0", "1.0", true}, {"1", "1.0", true},
		{"v1.0.1", "1.0", true}, {" 0.3 ", "0.3", true}, {"01.02", "1.2", true},
		{"latest", "latest", false}, {"", "", false}, {"1..0", "1..0", false}, {"1.0.0.0", "1.0.0.0", false},
		{"1.0-rc1", "1.0-rc1", false}, {"99999999999.0", "99999999999.0", false},
	}
	for _, tt := range tests {
		got, ok := NormalizeProtocolVersion(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NormalizeProtocolVersion(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestProtocolVersionsOrder(t *testing.T) {
	got := protocolVersions([]Interface{{ProtocolVersion: "0.3"}, {ProtocolVersion: "weird"}, {ProtocolVersion: "1.0"}, {ProtocolVersion: "0.10"}, {ProtocolVersion: "0.3"}, {ProtocolVersion: "0.2"}}, []string{"0.4"})
	want := []string{"1.0", "0.10", "0.3", "0.2", "weird"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func TestProtocolVersionsUnknown(t *testing.T) {
	if got := protocolVersions(nil, nil); len(got) != 1 || got[0] != VersionUnknown {
		t.Errorf("no declaration anywhere: got %q, want [%s]", got, VersionUnknown)
	}
	if got := protocolVersions(nil, []string{"0.3", "1.0"}); len(got) != 2 || got[0] != "1.0" || got[1] != "0.3" {
		t.Errorf("no interface, card-level declarations: got %q, want [1.0 0.3]", got)
	}
}
