package card

import (
	"errors"
	"testing"
)

func TestPublisherOfCard(t *testing.T) {
	tests := []struct {
		url, want string
	}{
		{"https://agents.acme.co.uk/.well-known/agent-card.json", "acme.co.uk"},
		{"https://a.b.acme.co.uk:8443/card", "acme.co.uk"},
		{"https://acme.co.uk/card", "acme.co.uk"},
		{"https://co.uk/card", "co.uk"},
		{"https://alice.github.io/agent.json", "alice.github.io"},
		{"https://ACME.Example.COM./x", "example.com"},
		{"https://shop.bücher.de/card", "xn--bcher-kva.de"},
		{"https://shop.xn--bcher-kva.de/card", "xn--bcher-kva.de"},
		{"https://acme.公司.cn/card", "acme.xn--55qx5d.cn"},
		{"http://192.0.2.7:8080/card", "192.0.2.7"},
		{"https://[2001:db8::1]/card", "2001:db8::1"},
		{"https://[::ffff:192.0.2.7]/card", "192.0.2.7"},
		{"http://localhost:9999/card", "localhost"},
		{"http://agent.localhost/card", "localhost"},
		{"http://intranet-agent/card", "intranet-agent"},
		{"https://agents.corp.internal/card", "corp.internal"},
	}
	for _, tt := range tests {
		got, err := PublisherOfCard(tt.url)
		if err != nil || got != tt.want {
			t.Errorf("PublisherOfCard(%q) = %q, %v; want %q", tt.url, got, err, tt.want)
		}
	}
	for _, bad := range []string{"urn:a2a-registry:import:9f86", "ftp://acme.co.uk/card", "https:///card"} {
		if got, err := PublisherOfCard(bad); !errors.Is(err, ErrInvalidURL) {
			t.Errorf("PublisherOfCard(%q) = %q, %v; want ErrInvalidURL", bad, got, err)
		}
	}
}

func TestNormalizePublisher(t *testing.T) {
	tests := []struct{ in, want string }{
		{"acme.co.uk", "acme.co.uk"},
		{" ACME.co.uk. ", "acme.co.uk"},
		{"agents.acme.co.uk", "acme.co.uk"},
		{"bücher.de", "xn--bcher-kva.de"},
		{"[2001:db8::1]", "2001:db8::1"},
		{"2001:db8::1", "2001:db8::1"},
		{"192.0.2.7", "192.0.2.7"},
		{"", ""},
		{"acme.co.uk/path", ""},
		{"user@acme.co.uk", ""},
	}
	for _, tt := range tests {
		if got := NormalizePublisher(tt.in); got != tt.want {
			t.Errorf("NormalizePublisher(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
