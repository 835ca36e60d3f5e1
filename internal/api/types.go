package api

import (
	"encoding/json"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// The public JSON shapes of the API. openapi.json describes each of them;
// the conformance test fails when the two drift apart.

// SearchResponse is the body of GET /agents.
type SearchResponse struct {
	Items []catalog.Summary `json:"items"`
	// NextCursor is null on the last page.
	NextCursor *string `json:"next_cursor"`
	Total      int     `json:"total"`
	// Facets has one key per filter field, always present, highest count first.
	Facets map[string][]catalog.FacetCount `json:"facets"`
}

// AgentDetail is the body of GET /agents/{id} and of POST /agents.
type AgentDetail struct {
	ID             string     `json:"id"`
	CardURL        string     `json:"card_url"`
	Signature      string     `json:"signature"`
	Health         string     `json:"health"`
	CurrentVersion int        `json:"current_version"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	FetchedAt      time.Time  `json:"fetched_at"`
	Card           *card.Card `json:"card"`
	// Findings repeats card.findings so clients listing problems need not
	// walk the card.
	Findings []card.Finding `json:"findings"`
	Versions VersionsInfo   `json:"versions"`
	// HealthReport tells when the card was last checked, how that went and
	// when the next check is due; its state equals Health.
	HealthReport catalog.HealthReport `json:"health_report"`
	// Verification is the verifier's report on the current version
	// (verify.Report as JSON); null until the version has been verified.
	// Its signatures.status equals Signature then.
	Verification json.RawMessage `json:"verification"`
	// Check is the latest declared-vs-working check (POST
	// /agents/{id}/checks), absent until a tester ran one.
	Check *CheckResponse `json:"check,omitempty"`
}

// VersionsInfo summarizes an agent's stored card versions.
type VersionsInfo struct {
	Count int `json:"count"`
	// Latest is the newest stored version; null only when the agent has
	// none, which the catalog never allows.
	Latest *catalog.VersionSummary `json:"latest"`
}

// VersionList is the body of GET /agents/{id}/versions.
type VersionList struct {
	Items []catalog.VersionSummary `json:"items"`
}

// ChangeList is the body of GET /changes.
type ChangeList struct {
	// Items are in commit order, oldest first.
	Items []catalog.Change `json:"items"`
	// NextSince is the seq of the last item, or the request's since when
	// there is none: the since of the next poll.
	NextSince int64 `json:"next_since"`
}

// RegisterRequest is the body of POST /agents.
type RegisterRequest struct {
	// URL is the agent's card URL or its base URL; the registrar tries
	// the well-known paths under a base URL.
	URL string `json:"url"`
}

// ErrorResponse is the body of every error answer.
type ErrorResponse struct {
	Error Error `json:"error"`
}

// Error describes what went wrong. Code is stable (see the Code*
// constants); Message is for humans and may change. The other fields are
// set only for the codes that document them.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Parameter names the offending query parameter or body field.
	Parameter string `json:"parameter,omitempty"`
	// Class, HTTPStatus and URL explain fetch_failed and blocked_address.
	Class      string `json:"class,omitempty"`
	HTTPStatus int    `json:"http_status,omitempty"`
	URL        string `json:"url,omitempty"`
	// ParseCode and Path explain invalid_card: the card package's error
	// code and the JSON path it points at.
	ParseCode string `json:"parse_code,omitempty"`
	Path      string `json:"path,omitempty"`
}

func newSearchResponse(p catalog.Page) SearchResponse {
	r := SearchResponse{
		Items:  make([]catalog.Summary, 0, len(p.Items)),
		Total:  p.Total,
		Facets: make(map[string][]catalog.FacetCount, len(catalog.FilterFields)),
	}
	for _, s := range p.Items {
		r.Items = append(r.Items, summaryForJSON(s))
	}
	if p.NextCursor != "" {
		next := p.NextCursor
		r.NextCursor = &next
	}
	// Every field is listed, even without values, so clients can render
	// the facet panel from the response alone; fields the API does not
	// document are dropped.
	for _, f := range catalog.FilterFields {
		r.Facets[f] = nonNil(p.Facets[f])
	}
	return r
}

func newAgentDetail(a catalog.Agent, versions []catalog.VersionSummary, health catalog.HealthReport) AgentDetail {
	c := cardForJSON(a.Card)
	d := AgentDetail{
		ID:             a.ID,
		CardURL:        a.CardURL,
		Signature:      a.SignatureStatus,
		Health:         a.Health,
		CurrentVersion: a.CurrentVersion,
		CreatedAt:      a.CreatedAt,
		UpdatedAt:      a.UpdatedAt,
		FetchedAt:      a.FetchedAt,
		Card:           c,
		Findings:       c.Findings,
		Versions:       VersionsInfo{Count: len(versions)},
		HealthReport:   health,
	}
	if len(versions) > 0 {
		latest := versions[0]
		d.Versions.Latest = &latest
	}
	return d
}

// nonNil turns a nil slice into an empty one: the document promises
// arrays, and encoding/json writes a nil slice as null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func summaryForJSON(s catalog.Summary) catalog.Summary {
	s.ProtocolVersions = nonNil(s.ProtocolVersions)
	s.Bindings = nonNil(s.Bindings)
	s.SecuritySchemes = nonNil(s.SecuritySchemes)
	s.InputModes = nonNil(s.InputModes)
	s.OutputModes = nonNil(s.OutputModes)
	s.Skills = nonNil(s.Skills)
	return s
}

// cardForJSON returns a copy of c whose required arrays are never null.
// The parser fills them, but a card stored by an older parser may not have.
func cardForJSON(c *card.Card) *card.Card {
	if c == nil {
		return nil
	}
	out := *c
	out.ProtocolVersions = nonNil(c.ProtocolVersions)
	out.Interfaces = nonNil(c.Interfaces)
	out.SecuritySchemes = nonNil(c.SecuritySchemes)
	out.SecurityRequirements = requirementsForJSON(c.SecurityRequirements)
	out.DefaultInputModes = nonNil(c.DefaultInputModes)
	out.DefaultOutputModes = nonNil(c.DefaultOutputModes)
	out.Findings = nonNil(c.Findings)
	out.Skills = make([]card.Skill, len(c.Skills))
	for i, sk := range c.Skills {
		sk.Tags = nonNil(sk.Tags)
		sk.InputModes = nonNil(sk.InputModes)
		sk.OutputModes = nonNil(sk.OutputModes)
		sk.SecurityRequirements = requirementsForJSON(sk.SecurityRequirements)
		out.Skills[i] = sk
	}
	return &out
}

// requirementsForJSON copies reqs with every scope list non-null.
func requirementsForJSON(reqs []card.Requirement) []card.Requirement {
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
