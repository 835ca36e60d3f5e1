package api

import (
	"encoding/json"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/query"
)

// The public JSON shapes of the API. openapi.json describes each of them;
// the conformance test fails when the two drift apart.

// SearchResponse is the body of GET /agents.
type SearchResponse struct {
	Items []Summary `json:"items"`
	// NextCursor is null on the last page.
	NextCursor *string `json:"next_cursor"`
	Total      int     `json:"total"`
	// Facets has one key per filter field, always present, highest count first.
	Facets map[string][]FacetCount `json:"facets"`
	// SuggestedFilters are filters the words of q seem to name ("accepts
	// PDF"), for the client to offer; the search did not apply them.
	SuggestedFilters []SuggestedFilter `json:"suggested_filters"`
	// Semantic says how a search with q was ranked, when an embeddings
	// API is configured.
	Semantic *SemanticSearch `json:"semantic,omitempty"`
}

// SemanticSearch is how a search was ranked: hybrid (words and meaning
// fused) or lexical, with the reason it fell back to words alone.
type SemanticSearch struct {
	Mode     string `json:"mode"`
	Degraded string `json:"degraded,omitempty"`
}

// SuggestedFilter is one filter suggested by the words of a search.
type SuggestedFilter struct {
	Field string `json:"field"`
	Value string `json:"value"`
	// Words is the text of q that suggested it.
	Words string `json:"words"`
}

// Summary is one agent of a search result.
type Summary struct {
	ID               string         `json:"id"`
	CardURL          string         `json:"card_url"`
	Name             string         `json:"name"`
	Description      string         `json:"description"`
	Version          string         `json:"version"`
	Provider         string         `json:"provider,omitempty"`
	ProtocolVersions []string       `json:"protocol_versions"`
	Bindings         []string       `json:"bindings"`
	SecuritySchemes  []string       `json:"security_schemes"`
	InputModes       []string       `json:"input_modes"`
	OutputModes      []string       `json:"output_modes"`
	Skills           []SkillSummary `json:"skills"`
	Signature        string         `json:"signature"`
	Health           string         `json:"health"`
	// Publisher is the registrable domain of the card URL; left out for
	// a card without a URL. PublisherVerified says it proved it holds the
	// key that signs the card.
	Publisher         string `json:"publisher,omitempty"`
	PublisherVerified bool   `json:"publisher_verified"`
	// Listing is the listing state; deprecated agents come after all
	// others in results.
	Listing   string    `json:"listing"`
	UpdatedAt time.Time `json:"updated_at"`
	// Score is the text relevance; zero (and left out) when the query has
	// no text.
	Score float64 `json:"score,omitempty"`
	// Explanation is why the agent matched q; only with explain=true.
	Explanation *Explanation `json:"explanation,omitempty"`
}

// Explanation is why a search hit matched the words of q.
type Explanation struct {
	Partial bool        `json:"partial"`
	Words   []WordMatch `json:"words"`
	Near    int         `json:"near"`
	// LexicalRank, VectorRank and Similarity are set with a hybrid
	// ranking.
	LexicalRank *int     `json:"lexical_rank,omitempty"`
	VectorRank  *int     `json:"vector_rank,omitempty"`
	Similarity  *float64 `json:"similarity,omitempty"`
}

// WordMatch is how one word of q met an agent.
type WordMatch struct {
	Word    string   `json:"word"`
	Matched string   `json:"matched,omitempty"`
	How     string   `json:"how,omitempty"`
	Fields  []string `json:"fields"`
}

// SkillSummary is a skill as a search result lists it.
type SkillSummary struct {
	ID   string   `json:"id"`
	Name string   `json:"name"`
	Tags []string `json:"tags,omitempty"`
}

// FacetCount is one facet value and how many matching agents carry it.
type FacetCount struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// AgentDetail is the body of GET /agents/{id} and of POST /agents.
type AgentDetail struct {
	ID             string    `json:"id"`
	CardURL        string    `json:"card_url"`
	Signature      string    `json:"signature"`
	Health         string    `json:"health"`
	CurrentVersion int       `json:"current_version"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	FetchedAt      time.Time `json:"fetched_at"`
	Card           *Card     `json:"card"`
	// Findings repeats card.findings so clients listing problems need not
	// walk the card.
	Findings []Finding    `json:"findings"`
	Versions VersionsInfo `json:"versions"`
	// HealthReport tells when the card was last checked, how that went and
	// when the next check is due; its state equals Health.
	HealthReport HealthReport `json:"health_report"`
	// Verification is the verifier's report on the current version
	// (verify.Report as JSON); null until the version has been verified.
	// Its signatures.status equals Signature then.
	Verification json.RawMessage `json:"verification"`
	// Check is the latest declared-vs-working check (POST
	// /agents/{id}/checks), absent until a tester ran one.
	Check *CheckResponse `json:"check,omitempty"`
	// Listing is where the agent stands in the listing lifecycle.
	Listing Listing `json:"listing"`
	// Collections names the collections the agent is in that the caller
	// sees.
	Collections []string `json:"collections"`
	// Annotations are the operator's (PUT /agents/{id}/annotations);
	// notes only for editors and admins.
	Annotations Annotations `json:"annotations"`
	// Removed is present when an admin removed the agent, or the
	// registry withdrew it; only admins see such an agent at all.
	Removed *Removal `json:"removed,omitempty"`
	// Provenance lists how the agent came: registered, seeded, imported,
	// or from a source's entry (ended rows kept as history).
	Provenance []ProvenanceEntry `json:"provenance"`
	// SourceEntries are the entries of sources' manifests that name the
	// agent: its ARD identifier, tags, representative queries and trust
	// manifest as its publishers describe it.
	SourceEntries []SourceEntry `json:"source_entries"`
	// Policy is the admission policy's standing on the current version;
	// absent when no policy judged it and none refused a crawled card.
	Policy *AgentPolicy `json:"policy,omitempty"`
}

// Removal says who removed an agent and when.
type Removal struct {
	At time.Time `json:"at"`
	// By is the remover's display name, email or subject.
	By string `json:"by"`
	// Withdrawn is set when the registry withdrew the agent because
	// nothing vouches for it any more, and says why.
	Withdrawn string `json:"withdrawn,omitempty"`
}

// VersionsInfo summarizes an agent's stored card versions.
type VersionsInfo struct {
	Count int `json:"count"`
	// Latest is the newest stored version; null only when the agent has
	// none, which the catalog never allows.
	Latest *VersionSummary `json:"latest"`
}

// VersionSummary describes one stored version of a card.
type VersionSummary struct {
	Number     int       `json:"number"`
	SHA256     string    `json:"sha256"`
	Size       int       `json:"size"`
	Source     string    `json:"source"`
	ReceivedAt time.Time `json:"received_at"`
}

// VersionList is the body of GET /agents/{id}/versions.
type VersionList struct {
	Items []VersionSummary `json:"items"`
}

// HealthReport is an agent's recent availability.
type HealthReport struct {
	State               string      `json:"state"`
	LastCheckAt         *time.Time  `json:"last_check_at"`
	LastSuccessAt       *time.Time  `json:"last_success_at"`
	NextCheckAt         *time.Time  `json:"next_check_at"`
	ConsecutiveFailures int         `json:"consecutive_failures"`
	LastError           *FetchError `json:"last_error"`
	// Uptime24h and Uptime7d are the shares of successful checks in the
	// window; null when there was no check.
	Uptime24h *float64 `json:"uptime_24h"`
	Uptime7d  *float64 `json:"uptime_7d"`
	Paused    bool     `json:"paused"`
}

// FetchError is the last failure of an agent.
type FetchError struct {
	Class   string    `json:"class"`
	Message string    `json:"message"`
	Status  int       `json:"status,omitempty"`
	At      time.Time `json:"at"`
}

// Change is one entry of the change feed.
type Change struct {
	// Seq orders the feed; pass the last one seen as since.
	Seq     int64     `json:"seq"`
	Kind    string    `json:"kind"`
	AgentID string    `json:"agent_id"`
	CardURL string    `json:"card_url"`
	Version int       `json:"version,omitempty"`
	At      time.Time `json:"at"`
	// Federated is set when this registry knows the agent only from a
	// peer registry: a registry federating from this one skips it (no
	// loops, docs/sources.md#federation).
	Federated bool `json:"federated,omitempty"`
}

// ChangeList is the body of GET /changes.
type ChangeList struct {
	// Items are in commit order, oldest first.
	Items []Change `json:"items"`
	// NextSince is the seq of the last item, or the request's since when
	// there is none: the since of the next poll.
	NextSince int64 `json:"next_since"`
	// RegistryID is this registry's id: a registry federating from itself
	// tells by it.
	RegistryID string `json:"registry_id,omitempty"`
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
	// Rule names the admission-policy rule of policy_refused.
	Rule string `json:"rule,omitempty"`
}

// The conversions from the catalog's domain types to the wire shapes,
// field by field: a field renamed on either side fails to compile here
// instead of silently changing the API.

func newSearchResponse(p catalog.Page, suggested []query.Suggestion) SearchResponse {
	r := SearchResponse{
		Items:            make([]Summary, 0, len(p.Items)),
		Total:            p.Total,
		Facets:           make(map[string][]FacetCount, len(catalog.FilterFields)),
		SuggestedFilters: make([]SuggestedFilter, len(suggested)),
	}
	for i, s := range suggested {
		r.SuggestedFilters[i] = SuggestedFilter{Field: s.Field, Value: s.Value, Words: s.Words}
	}
	for _, s := range p.Items {
		r.Items = append(r.Items, newSummary(s))
	}
	if p.NextCursor != "" {
		next := p.NextCursor
		r.NextCursor = &next
	}
	if sem := p.Semantic; sem != nil {
		r.Semantic = &SemanticSearch{Mode: "lexical", Degraded: sem.Degraded}
		if sem.Hybrid {
			r.Semantic.Mode = "hybrid"
		}
	}
	// Every field is listed, even without values, so clients can render
	// the facet panel from the response alone; fields the API does not
	// document are dropped.
	for _, f := range catalog.FilterFields {
		counts := make([]FacetCount, len(p.Facets[f]))
		for i, c := range p.Facets[f] {
			counts[i] = FacetCount{Value: c.Value, Count: c.Count}
		}
		r.Facets[f] = counts
	}
	return r
}

// newSummary is the wire form of s; the arrays the document requires are
// never null.
func newSummary(s catalog.Summary) Summary {
	out := Summary{
		ID: s.ID, CardURL: s.CardURL, Name: s.Name, Description: s.Description, Version: s.Version,
		Provider: s.Provider, ProtocolVersions: nonNil(s.ProtocolVersions), Bindings: nonNil(s.Bindings),
		SecuritySchemes: nonNil(s.SecuritySchemes), InputModes: nonNil(s.InputModes), OutputModes: nonNil(s.OutputModes),
		Skills: make([]SkillSummary, len(s.Skills)), Signature: s.SignatureStatus, Health: s.Health,
		UpdatedAt: s.UpdatedAt, Score: s.Score, Listing: s.Listing,
		Publisher: s.Publisher, PublisherVerified: s.PublisherVerified,
	}
	if e := s.Explanation; e != nil {
		out.Explanation = &Explanation{Partial: e.Partial, Near: e.Near, Words: make([]WordMatch, len(e.Words))}
		for i, w := range e.Words {
			out.Explanation.Words[i] = WordMatch{Word: w.Word, Matched: w.Matched, How: w.How, Fields: nonNil(w.Fields)}
		}
		if e.Fused {
			out.Explanation.LexicalRank, out.Explanation.VectorRank = &e.LexicalRank, &e.VectorRank
		}
		if e.HasSimilarity {
			out.Explanation.Similarity = &e.Similarity
		}
	}
	for i, sk := range s.Skills {
		out.Skills[i] = SkillSummary{ID: sk.ID, Name: sk.Name, Tags: sk.Tags}
	}
	return out
}

func newAgentDetail(v catalog.AgentView) AgentDetail {
	a := v.Agent
	c := newCard(a.Card)
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
		Versions:       VersionsInfo{Count: len(v.Versions)},
		HealthReport:   newHealthReport(v.Health),
		Listing:        newListing(a.Listing),
		Collections:    nonNil(a.Collections),
	}
	if r := a.Removed; r != nil {
		d.Removed = &Removal{At: r.At, By: r.By, Withdrawn: r.Withdrawn}
	}
	if len(v.Versions) > 0 {
		latest := newVersionSummary(v.Versions[0])
		d.Versions.Latest = &latest
	}
	// The report is of the current version only: a report on an older
	// version says nothing about the bytes served now.
	if r := v.Verification; r != nil && r.Version == a.CurrentVersion {
		d.Verification = r.Report
	}
	return d
}

func newVersionSummary(v catalog.VersionSummary) VersionSummary {
	return VersionSummary{Number: v.Number, SHA256: v.SHA256, Size: v.Size, Source: v.Source, ReceivedAt: v.ReceivedAt}
}

func newVersionList(vs []catalog.VersionSummary) VersionList {
	l := VersionList{Items: make([]VersionSummary, len(vs))}
	for i, v := range vs {
		l.Items[i] = newVersionSummary(v)
	}
	return l
}

func newHealthReport(h catalog.HealthReport) HealthReport {
	r := HealthReport{
		State: h.State, LastCheckAt: h.LastCheckAt, LastSuccessAt: h.LastSuccessAt, NextCheckAt: h.NextCheckAt,
		ConsecutiveFailures: h.ConsecutiveFailures, Uptime24h: h.Uptime24h, Uptime7d: h.Uptime7d, Paused: h.Paused,
	}
	if e := h.LastError; e != nil {
		r.LastError = &FetchError{Class: e.Class, Message: e.Message, Status: e.Status, At: e.At}
	}
	return r
}

func newChange(c catalog.Change) Change {
	return Change{Seq: c.Seq, Kind: c.Kind, AgentID: c.AgentID, CardURL: c.CardURL, Version: c.Version, At: c.At, Federated: c.Federated}
}

// nonNil turns a nil slice into an empty one: the document promises
// arrays, and encoding/json writes a nil slice as null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// AgentPolicy is what the admission policy found on an agent.
type AgentPolicy struct {
	// Digest names the policy that judged the current version; empty
	// when none did.
	Digest string `json:"digest,omitempty"`
	// Results are the rules that did not pass on the current version.
	Results []PolicyResult `json:"results"`
	// RefusedBy is the rule that refused the last card a crawl brought;
	// the agent kept its current version and is stale.
	RefusedBy   string     `json:"refused_by,omitempty"`
	EvaluatedAt *time.Time `json:"evaluated_at,omitempty"`
}

// PolicyResult is one rule that failed, or errored, on a card version.
type PolicyResult struct {
	Rule    string `json:"rule"`
	Action  string `json:"action"`
	Outcome string `json:"outcome"`
	Message string `json:"message"`
}

func newAgentPolicy(ps catalog.PolicyState) *AgentPolicy {
	if !ps.Judged && ps.RefusedBy == "" {
		return nil
	}
	p := &AgentPolicy{Digest: ps.Digest, Results: make([]PolicyResult, len(ps.Results)), RefusedBy: ps.RefusedBy}
	for i, r := range ps.Results {
		p.Results[i] = PolicyResult{Rule: r.RuleID, Action: r.Action, Outcome: r.Outcome, Message: r.Message}
	}
	if !ps.EvaluatedAt.IsZero() {
		at := ps.EvaluatedAt
		p.EvaluatedAt = &at
	}
	return p
}
