package contentscan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/a2aregistry/registry/internal/card"
)

// Key kinds: a name is compared with names, a provider with providers.
const (
	keyName     = "name:"
	keyProvider = "provider:"
	// maxKeyLen skips keys too long to be worth an index entry; real
	// names and providers are far shorter.
	maxKeyLen = 256
)

// Key is one confusable key of a card, to be stored so other cards can
// be compared with it.
type Key struct {
	// Key is the kind and the NameKey ("name:paypal agent").
	Key string
	// Text is the name or provider as written.
	Text string
}

// Keys are the keys of c's name and provider; none for empty ones.
func Keys(c *card.Card) []Key {
	var out []Key
	add := func(kind, text string) {
		if k := NameKey(text); k != "" && len(k) <= maxKeyLen {
			out = append(out, Key{Key: kind + k, Text: text})
		}
	}
	add(keyName, c.Name)
	if c.Provider != nil {
		add(keyProvider, c.Provider.Organization)
	}
	return out
}

// Match is a catalogued agent holding a key.
type Match struct {
	Key     string
	AgentID string
	CardURL string
	// Text is the other agent's name or provider as written.
	Text string
}

// Names finds catalogued agents by key: an index lookup, never a scan of
// every agent.
type Names interface {
	AgentsByNameKey(ctx context.Context, keys []string) ([]Match, error)
}

// maxRelated caps the agents one finding names.
const maxRelated = 5

// confusableFindings compares c's name and provider with the catalogued
// agents'. Agents on one of the card's own origins are not compared: they
// are its operator's (including the agent's own stored versions). The same
// name from another origin is flagged, since a reader choosing by name
// cannot tell the two apart; the same provider is not (one organisation
// runs agents on many hosts), only a confusable but different one.
func confusableFindings(ctx context.Context, names Names, c *card.Card, origins []string) ([]Finding, error) {
	keys := Keys(c)
	if len(keys) == 0 {
		return nil, nil
	}
	list := make([]string, len(keys))
	for i, k := range keys {
		list[i] = k.Key
	}
	matches, err := names.AgentsByNameKey(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("looking up confusable names: %w", err)
	}
	own := make(map[string]bool, len(origins))
	for _, o := range origins {
		own[originOf(o)] = true
	}
	var out []Finding
	for _, k := range keys {
		provider := strings.HasPrefix(k.Key, keyProvider)
		var related []Related
		same := true
		for _, m := range matches {
			if m.Key != k.Key || own[originOf(m.CardURL)] || slices.ContainsFunc(related, func(r Related) bool { return r.AgentID == m.AgentID }) {
				continue
			}
			identical := norm.NFC.String(m.Text) == norm.NFC.String(k.Text)
			if provider && identical {
				continue
			}
			same = same && identical
			if len(related) < maxRelated {
				related = append(related, Related{AgentID: m.AgentID, Text: Visible(m.Text)})
			}
		}
		if len(related) == 0 {
			continue
		}
		var f Finding
		switch {
		case provider:
			f = newFinding(CodeConfusableProvider, card.SeverityWarning, "$.provider.organization", Visible(k.Text),
				"the provider %q looks like the provider of another catalogued agent from a different origin", Visible(k.Text))
		case same:
			f = newFinding(CodeConfusableName, card.SeverityWarning, "$.name", Visible(k.Text),
				"another catalogued agent from a different origin has the same name %q", Visible(k.Text))
		default:
			f = newFinding(CodeConfusableName, card.SeverityWarning, "$.name", Visible(k.Text),
				"the name %q looks like the name of another catalogued agent from a different origin", Visible(k.Text))
		}
		f.Related = related
		out = append(out, f)
	}
	return out, nil
}

// originOf is the canonical origin of raw (card.CanonicalOrigin); "" when
// raw has none.
func originOf(raw string) string {
	o, err := card.CanonicalOrigin(raw)
	if err != nil {
		return ""
	}
	return o
}
