// Package view holds the console's view models: what each page of
// web/templates shows, already decided by internal/web. Templates format
// and escape; they do not query or decide.
//
// Strings here are untrusted card text unless a comment says otherwise:
// templates render them as text (escaped, invisible characters shown) and
// turn URLs into links only when they are http(s).
package view

import (
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/verify"
)

// Layout is what every full page shares.
type Layout struct {
	Title string
	// CSS and JS are the versioned URLs of the stylesheet and of htmx
	// (ours, not card data).
	CSS, JS string
	// DevMode shows the development-mode banner: no sign-in, everyone is
	// admin.
	DevMode bool
	// User is the signed-in caller; nil when nobody is.
	User *User
	// SignInURL, when set, is where the header's "Sign in" link goes:
	// sign-in is on and the caller has no session.
	SignInURL string
	// SignOutURL, when set, is where the header's "Sign out" form posts
	// (with CSRFToken): the caller signed in with a session.
	SignOutURL string
	// HXHeaders is the JSON object htmx sends as headers on every request
	// (the CSRF token); empty when there is no token.
	HXHeaders string
	// CSRFToken goes into the hidden field of state-changing forms.
	CSRFToken string
	// CanRegister and CanKeys show the links to those pages.
	CanRegister, CanKeys bool
	// CanAudit and CanCrawl show the links to the audit log and the
	// crawler status.
	CanAudit, CanCrawl bool
	// CanRemoved shows the link to the removed agents (admin).
	CanRemoved bool
	// CanWebhooks shows the link to the webhooks page (admin).
	CanWebhooks bool
	// CanSources shows the link to the sources page (editor).
	CanSources bool
	// CanReview and CanCollections show the review and collections pages.
	CanReview, CanCollections bool
	// APIDocURL is the JSON API's OpenAPI document; empty when the
	// console is served without the API.
	APIDocURL string
}

// User is the caller as the header shows them.
type User struct {
	Name string
	Role string
}

// Search is the search page.
type Search struct {
	Q string
	// RegisterURL is where the JSON API registers agents, for the empty
	// catalog's example; empty when the console is served without it.
	RegisterURL string
	// Groups are the facet fields in the API's order.
	Groups []FacetGroup
	// Active lists the selected filter values, each with the URL of the
	// same search without it.
	Active []ActiveFilter
	// Suggested are filters the words of Q seem to name ("accepts
	// PDF"), each with the URL of the same search with it added; the
	// search did not apply them.
	Suggested []SuggestedFilter
	Results   []Result
	Total     int
	// Pending is how many agents the caller would see once approved
	// await review, counted only when a search of everything finds none.
	Pending int
	// NextURL continues to the next page; empty on the last one.
	// FirstURL restarts from the first page; empty on the first page.
	NextURL, FirstURL string
	// State says why there are no results when it is not simply an
	// empty match.
	State SearchState
	// Message explains StateInvalid (our own words about the query).
	Message string
	// URL is this search's own URL, to repeat it (StateIndexBuilding).
	URL string
	// Semantic says how a search with words was ranked when the semantic
	// layer is on; nil otherwise.
	Semantic *Semantic
}

// Semantic is how a search was ranked: by words and meaning, or by words
// alone and why.
type Semantic struct {
	Hybrid   bool
	Degraded string
	// Model and coverage: Embedded of Agents have a vector.
	Model            string
	Embedded, Agents int
}

// SearchState is the kind of answer the search gave.
type SearchState int

const (
	// StateOK: the search ran; Results may still be empty.
	StateOK SearchState = iota
	// StateIndexBuilding: the search index is still being built.
	StateIndexBuilding
	// StateInvalid: the query cannot run (bad parameter, expired cursor).
	StateInvalid
	// StateFailed: the registry failed; the request id is in the log.
	StateFailed
)

// FacetGroup is one filter field with its values.
type FacetGroup struct {
	Field  string // the query parameter name
	Label  string
	Values []FacetValue
	// More are further values, folded away until asked for.
	More []FacetValue
}

// FacetValue is one value of a facet field.
type FacetValue struct {
	Value    string
	Count    int
	Selected bool
	// ID is the checkbox's element id, stable across responses so htmx
	// keeps focus on it after a swap.
	ID string
}

// ActiveFilter is a selected filter value.
type ActiveFilter struct {
	Label, Value string
	RemoveURL    string
}

// SuggestedFilter is a filter the words of a search suggested.
type SuggestedFilter struct {
	Label, Value string
	// Words are the words of the query that suggested it.
	Words  string
	AddURL string
}

// Result is one search hit.
type Result struct {
	ID   string
	URL  string // the console's agent page
	Name string
	// Provider is the organization; may be empty.
	Provider         string
	Description      string // an excerpt
	Version          string
	Skills           []string
	InputModes       []string
	OutputModes      []string
	ProtocolVersions []string
	Bindings         []string
	Health           string
	Signature        string
	// Listing is the listing state; approved agents carry no badge.
	Listing string
	// Publisher is the registrable domain of the card URL, PublisherURL
	// its page; PublisherVerified earns the verified badge.
	Publisher, PublisherURL string
	PublisherVerified       bool
	// CardAt is the card URL's host and path: it tells apart agents of
	// the same name.
	CardAt string
	// Works is the latest check's verdict on the declared interfaces
	// (all, some, none); empty when never checked.
	Works string
	// WhyURL asks why the result met the words of the search (Why);
	// empty without words.
	WhyURL string
}

// Completion is a value the search box offers for what has been typed.
type Completion struct {
	// Label names the filter the value belongs to (Tag, Skill); URL is the
	// search it filters.
	Value, Label, URL string
	Count             int
}

// Why says how a result met the words of a search, one line a word.
type Why struct {
	AgentID, AgentURL string
	// Q is the search's text, SearchURL the search.
	Q, SearchURL string
	// Matched is false when the agent no longer matches the words.
	Matched bool
	Words   []WhyWord
	// Near counts the pairs of neighbouring words of the search that
	// stand together in the agent's text.
	Near int
	// Similarity is how near the agent's text is to the search's in
	// meaning (cosine of their embeddings), when the semantic layer
	// knows it.
	Similarity    float64
	HasSimilarity bool
}

// WhyWord is how one word of a search met a result.
type WhyWord struct {
	// Word is the word as the index reads it (folded, stemmed).
	Word string
	// How is "" when the word met nothing in this agent.
	How string
	// Matched is the indexed word it met, when not the word itself.
	Matched string
	Fields  string
}

// Agent is the agent page.
type Agent struct {
	ID               string
	URL              string // the console's agent page
	CardURL          string
	RawURL           string // the API's exact bytes of the current card
	Name             string
	Description      string
	Version          string
	Provider         string
	ProviderURL      string
	DocumentationURL string
	IconURL          string
	Shape            string
	ProtocolVersions []string
	Capabilities     card.Capabilities
	DefaultInput     []string
	DefaultOutput    []string
	Skills           []card.Skill
	Interfaces       []Interface
	Schemes          []card.SecurityScheme
	Requirements     []card.Requirement
	Signature        string
	Health           Health
	// Verification is nil until the current version has been verified.
	Verification *Verification
	Lint         []card.Finding
	Current      int
	Versions     []Version
	// RawPretty is the current card pretty-printed with sorted keys.
	RawPretty string
	// Diff is the comparison the page was asked for, if any.
	Diff *Diff
	// Actions are what the caller may do to the agent.
	Actions Actions
	// TryURL is the "Try it" panel, empty when the caller may not use it.
	TryURL string
	// Listing and Collections are the operator's curation of the agent
	// (only the collections the caller sees).
	Listing     Listing
	Collections []string
	// Policy is what the admission policy found; nil when no policy
	// judged the current version and none refused a crawled card.
	Policy *AgentPolicy
	// Annotations are the operator's, with their edit form for editors.
	Annotations Annotations
	// Removed is set when an admin removed the agent (only admins see
	// the page then); the page shows it as a banner and offers no actions.
	Removed *Removal
	// Audit is the newest audited writes about the agent, shown to
	// admins; nil for everyone else.
	Audit []AuditEntry
	// Provenance is how the agent came (registered, seeded, imported,
	// or from sources' entries), ended rows included.
	Provenance []Provenance
}

// Removal is who removed an agent and when; Withdrawn says why when the
// registry itself withdrew it.
type Removal struct {
	At        time.Time
	By        string
	Withdrawn string
}

// RemovedList is the admin's list of removed agents.
type RemovedList struct {
	Agents []RemovedAgent
	// Older is the link to the next page; empty on the last.
	Older string
}

// RemovedAgent is one entry of the list of removed agents.
type RemovedAgent struct {
	URL, Name, CardURL string
	Versions           int
	Removal
}

// Actions are the agent actions the caller may take.
type Actions struct {
	// CSRFToken goes into each action's form (ours, not card data).
	CSRFToken string
	// Refresh offers "check now"; Pause offers pause or resume.
	Refresh, Pause bool
	// Remove links to the confirmation page of removing the agent (admin).
	Remove bool
}

// Interface is a declared interface with its probe, if one ran.
type Interface struct {
	card.Interface
	Probe *verify.Probe
	// Check is the latest check's result for this interface; nil when
	// the agent was never checked or the check did not cover it.
	Check *InterfaceCheck
}

// InterfaceCheck is whether a message sent over one interface at the
// latest check got an answer (declared vs working).
type InterfaceCheck struct {
	Works     bool
	Detail    string
	CheckedAt time.Time
}

// Verification is the verifier's report on the current version.
type Verification struct {
	Status    string
	CheckedAt time.Time
	Stale     bool
	Signer    *verify.Signer
	Entries   []verify.SignatureResult
	Rotation  bool
	Audit     []card.Finding
	// Content is the content scan's findings; nil when the report
	// predates the scan (Scanned false).
	Content []ContentFinding
	Scanned bool
	// Publisher is the report's judgement of the publisher, nil for a
	// report that predates it or a card without a URL; PublisherURL is
	// its page.
	Publisher    *verify.PublisherReport
	PublisherURL string
}

// ContentFinding is a content-scan finding (verify.ContentFinding) with
// links to the agents it compares with. Message and Excerpt already
// write hidden characters as ⟨U+XXXX⟩; they are still card text.
type ContentFinding struct {
	Code, Severity, Path, Message, Excerpt, Why string
	Related                                     []AgentRef
}

// AgentRef links to another agent's page; Text is its name or provider
// (card text).
type AgentRef struct {
	ID, URL, Text string
}

// Health is the crawler's view of an agent.
type Health struct {
	State       string
	LastCheck   time.Time // zero when never
	LastSuccess time.Time
	NextCheck   time.Time
	Failures    int
	LastError   *FetchError
	// Uptime24h and Uptime7d are formatted shares ("99.5 %"), or "" with
	// no checks in the window.
	Uptime24h, Uptime7d string
	Paused              bool
}

// FetchError is the last failed check.
type FetchError struct {
	Class   string
	Message string
	Status  int
	At      time.Time
}

// Version is one stored card version.
type Version struct {
	Number     int
	SHA256     string
	Size       int
	Source     string
	ReceivedAt time.Time
	// URL is the API's exact bytes of this version.
	URL string
}

// Diff compares two versions side by side.
type Diff struct {
	From, To int
	// Versions are the choices of the comparison form, newest first.
	Versions []Version
	Rows     []DiffRow
	// Same is true when the two pretty-printed versions are identical
	// (the bytes may still differ in spacing or key order).
	Same bool
	// Error explains why no diff is shown (an unknown version).
	Error string
	// Action is the URL of the comparison form (the agent's diff page).
	Action string
	// Shown is false on the agent page before a comparison was asked for:
	// only the form is shown.
	Shown bool
}

// DiffRow is one line of the side-by-side diff.
type DiffRow struct {
	Kind DiffKind
	// LeftNo and RightNo are 1-based line numbers; 0 when the side is empty.
	LeftNo, RightNo int
	Left, Right     string
	// Skipped counts unchanged lines folded into a DiffSkip row.
	Skipped int
}

// DiffKind classifies a diff row.
type DiffKind int

const (
	DiffSame    DiffKind = iota // the line is on both sides
	DiffChanged                 // the left line became the right line
	DiffRemoved                 // only on the left
	DiffAdded                   // only on the right
	DiffSkip                    // unchanged lines folded away
)

// Register is the register page and its results.
type Register struct {
	// Input is the text as submitted, to edit and resubmit.
	Input string
	// CSRFToken goes into the form's hidden field (ours, not card data).
	CSRFToken string
	// Error says why nothing was registered (no URL, too many).
	Error   string
	Results []RegisterResult
}

// RegisterOutcome is what registering one URL did.
type RegisterOutcome string

const (
	RegisterCreated RegisterOutcome = "created"
	// RegisterRestored: the URL was that of an agent an admin had removed;
	// it is back, with its id and history.
	RegisterRestored  RegisterOutcome = "restored"
	RegisterUpdated   RegisterOutcome = "updated"
	RegisterUnchanged RegisterOutcome = "unchanged"
	RegisterFailed    RegisterOutcome = "failed"
)

// RegisterResult is the outcome for one submitted URL.
type RegisterResult struct {
	Input   string
	Outcome RegisterOutcome
	// AgentURL, CardURL and Name describe the agent on success.
	AgentURL, CardURL, Name string
	// Code (the kind of failure: a crawler.Kind* or RegisterInternal),
	// Class (the fetch failure class) and Message explain a failure.
	Code, Class, Message string
}

// RegisterInternal is the Code of a registration that failed through the
// registry's own fault, whose cause is in its log only.
const RegisterInternal = "internal"

// RegisterCatalogued is the Code of a URL whose agent the caller may not
// see: catalogued already, named no further.
const RegisterCatalogued = "already_catalogued"

// Keys is the trusted-keys page: the add form (as submitted, when it
// failed) and every key.
type Keys struct {
	CSRFToken string
	// JWK, KID, OriginsText and NotAfter refill the form after an error.
	JWK, KID, OriginsText, NotAfter string
	Error                           string
	Keys                            []Key
}

// Key is one pinned key.
type Key struct {
	ID, KID, Thumbprint string
	Origins             []string
	// State is active, expired or revoked; Until is when it expires or
	// was revoked (zero for an active key without expiry).
	State     string
	Until     time.Time
	CreatedAt time.Time
}

// Error is an error page.
type Error struct {
	Status  int
	Title   string
	Message string
}

// AgentPolicy is the admission policy's standing on an agent: the rules
// failing (or errored) on its current version, and the rule that refused
// the last card a crawl brought.
type AgentPolicy struct {
	Results   []PolicyResult
	RefusedBy string
}

// PolicyResult is one rule that did not pass; SearchURL lists every
// agent failing it.
type PolicyResult struct {
	Rule, Action, Outcome, Message string
	SearchURL                      string
}
