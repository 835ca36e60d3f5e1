package ardentry

import (
	"regexp"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// ardURN is the conformance tool's identifier pattern (ard-spec
// conformance/bin/conformance-test).
var ardURN = regexp.MustCompile(`^urn:air:([a-zA-Z0-9.-]+)(?::([a-zA-Z0-9._:-]+))?:([a-zA-Z0-9._-]+)$`)

// TestURNRoundTrip: the identifier matches ARD's pattern and names the
// card URL back (card.URNOf and card's tests hold the scheme itself).
func TestURNRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		cardURL, want string
	}{
		{"https://Agents.Example.com/hub/a/.well-known/agent-card.json", "urn:air:agents.example.com:a2a:hub:a:.well-known:agent-card.json"},
		{"http://127.0.0.1:8080/.well-known/agent-card.json", "urn:air:127.0.0.1:a2a-http-p8080:.well-known:agent-card.json"},
		{"http://[::1]:8080/card.json", "urn:air:--1:a2a-http-p8080-h_5B_3A_3A1_5D:card.json"},
		{"not a url", ""},
	} {
		got := URN(tc.cardURL)
		if got != tc.want {
			t.Errorf("URN(%q) = %q, want %q", tc.cardURL, got, tc.want)
		}
		if got == "" {
			continue
		}
		if !ardURN.MatchString(got) {
			t.Errorf("URN %q does not match ARD's pattern", got)
		}
		canon, _ := card.CanonicalCardURL(tc.cardURL)
		if back, err := CardURLOf(got); err != nil || back != canon {
			t.Errorf("CardURLOf(%q) = %q, %v", got, back, err)
		}
		if back, err := CardURLOf(strings.Replace(got, "urn:air:", "urn:ai:", 1)); err != nil || back != canon {
			t.Errorf("CardURLOf(urn:ai: spelling of %q) = %q, %v", got, back, err)
		}
	}
}

func TestFromSummaryScalesScore(t *testing.T) {
	s := catalog.Summary{ID: "x1", CardURL: "https://a.example/card.json", Name: "A", Score: 2.5,
		Skills: []catalog.SkillSummary{{ID: "s", Name: "S", Tags: []string{"t", "u"}}, {ID: "r", Tags: []string{"t"}}}}
	e := FromSummary(s, 5)
	if e.Score != 50 || e.Identifier != "urn:air:a.example:a2a:card.json" || e.Type != TypeA2ACard || len(e.Skills) != 2 {
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
