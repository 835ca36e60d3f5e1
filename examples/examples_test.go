package examples

import (
	"io/fs"
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
