package card

import (
	"errors"
	"testing"
)

func TestCanonicalCardURL(t *testing.T) {
	const want = "https://agents.example.com/hub/a/.well-known/agent-card.json"
	tests := []struct {
		in, want string
	}{
		{"https://agents.example.com/hub/a/.well-known/agent-card.json", want},
		{"HTTPS://Agents.Example.COM/hub/a/.well-known/agent-card.json", want},
		{"https://agents.example.com:443/hub/a/.well-known/agent-card.json", want},
		{"https://agents.example.com./hub/a/.well-known/agent-card.json", want},
		{"https://agents.example.com/hub/a/.well-known/agent-card.json?", want},
		{"https://agents.example.com/hub/a/.well-known/agent-card.json#top", want},
		{"https://agents.example.com/hub/a/.well-known/agent-card.json?#", want},
		{"https://agents.example.com/hub//a/.well-known//agent-card.json", want},
		{"https://agents.example.com/hub/a/.well-known/%61gent-card.json", want},
		{"https://agents.example.com/hub/a/.well-known/%61gent%2Dcard.json", want},
		{"https://agents.example.com/hub/./a/.well-known/agent-card.json", want},
		{"https://agents.example.com/hub/x/../a/.well-known/agent-card.json", want},
		{"https://agents.example.com/hub/%2e/a/.well-known/agent-card.json", want},
		{"  https://agents.example.com/hub/a/.well-known/agent-card.json\n", want},
		// A different path is a different agent.
		{"https://agents.example.com/hub/b/.well-known/agent-card.json", "https://agents.example.com/hub/b/.well-known/agent-card.json"},
		// Reserved escapes stay; their hex is upper-cased.
		{"https://a.example/x%2fy?q=%2f", "https://a.example/x%2Fy?q=%2F"},
		{"https://a.example/x?b=1&a=2", "https://a.example/x?b=1&a=2"},
		{"http://a.example:80/card.json", "http://a.example/card.json"},
		{"http://a.example:443/card.json", "http://a.example:443/card.json"},
		{"http://localhost:3000/agents/a", "http://localhost:3000/agents/a"},
		{"https://a.example", "https://a.example/"},
		{"https://a.example/..", "https://a.example/"},
		{"https://a.example/a/b/.", "https://a.example/a/b/"},
		// IDN: Unicode, percent-encoded UTF-8 and Punycode name one host.
		{"https://bücher.example/card.json", "https://xn--bcher-kva.example/card.json"},
		{"https://b%C3%BCcher.example/card.json", "https://xn--bcher-kva.example/card.json"},
		{"https://BÜCHER.example/card.json", "https://xn--bcher-kva.example/card.json"},
		{"https://xn--bcher-kva.example/card.json", "https://xn--bcher-kva.example/card.json"},
		// IP literals.
		{"http://[::ffff:127.0.0.1]:8080/card.json", "http://127.0.0.1:8080/card.json"},
		{"http://[::FFFF:7f00:1]:8080/card.json", "http://127.0.0.1:8080/card.json"},
		{"https://[2001:DB8::1]:443/card.json", "https://[2001:db8::1]/card.json"},
		{"https://[2001:db8:0:0:0:0:0:1]/card.json", "https://[2001:db8::1]/card.json"},
		{"http://my_agent.internal:8080/card.json", "http://my_agent.internal:8080/card.json"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := CanonicalCardURL(tt.in)
			if err != nil {
				t.Fatalf("CanonicalCardURL(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("CanonicalCardURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
			again, err := CanonicalCardURL(got)
			if err != nil || again != got {
				t.Errorf("not idempotent: %q → %q, %v", got, again, err)
			}
		})
	}
}

func TestCanonicalCardURLRefuses(t *testing.T) {
	for _, in := range []string{
		"", "ftp://a.example/card.json", "/relative/card.json", "a.example/card.json",
		"https:///nohost", "https://user:pw@a.example/card.json", "https://a.example:99999/",
		"https://a.example:0/", "mailto:x@a.example", "https://./card.json", "javascript:alert(1)",
	} {
		t.Run(in, func(t *testing.T) {
			got, err := CanonicalCardURL(in)
			if !errors.Is(err, ErrInvalidURL) {
				t.Errorf("CanonicalCardURL(%q) = %q, %v; want ErrInvalidURL", in, got, err)
			}
		})
	}
}

func TestCanonicalOrigin(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://Agents.Example.com:443/a2a/v1?x#y", "https://agents.example.com"},
		{"https://user:pw@a.example/x", "https://a.example"},
		{"http://a.example:8080", "http://a.example:8080"},
		{"https://bücher.example./keys.json", "https://xn--bcher-kva.example"},
		{"https://[::ffff:10.0.0.5]:8443/", "https://10.0.0.5:8443"},
		{"https://[2001:db8::1]/", "https://[2001:db8::1]"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := CanonicalOrigin(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("CanonicalOrigin(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
	if _, err := CanonicalOrigin("urn:a2a-registry:import:00"); !errors.Is(err, ErrInvalidURL) {
		t.Errorf("CanonicalOrigin(urn) error = %v, want ErrInvalidURL", err)
	}
}
