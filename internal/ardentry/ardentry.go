// Package ardentry maps an agent of the catalog onto an entry of ARD
// (Agentic Resource Discovery v0.91, ards-project/ard-spec): a `urn:air:`
// identifier, a display name, the card's URL and a relevance score. It is
// the application layer's one mapping, for every door that answers in ARD
// shapes (the ARD door, the registry as an A2A agent), so that an agent
// has the same identifier whichever way it is found.
package ardentry

import (
	"math"
	"slices"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// TypeA2ACard is the entry type of an A2A agent card (ARD §3).
const TypeA2ACard = "application/a2a-agent-card+json"

// URN is the ARD identifier of the agent whose card URL is cardURL
// (card.URNOf: derived from the canonical card URL alone and read back
// from it, so that two registries name one card alike; docs/api.md
// describes the scheme). It is "" for a card URL the registry could not
// have stored.
func URN(cardURL string) string {
	u, err := card.URNOf(cardURL)
	if err != nil {
		return ""
	}
	return u
}

// CardURLOf is the card URL an identifier made by URN names (urn:ai:, a
// spelling about one entry in ten uses, ard-spec #88, is accepted). Errors
// wrap card.ErrMalformedURN for what is not an ARD identifier at all, and
// card.ErrNotAgentURN for one this registry does not make.
func CardURLOf(urn string) (string, error) {
	return card.CardURLOfURN(urn)
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
	// Version is the card's version; UpdatedAt when the registry last
	// changed the agent.
	Version   string
	UpdatedAt time.Time
	// Capabilities are the skill ids (ARD's capabilities).
	Capabilities []string
	// RepresentativeQueries are the card's skill examples, 2 to 5, or
	// none (WithExamples).
	RepresentativeQueries []string
	// Facts are the registry's own facts about the agent, by the catalog
	// filter field each can be filtered by (ARD metadata.<field>).
	Facts Facts
	// Trust is what the registry verified, nil when nothing.
	Trust *Trust
}

// Facts are the registry's facts about an agent.
type Facts struct {
	Provider                   string
	ProtocolVersions, Bindings []string
	SecuritySchemes            []string
	InputModes, OutputModes    []string
	Signature, SignatureTrust  string
	Health, Listing            string
	// Provenance are the kinds and relations that vouch for the agent
	// (catalog.FieldProvenance): a registry federating from this one
	// skips an agent whose only one is federatedFrom.
	Provenance []string
}

// FromSummary maps a search result onto an entry. top is the best score of
// the result set: ARD scores are integers from 0 to 100, so the catalog's
// unbounded text relevance is scaled by the best one.
func FromSummary(s catalog.Summary, top float64) Entry {
	e := Entry{
		Identifier:  URN(s.CardURL),
		DisplayName: s.Name,
		Type:        TypeA2ACard,
		URL:         s.CardURL,
		Description: s.Description,
		ID:          s.ID,
		Score:       Score(s.Score, top),
		Version:     s.Version,
		UpdatedAt:   s.UpdatedAt,
		Facts: Facts{Provider: s.Provider, ProtocolVersions: s.ProtocolVersions, Bindings: s.Bindings,
			SecuritySchemes: s.SecuritySchemes, InputModes: s.InputModes, OutputModes: s.OutputModes,
			Signature: s.SignatureStatus, SignatureTrust: s.SignatureTrust, Health: s.Health, Listing: s.Listing,
			Provenance: s.Provenance},
		Trust: trustOf(s),
	}
	if e.DisplayName == "" {
		// A nameless card is refused at parse time; this only keeps the
		// required member filled.
		e.DisplayName = e.Identifier
	}
	seen := map[string]bool{}
	for _, sk := range s.Skills {
		e.Skills = append(e.Skills, Skill{ID: sk.ID, Name: sk.Name, Tags: sk.Tags})
		if sk.ID != "" && !slices.Contains(e.Capabilities, sk.ID) {
			e.Capabilities = append(e.Capabilities, sk.ID)
		}
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
