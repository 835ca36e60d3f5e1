package verify

import (
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// TestOriginSpellings: the card origin, a jku and a trust-store scope
// compare equal whatever spelling of one host each uses.
func TestOriginSpellings(t *testing.T) {
	tests := []struct {
		pinned, cardURL string
		want            bool
	}{
		{"https://bücher.example", "https://xn--bcher-kva.example/.well-known/agent-card.json", true},
		{"https://xn--bcher-kva.example", "https://b%C3%BCcher.example/card.json", true},
		{"https://Agents.Example.com:443", "https://agents.example.com./hub/a/card.json", true},
		{"https://10.0.0.5:8443", "https://[::ffff:10.0.0.5]:8443/card.json", true},
		{"https://agents.example.com", "https://agents.example.com:8443/card.json", false},
		{"https://agents.example.com", "http://agents.example.com/card.json", false},
		{"https://other.example", "https://agents.example.com/card.json", false},
	}
	for _, tt := range tests {
		t.Run(tt.pinned+" "+tt.cardURL, func(t *testing.T) {
			k := PinnedKey{Origins: []string{tt.pinned}}
			if got := k.appliesTo([]string{origin(tt.cardURL)}); got != tt.want {
				t.Errorf("appliesTo = %v, want %v (card origin %q)", got, tt.want, origin(tt.cardURL))
			}
		})
	}
}

// TestProbeUnknownVersion: an interface whose version the card never
// declared is not probed in a guessed wire format.
func TestProbeUnknownVersion(t *testing.T) {
	v := New(Options{Client: safehttp.New(safehttp.Config{})})
	p := v.ProbeInterface(t.Context(), card.Interface{URL: "http://127.0.0.1:1/a2a", Binding: card.BindingJSONRPC, ProtocolVersion: card.VersionUnknown})
	if p.Status != ProbeSkipped {
		t.Errorf("status %s (%s), want %s", p.Status, p.Problem, ProbeSkipped)
	}
}
