package ardentry

import (
	"regexp"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
)

// ardURN is the conformance tool's identifier pattern (ard-spec
// conformance/bin/conformance-test).
var ardURN = regexp.MustCompile(`^urn:air:([a-zA-Z0-9.-]+)(?::([a-zA-Z0-9._:-]+))?:([a-zA-Z0-9._-]+)$`)

func TestURNRoundTrip(t *testing.T) {
	const id = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	for _, tc := range []struct {
		cardURL, want string
	}{
		{"https://Agents.Example.com/hub/a/.well-known/agent-card.json", "urn:air:agents.example.com:" + id},
		{"http://127.0.0.1:8080/.well-known/agent-card.json", "urn:air:127.0.0.1:" + id},
		{"http://[::1]:8080/card.json", "urn:air:registry.invalid:" + id},
		{"urn:a2a-registry:import:abc", "urn:air:registry.invalid:" + id},
	} {
		got := URN(id, tc.cardURL)
		if got != tc.want {
			t.Errorf("URN(%q) = %q, want %q", tc.cardURL, got, tc.want)
		}
		if got == "" {
			continue
		}
		if !ardURN.MatchString(got) {
			t.Errorf("URN %q does not match ARD's pattern", got)
		}
		if _, back, ok := ParseURN(got); !ok || back != id {
			t.Errorf("ParseURN(%q) = %q, %v", got, back, ok)
		}
	}
}

func TestParseURN(t *testing.T) {
	for _, tc := range []struct {
		in, pub, id string
		ok          bool
	}{
		{"urn:air:example.com:abc", "example.com", "abc", true},
		{"urn:ai:example.com:abc", "example.com", "abc", true},
		{"urn:air:example.com:ns:abc", "example.com:ns", "abc", true},
		{"urn:air:abc", "", "", false},
		{"urn:air:example.com:", "", "", false},
		{"https://example.com", "", "", false},
	} {
		pub, id, ok := ParseURN(tc.in)
		if pub != tc.pub || id != tc.id || ok != tc.ok {
			t.Errorf("ParseURN(%q) = %q, %q, %v; want %q, %q, %v", tc.in, pub, id, ok, tc.pub, tc.id, tc.ok)
		}
	}
}

func TestFromSummaryScalesScore(t *testing.T) {
	s := catalog.Summary{ID: "x1", CardURL: "https://a.example/card.json", Name: "A", Score: 2.5,
		Skills: []catalog.SkillSummary{{ID: "s", Name: "S", Tags: []string{"t", "u"}}, {ID: "r", Tags: []string{"t"}}}}
	e := FromSummary(s, 5)
	if e.Score != 50 || e.Identifier != "urn:air:a.example:x1" || e.Type != TypeA2ACard || len(e.Skills) != 2 {
		t.Errorf("entry = %+v", e)
	}
	if len(e.Tags) != 2 {
		t.Errorf("tags = %v, want t and u once each", e.Tags)
	}
	for _, tc := range []struct {
		score, top float64
		want       int
	}{{0, 0, 0}, {1, 0, 0}, {3, 3, 100}, {1, 3, 33}, {4, 3, 100}} {
		if got := Score(tc.score, tc.top); got != tc.want {
			t.Errorf("Score(%v, %v) = %d, want %d", tc.score, tc.top, got, tc.want)
		}
	}
}
