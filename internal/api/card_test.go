package api

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/synth"
)

// TestCardWireShapeUnchanged holds newCard's encoding byte for byte to what
// the API wrote before it had its own card type: card.Card's own encoding
// with the required arrays made non-null (legacyCardJSON). Clients see no
// change; the document's Card schema is checked by TestSchemasMatchTypes.
func TestCardWireShapeUnchanged(t *testing.T) {
	cards := []*card.Card{fullCard(), {Name: "bare"}}
	files, err := filepath.Glob("../../examples/cards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example cards: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := card.Parse(raw, card.DefaultLimits())
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cards = append(cards, c)
	}
	gen := synth.New(3)
	for i := range 200 {
		c, err := card.Parse(gen.Card(i), card.DefaultLimits())
		if err != nil {
			t.Fatalf("synthetic card %d: %v", i, err)
		}
		cards = append(cards, c)
	}
	for i, c := range cards {
		got, err := json.Marshal(newCard(c))
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(legacyCardJSON(c))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("card %d (%s):\n got %s\nwant %s", i, c.Name, got, want)
		}
	}
}

// legacyCardJSON is how the API encoded a card before: a copy of c with
// the required arrays non-null, encoded by card.Card's own tags.
func legacyCardJSON(c *card.Card) *card.Card {
	out := *c
	out.ProtocolVersions = nonNil(c.ProtocolVersions)
	out.Interfaces = nonNil(c.Interfaces)
	out.SecuritySchemes = nonNil(c.SecuritySchemes)
	out.SecurityRequirements = legacyRequirements(c.SecurityRequirements)
	out.DefaultInputModes = nonNil(c.DefaultInputModes)
	out.DefaultOutputModes = nonNil(c.DefaultOutputModes)
	out.Findings = nonNil(c.Findings)
	out.Skills = make([]card.Skill, len(c.Skills))
	for i, sk := range c.Skills {
		sk.Tags = nonNil(sk.Tags)
		sk.InputModes = nonNil(sk.InputModes)
		sk.OutputModes = nonNil(sk.OutputModes)
		sk.SecurityRequirements = legacyRequirements(sk.SecurityRequirements)
		out.Skills[i] = sk
	}
	return &out
}

func legacyRequirements(reqs []card.Requirement) []card.Requirement {
	out := make([]card.Requirement, len(reqs))
	for i, r := range reqs {
		refs := make(card.Requirement, len(r))
		for j, ref := range r {
			ref.Scopes = nonNil(ref.Scopes)
			refs[j] = ref
		}
		out[i] = refs
	}
	return out
}
