package sources

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aregistry/registry/internal/card"
)

// An ARD entry may give its card inline (data) instead of by URL
// (spec/ard.md §4.2). The registry catalogues a card from the URL that
// serves it: the crawler keeps it fresh from there, an agent's identity
// is its card URL, and a signature's key is trusted by the card's origin
// (verification.md). Inline bytes have none of these, and a manifest
// could inline any card under any name. So an inline card is read as a
// pointer, never stored: when one of its interfaces is on the manifest's
// own origin, the publisher serves that agent's card at the origin's
// well-known path, which is fetched and verified as a url entry's card
// is, and catalogued only when it is the same agent (one of its
// interfaces is one of the inline card's). Otherwise the entry is
// skipped, saying which.

// Reasons an inline card is skipped.
const (
	// ReasonInlineCard: the inline card's agent is served from another
	// origin than the manifest's (or it is no card).
	ReasonInlineCard = "inline_card"
	// ReasonInlineMismatch: the manifest's origin serves another agent's
	// card than the inline one.
	ReasonInlineMismatch = "inline_card_mismatch"
)

// errInlineMismatch is the registration error of an inline card whose
// origin serves another agent.
var errInlineMismatch = errors.New("the card its origin serves is another agent")

// inlineTarget reads an inline card listed by the manifest at
// manifestURL: the input to register (the manifest's origin) and the
// check of the card fetched there, or why it is skipped.
func inlineTarget(manifestURL string, data json.RawMessage) (input string, expect func(*card.Card) error, reason, message string) {
	if len(data) == 0 || string(data) == "null" {
		return "", nil, ReasonInvalidEntry, "an A2A entry with neither a url nor an inline card (data)"
	}
	inline, err := card.Parse(data, card.DefaultLimits())
	if err != nil {
		return "", nil, ReasonInlineCard, "the inline card (data) is not an agent card: " + err.Error()
	}
	origin, err := card.CanonicalOrigin(manifestURL)
	if err != nil {
		return "", nil, ReasonInlineCard, "the manifest's origin is not an http(s) origin"
	}
	var own []string
	for _, in := range inline.Interfaces {
		if o, err := card.CanonicalOrigin(in.URL); err == nil && o == origin {
			own = append(own, interfaceKey(in.URL))
		}
	}
	if len(own) == 0 {
		return "", nil, ReasonInlineCard, fmt.Sprintf("an inline card (data) of an agent not served from the manifest's origin %s: "+
			"the registry catalogues a card from the URL that serves it, and reads an inline card's from the manifest's own origin only", origin)
	}
	expect = func(c *card.Card) error {
		for _, in := range c.Interfaces {
			if slices.Contains(own, interfaceKey(in.URL)) {
				return nil
			}
		}
		return errInlineMismatch
	}
	return origin, expect, "", ""
}

// interfaceKey compares interface URLs as the same endpoint: scheme and
// host ignoring case, without a trailing slash.
func interfaceKey(u string) string {
	if canon, err := card.CanonicalCardURL(u); err == nil {
		u = canon
	}
	return strings.TrimSuffix(u, "/")
}
