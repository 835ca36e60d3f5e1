// Package ardentry maps an agent of the catalog onto an entry of ARD
// (Agentic Resource Discovery v0.91, ards-project/ard-spec): a `urn:air:`
// identifier, a display name, the card's URL and a relevance score. It is
// the application layer's one mapping, for every door that answers in ARD
// shapes (the ARD door, the registry as an A2A agent), so that an agent
// has the same identifier whichever way it is found.
package ardentry

import (
	"math"
	"net/url"
	"strings"

	"github.com/a2aregistry/registry/internal/catalog"
)

// TypeA2ACard is the entry type of an A2A agent card (ARD §3).
const TypeA2ACard = "application/a2a-agent-card+json"

// urnPrefix is the scheme ARD identifiers use; about one entry in ten in
// public registries writes `urn:ai:` instead (ard-spec #88), which ParseURN
// accepts and URN never writes.
const (
	urnPrefix       = "urn:air:"
	legacyURNPrefix = "urn:ai:"
)

// URN is the ARD identifier of the agent with registry id and card URL
// cardURL: urn:air:<publisher>:<id>, the publisher being the card's host
// (an FQDN, as ARD §4.2 asks) and the name the registry's own id, which is
// unique where a name or a path is not (hubs serve many agents from one
// host). A card with no host ARD can name (imported from a file, an IPv6
// literal: ARD's publisher is [a-zA-Z0-9.-]+) is published by
// NoPublisher. It is "" only without an id.
func URN(id, cardURL string) string {
	if id == "" {
		return ""
	}
	return urnPrefix + publisher(cardURL) + ":" + id
}

// NoPublisher stands for the publisher of a card whose URL names no
// domain: .invalid is reserved never to resolve (RFC 2606 §2), so it
// claims no one's name.
const NoPublisher = "registry.invalid"

func publisher(cardURL string) string {
	u, err := url.Parse(cardURL)
	if err != nil || u.Hostname() == "" {
		return NoPublisher
	}
	host := strings.ToLower(u.Hostname())
	for _, r := range host {
		if !(r == '.' || r == '-' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return NoPublisher
		}
	}
	return host
}

// ParseURN returns the registry id and the publisher a URN made by URN
// names; ok is false for anything else.
func ParseURN(s string) (publisher, id string, ok bool) {
	rest, found := strings.CutPrefix(s, urnPrefix)
	if !found {
		if rest, found = strings.CutPrefix(s, legacyURNPrefix); !found {
			return "", "", false
		}
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 || i == len(rest)-1 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// Skill is a skill of an entry.
type Skill struct {
	ID   string
	Name string
	Tags []string
}

// Entry is an agent as ARD lists it, as the application layer holds it;
// each door owns its wire shape.
type Entry struct {
	Identifier  string
	DisplayName string
	Type        string
	URL         string
	Description string
	Tags        []string
	Skills      []Skill
	// Score is the relevance from 0 to 100 (ARD §6.1: relevance, never
	// trust); 0 when the search had no text.
	Score int
	// ID is the registry's own id of the agent.
	ID string
}

// FromSummary maps a search result onto an entry. top is the best score of
// the result set: ARD scores are integers from 0 to 100, so the catalog's
// unbounded text relevance is scaled by the best one.
func FromSummary(s catalog.Summary, top float64) Entry {
	e := Entry{
		Identifier:  URN(s.ID, s.CardURL),
		DisplayName: s.Name,
		Type:        TypeA2ACard,
		URL:         s.CardURL,
		Description: s.Description,
		ID:          s.ID,
		Score:       Score(s.Score, top),
	}
	seen := map[string]bool{}
	for _, sk := range s.Skills {
		e.Skills = append(e.Skills, Skill{ID: sk.ID, Name: sk.Name, Tags: sk.Tags})
		for _, t := range sk.Tags {
			if !seen[t] {
				seen[t] = true
				e.Tags = append(e.Tags, t)
			}
		}
	}
	return e
}

// Score scales a relevance score by the best of its result set to an
// integer from 0 to 100.
func Score(score, top float64) int {
	if top <= 0 || score <= 0 {
		return 0
	}
	return int(math.Round(min(score/top, 1) * 100))
}
