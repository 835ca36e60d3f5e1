package catalog

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/a2aregistry/registry/internal/card"
)

// Sentinel errors; callers test them with errors.Is. gorm and driver errors
// never cross the package boundary unwrapped.
var (
	ErrNotFound      = errors.New("catalog: not found")
	ErrInvalidCursor = errors.New("catalog: invalid cursor")
	ErrInvalidQuery  = errors.New("catalog: invalid query")
	// ErrConflict: the write would duplicate something that must be
	// unique (an active trusted key with the same thumbprint).
	ErrConflict = errors.New("catalog: conflict")
)

// Health values. The crawler fills them; a freshly registered agent is unknown.
const (
	HealthUnknown = "unknown"
	HealthUp      = "up"
	HealthDown    = "down"
	HealthStale   = "stale"
)

// Signature status values. The verifier fills them.
const (
	SignatureUnchecked      = "unchecked"
	SignatureVerified       = "verified"
	SignatureInvalid        = "invalid"
	SignatureUnsigned       = "unsigned"
	SignatureKeyUnavailable = "key_unavailable"
)

// Works values: how many of the checked interfaces of an agent's latest
// declared-vs-working check answered as declared. A tester starts checks;
// an agent never checked, or whose checks could test no interface (or
// were all pruned), is unchecked.
const (
	WorksAll       = "all"
	WorksSome      = "some"
	WorksNone      = "none"
	WorksUnchecked = "unchecked"
)

// Source tells how a card version reached the catalog.
const (
	SourceURL    = "url"
	SourceImport = "import"
	SourceCrawl  = "crawl"
)

// Agent is one catalogued agent with the normalized view of its current card.
type Agent struct {
	ID      string
	CardURL string
	// Card is the current version, parsed from its stored raw bytes.
	Card            *card.Card
	SignatureStatus string
	Health          string
	CurrentVersion  int
	CreatedAt       time.Time
	UpdatedAt       time.Time
	// FetchedAt is when the current version's bytes were last received.
	FetchedAt time.Time
	Listing   Listing
	// Collections names the collections the agent is in.
	Collections []string
	// Removed is set while an admin has removed the agent: it is out of
	// search and the crawl, and readers other than admins must treat it
	// as not found. Registering its card URL again clears it.
	Removed *Removal
}

// Removal is who removed an agent and when.
type Removal struct {
	At time.Time
	// By names the remover as the banner shows them: display name, email
	// or subject (the audit log keeps all three).
	By string
	// Withdrawn says why the registry itself withdrew the agent (nothing
	// vouches for it any more); empty for an admin's removal.
	Withdrawn string
}

// RemovedAgent is one entry of the list of removed agents.
type RemovedAgent struct {
	ID, CardURL, Name string
	CurrentVersion    int
	Removal
}

// RemovedPage is a page of removed agents, most recently removed first.
type RemovedPage struct {
	Agents []RemovedAgent
	// Next is the cursor of the following page, "" at the end.
	Next string
}

// Listing is where an agent stands in the listing lifecycle.
type Listing struct {
	// State is one of ListingStates.
	State string
	// Reason is why it was rejected or deprecated (or sent back to review).
	Reason string
	// Replacement is the id of the agent that replaces a deprecated one.
	Replacement string
	// By names the actor of the last transition (Actor.String), At when;
	// both empty for an agent never reviewed.
	By string
	At *time.Time
	// ApprovedVersion is the card version last approved, 0 when none was.
	ApprovedVersion int
}

// Summary is the compact view of an agent a search result lists.
type Summary struct {
	ID               string
	CardURL          string
	Name             string
	Description      string
	Version          string
	Provider         string
	ProtocolVersions []string
	Bindings         []string
	SecuritySchemes  []string
	InputModes       []string
	OutputModes      []string
	Skills           []SkillSummary
	SignatureStatus  string
	// SignatureTrust says what vouches for the key of a verified
	// signature (FieldSignatureTrust); empty when not verified.
	SignatureTrust string
	// Publisher is the registrable domain of the card URL's host
	// (FieldPublisher); empty for a card without a URL.
	Publisher string
	// PublisherVerified is true when the publisher proved it holds the
	// signing key (FieldPublisherVerified).
	PublisherVerified bool
	Health            string
	// Works is what the latest check found of the declared interfaces
	// (Works*); set on search results.
	Works string
	// Listing is the listing state (ListingStates).
	Listing string
	// Provenance are the kinds and relations of how the agent came that
	// still vouch for it (FieldProvenance's values); set on search
	// results.
	Provenance []string
	UpdatedAt  time.Time
	// Score is the text relevance; zero when the query has no text.
	Score float64
	// Explanation says why the agent matched the text; set only when
	// the query asked (Query.Explain) and has text.
	Explanation *Explanation
}

// Explanation is why a search hit matched its query's text: for each
// word of the query, what it met in the agent's card.
type Explanation struct {
	// Partial is true when the agent matched some of the words only.
	Partial bool
	Words   []WordMatch
	// Near counts the pairs of neighbouring query words that stand
	// together in the card (at most two words apart), which raises its
	// score.
	Near int
	// Fused is set when the hit was ranked by fusing the lexical and
	// vector rankings; LexicalRank and VectorRank are then its places in
	// each (1 is first, 0 outside the fused window), Similarity its
	// vector's cosine similarity to the query's.
	Fused                   bool
	LexicalRank, VectorRank int
	Similarity              float64
	// HasSimilarity is set when Similarity is known: on fused hits, and
	// in Store.Explain when the query could be embedded and the agent has
	// a vector.
	HasSimilarity bool
}

// WordMatch is how one query word met an agent; Matched is empty when it
// did not.
type WordMatch struct {
	// Word is the query word as analyzed (folded, stemmed: "translat"),
	// Matched the indexed word it met.
	Word    string
	Matched string
	// How is "word" (the word itself or its stem), "prefix" (a word the
	// query word begins), "typo" (one edit away) or "related" (a related
	// word from WordNet or the domain list).
	How string
	// Fields are where the matched word is: name, tags, skills,
	// description, provider, examples, queries (a source manifest's
	// representativeQueries).
	Fields []string
}

// SkillSummary is a skill as a search result lists it.
type SkillSummary struct {
	ID   string
	Name string
	Tags []string
}

// VersionSummary describes one stored version of a card.
type VersionSummary struct {
	Number     int
	SHA256     string
	Size       int
	Source     string
	ReceivedAt time.Time
}

// Version is one stored version with its raw bytes.
type Version struct {
	VersionSummary
	Raw []byte
}

// UpsertInput is a freshly received card for one card URL.
type UpsertInput struct {
	// CardURL identifies the agent: the URL the card was served from, or
	// for imports a stable file-derived URL.
	CardURL    string
	Card       *card.Card
	Source     string
	ReceivedAt time.Time
	// NextCheckAt schedules the crawler's first check of a new agent;
	// zero means due now.
	NextCheckAt time.Time
	// Paused keeps a new agent out of the crawl (imported offline copies).
	Paused bool
	// Via is how the card came when not by a person's registration or an
	// import (a seed list, a source's entry); see Provenance.
	Via *Via
	// Precheck is what the verifier found on the card before this write
	// (its signatures, its publisher, its content), for the admission
	// policy to judge; nil judges the card's signature unchecked.
	Precheck *Precheck
}

// Precheck is the verifier's check of a card made before the write that
// would store it (verify.Verifier.Precheck): the admission policy judges
// the signatures, publisher and content of the card it admits, so a
// reject rule on them refuses at registration what it names, rather
// than every card as unchecked. It is not stored: the version's own
// report comes from the verification runner, and the policy judges the
// version again then.
type Precheck struct {
	// SignatureStatus is the signature_status facet value.
	SignatureStatus string
	// Report is a verification report (verify.Report as JSON) holding
	// what the precheck looked at.
	Report json.RawMessage
}

// UpsertResult tells what an upsert changed.
type UpsertResult struct {
	Agent Agent
	// Created is true when the card URL was new to the catalog.
	Created bool
	// NewVersion is true when the raw bytes differed from the current
	// version (always true when Created).
	NewVersion bool
	// Restored is true when the card URL was that of an agent an admin
	// had removed: it is listed again, with its id and history.
	Restored bool
	// Refused is the admission policy's rule that refused a crawled card:
	// it was not stored, and the agent kept its version (stale).
	Refused *PolicyResult
}

// Filter fields, as the API names them in query parameters and facets.
const (
	FieldSkill           = "skill"
	FieldTag             = "tag"
	FieldInputMode       = "input_mode"
	FieldOutputMode      = "output_mode"
	FieldBinding         = "binding"
	FieldProtocolVersion = "protocol_version"
	FieldSecurityScheme  = "security_scheme"
	FieldProvider        = "provider"
	FieldSignature       = "signature"
	FieldHealth          = "health"
	// FieldAudit values are the security-audit and content-scan finding
	// codes of the current card's verification report (verify.Finding*,
	// contentscan.Code*).
	FieldAudit = "audit"
	// FieldSeverity values are the severities (Severities) those findings
	// have: an agent with a warning and an info finding has both values.
	// A code's severity is not fixed (invalid_scheme takes the lint
	// finding's), so the field is recorded with the codes, not derived.
	FieldSeverity = "severity"
	// FieldSignatureTrust says what vouches for the key of a verified
	// signature (verify.Trust*): a pinned key, an operator-trusted jku
	// origin, or only the card's own origin. Absent when not verified.
	FieldSignatureTrust = "signature_trust"
	// FieldPublisher is the agent's publisher: the registrable domain of
	// its card URL's host (card.PublisherOfCard); absent for a card
	// without a URL.
	FieldPublisher = "publisher"
	// FieldPublisherVerified is "true" when the publisher proved it holds
	// the key that signs the current card (verify.PublisherReport),
	// "false" otherwise.
	FieldPublisherVerified = "publisher_verified"
	// FieldWorks says whether the interfaces the card declares really
	// work, from the agent's latest declared-vs-working check (Works*).
	FieldWorks = "works"
	// FieldListing is the listing state (ListingStates); its facet is
	// shown only to scopes that see every state (Scope.Review).
	FieldListing = "listing"
	// FieldCollection values are the names of the collections an agent is
	// in; a scope never sees the names of collections hidden from it.
	FieldCollection = "collection"
	// FieldPolicy values are the ids of the admission policy's rules that
	// fail (or errored) on the current card version (admission.go).
	FieldPolicy = "policy"
)

// Severities are the values of FieldSeverity (card.Severity's).
var Severities = []string{"error", "warning", "info"}

// FilterFields lists every filter field in a stable order.
var FilterFields = []string{
	FieldSkill, FieldTag, FieldInputMode, FieldOutputMode, FieldBinding,
	FieldProtocolVersion, FieldSecurityScheme, FieldProvider, FieldSignature, FieldHealth,
	FieldAudit, FieldSeverity, FieldSignatureTrust, FieldPublisher, FieldPublisherVerified, FieldWorks, FieldListing, FieldCollection, FieldPolicy,
	FieldOwnerTeam, FieldClassification, FieldLabel, FieldProvenance,
}

// Query is a search: optional text plus filters. Every value of every
// filter must match (AND). Mode filters accept wildcards: `image/*`
// matches `image/png`, `*/*` matches every mode.
type Query struct {
	Text    string
	Filters map[string][]string
	// Limit is clamped to [1, MaxLimit]; zero means DefaultLimit.
	Limit  int
	Cursor string
	// FacetLimit caps the values listed per facet field; zero means DefaultFacetLimit.
	FacetLimit int
	// NoFacets spares a door that shows no facet counts (A2A's answers,
	// ARD's search results) counting them over every match, which is a
	// good share of a search's work: Page.Facets then lists no values.
	NoFacets bool
	// Scope is what the caller may see; the zero Scope sees approved and
	// deprecated agents in no restricted collection.
	Scope Scope
	// AnyOf narrows the search further: an agent must carry at least one
	// value of every group (OR within a group, AND across groups and with
	// Filters), as ARD's filter object asks (spec/ard.md §7.1). A group's
	// field is one of FilterFields, FilterCardURL, FilterURNPublisher or
	// FilterKeyChangedDay.
	AnyOf []FilterGroup
	// Explain asks each hit of the page why it matched the text
	// (Summary.Explanation).
	Explain bool
}

// FilterGroup is a field and the values of which an agent must carry one.
// A group with no values matches no agent.
type FilterGroup struct {
	Field  string
	Values []string
}

// Page limits.
const (
	DefaultLimit      = 20
	MaxLimit          = 100
	DefaultFacetLimit = 20
	MaxQueryTextLen   = 500
)

// Page is one page of search results.
type Page struct {
	Items []Summary
	// NextCursor continues the same query; empty on the last page.
	NextCursor string
	// Total counts every agent matching the query.
	Total int
	// Facets counts matching agents per value of each filter field,
	// highest count first.
	Facets map[string][]FacetCount
	// Timing says where the search's time went, for Server-Timing.
	Timing SearchTiming
	// Semantic says how a search with text was ranked when the semantic
	// layer is configured; nil otherwise.
	Semantic *Semantic
}

// SearchTiming splits a search's time: embedding its text (the semantic
// layer's round trip to the embeddings API, or its cache; zero when off),
// waiting for the index (behind a batch of updates), in the index, and
// reading the page from the database.
type SearchTiming struct {
	Embed, IndexWait, Index, Load time.Duration
}

// FacetCount is one facet value and how many matching agents carry it.
type FacetCount struct {
	Value string
	Count int
}
