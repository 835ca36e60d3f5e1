package card

import (
	"errors"
	"testing"
)

func TestURNRoundTrip(t *testing.T) {
	cases := []struct{ url, urn string }{
		{"https://example.com/.well-known/agent-card.json", "urn:air:example.com:a2a:.well-known:agent-card.json"},
		{"https://example.com/", "urn:air:example.com:a2a:_"},
		{"https://example.com", "urn:air:example.com:a2a:_"},
		{"http://127.0.0.1:8080/a2a/card?v=2", "urn:air:127.0.0.1:a2a-http-p8080:a2a:card:_3Fv_3D2"},
		{"https://example.com:8443/agents/", "urn:air:example.com:a2a-p8443:agents:_"},
		{"https://example.com/a_b/C%20d", "urn:air:example.com:a2a:a_5Fb:C_2520d"},
		{"https://my_agent.internal/card", "urn:air:my-agent.internal:a2a-hmy_5Fagent.internal:card"},
		{"http://[2001:db8::1]:9000/x", "urn:air:2001-db8--1:a2a-http-p9000-h_5B2001_3Adb8_3A_3A1_5D:x"},
		{"https://Bücher.example/x", "urn:air:xn--bcher-kva.example:a2a:x"},
		{"urn:a2a-registry:import:9f86d0", "urn:air:a2a-registry.invalid:a2a-urn:import:9f86d0"},
	}
	for _, c := range cases {
		got, err := URNOf(c.url)
		if err != nil || got != c.urn {
			t.Errorf("URNOf(%q) = %q, %v; want %q", c.url, got, err, c.urn)
			continue
		}
		if !URNPattern.MatchString(got) {
			t.Errorf("URNOf(%q) = %q does not match the ARD pattern", c.url, got)
		}
		canon, err := CanonicalCardURL(c.url)
		if err != nil {
			canon = c.url // a card URN is its own canonical form
		}
		back, err := CardURLOfURN(got)
		if err != nil || back != canon {
			t.Errorf("CardURLOfURN(%q) = %q, %v; want %q", got, back, err, canon)
		}
	}
}

// Two agents on one host, differing only by scheme, port, path or query,
// never share an identifier.
func TestURNDistinct(t *testing.T) {
	urls := []string{
		"https://h.example/a", "http://h.example/a", "https://h.example:8443/a", "https://h.example/a/",
		"https://h.example/a?x=1", "https://h.example/A", "https://h.example/a_", "https://h.example/a%5F",
		"https://h.example/_", "https://h.example//", "https://h.example/a/b", "https://h.example/a:b",
	}
	seen := map[string]string{}
	for _, u := range urls {
		urn, err := URNOf(u)
		if err != nil {
			t.Fatal(err)
		}
		canon, _ := CanonicalCardURL(u)
		if prev, ok := seen[urn]; ok && prev != canon {
			t.Errorf("%q and %q share %q", prev, canon, urn)
		}
		seen[urn] = canon
	}
}

func TestCardURLOfURNRefuses(t *testing.T) {
	cases := []struct {
		id   string
		want error
	}{
		{"urn:air:example.com", ErrMalformedURN},
		{"urn:air:exa mple.com:a2a:x", ErrMalformedURN},
		{"not-a-urn", ErrMalformedURN},
		{"urn:air:example.com:agent:assistant", ErrNotAgentURN},
		{"urn:air:example.com:a2a-p0:x", ErrNotAgentURN},
		{"urn:air:example.com:a2a-p443:x", ErrNotAgentURN}, // not canonical: default port
		{"urn:air:example.com:a2a:x_2", ErrNotAgentURN},
		{"urn:air:example.com:a2a:x_zz", ErrNotAgentURN},
		{"urn:air:example.com:a2a:_41", ErrNotAgentURN}, // "A" escaped: not canonical
		{"urn:air:a2a-registry:a2a-urn:import:x", ErrNotAgentURN},
	}
	for _, c := range cases {
		if _, err := CardURLOfURN(c.id); !errors.Is(err, c.want) {
			t.Errorf("CardURLOfURN(%q) = %v; want %v", c.id, err, c.want)
		}
	}
	// urn:ai: and upper-case scheme are spellings of urn:air: (ard-spec #88).
	for _, id := range []string{"urn:ai:example.com:a2a:x", "URN:AIR:example.com:a2a:x"} {
		if u, err := CardURLOfURN(id); err != nil || u != "https://example.com/x" {
			t.Errorf("CardURLOfURN(%q) = %q, %v", id, u, err)
		}
	}
}

func FuzzURN(f *testing.F) {
	f.Add("https://example.com/a/b?c=d")
	f.Add("http://[::1]:80/")
	f.Fuzz(func(t *testing.T, raw string) {
		urn, err := URNOf(raw)
		if err != nil {
			return
		}
		if !URNPattern.MatchString(urn) {
			t.Fatalf("URNOf(%q) = %q: not an ARD identifier", raw, urn)
		}
		canon, err := CanonicalCardURL(raw)
		if err != nil {
			canon = raw
		}
		if back, err := CardURLOfURN(urn); err != nil || back != canon {
			t.Fatalf("CardURLOfURN(URNOf(%q)) = %q, %v; want %q", raw, back, err, canon)
		}
	})
}
