package examples

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
)

// TestCardsParseClean keeps the examples honest: each must parse with no
// error-severity finding, and together they must show every card shape.
func TestCardsParseClean(t *testing.T) {
	names, err := fs.Glob(Cards, "cards/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 6 {
		t.Fatalf("%d example cards, want at least 6", len(names))
	}
	shapes := map[card.Shape]int{}
	schemeTypes := map[string]bool{}
	for _, name := range names {
		raw, err := fs.ReadFile(Cards, name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := card.Parse(raw, card.DefaultLimits())
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		shapes[c.Shape]++
		for _, f := range c.Findings {
			if f.Severity == card.SeverityError || f.Severity == card.SeverityWarning {
				t.Errorf("%s: %s %s at %s: %s", name, f.Severity, f.Code, f.Path, f.Message)
			}
		}
		for _, i := range c.Interfaces {
			if !strings.HasPrefix(i.URL, "https://") {
				t.Errorf("%s: interface %s is not https", name, i.URL)
			}
		}
		for _, s := range c.SecuritySchemes {
			schemeTypes[s.Type] = true
		}
		if c.Provider == nil || len(c.Skills) == 0 || len(c.Skills[0].Examples) == 0 && len(c.Skills) < 2 {
			t.Errorf("%s: example lacks provider or skills", name)
		}
	}
	for shape, min := range map[card.Shape]int{card.ShapeV02: 1, card.ShapeV03: 2, card.ShapeV10: 2, card.ShapeMixed: 1} {
		if shapes[shape] < min {
			t.Errorf("%d cards of shape %s, want at least %d", shapes[shape], shape, min)
		}
	}
	for _, typ := range []string{card.SchemeOAuth2, card.SchemeAPIKey, card.SchemeOpenIDConnect, card.SchemeHTTP} {
		if !schemeTypes[typ] {
			t.Errorf("no example uses a %s scheme", typ)
		}
	}
}

// TestCardsNameNoRealHost: a first start imports these cards, and the
// verifier fetches what they name (OpenID discovery, probes). Every host
// they name is under a top-level name reserved by RFC 2606 and RFC 6761,
// which the registry never looks up, so a newcomer's first start asks no
// resolver about anyone's real domain.
func TestCardsNameNoRealHost(t *testing.T) {
	reservedTLD := map[string]bool{"example": true, "test": true, "invalid": true, "localhost": true}
	// A host name written in prose ("a token from shop.com"), with a
	// delegated top-level name.
	prose := regexp.MustCompile(`\b[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|net|org|dev|io|ai|app)\b`)
	names, err := fs.Glob(Cards, "cards/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		raw, err := fs.ReadFile(Cards, name)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					walk(path+"."+k, x)
				}
			case []any:
				for i, x := range v {
					walk(fmt.Sprintf("%s[%d]", path, i), x)
				}
			case string:
				if u, err := url.Parse(v); err == nil && u.Hostname() != "" {
					labels := strings.Split(strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), ".")
					if !reservedTLD[labels[len(labels)-1]] {
						t.Errorf("%s %s: host %s is not under a reserved top-level name", name, path, u.Hostname())
					}
				}
				if m := prose.FindString(strings.ToLower(v)); m != "" {
					t.Errorf("%s %s: names %s", name, path, m)
				}
			}
		}
		walk("$", doc)
	}
}
