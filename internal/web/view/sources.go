package view

import "time"

// Sources is the sources page: the list and the add form as it was left.
type Sources struct {
	Items []Source
	URL   string
	// Kind is the add form's kind (manifest or registry); the token typed
	// is never echoed back.
	Kind      string
	Error     string
	CSRFToken string
}

// Source is one source and its last check.
type Source struct {
	ID, URL, CreatedBy       string
	Status, Problem, Message string
	ResolvedURL, ResolvedVia string
	CheckedAt, ChangedAt     *time.Time
	NextCheckAt              time.Time
	Failures, EntryCount     int
	// Kind is manifest or registry; for a registry, TokenSet tells that a
	// bearer token is stored, Cursor where its change feed was read to,
	// PeerURL and PeerName what it resolved to, ParentID the manifest
	// source that named it.
	Kind, Cursor, ParentID string
	PeerURL, PeerName      string
	TokenSet               bool
}

// SourceDetail is one source's page: what it resolved to and every entry
// of its last manifest with what was done with it.
type SourceDetail struct {
	Source
	Entries   []SourceEntry
	Notice    string
	CSRFToken string
}

// SourceEntry is an entry of a source's manifest; AgentURL links the
// agent it became, if any.
type SourceEntry struct {
	Identifier, DisplayName, Type, URL string
	ManifestURL                        string
	Depth                              int
	Outcome, Reason, Message           string
	AgentID, AgentURL, TrustFlag       string
	Tags, Queries                      []string
}

// Provenance is one way an agent came, on its page.
type Provenance struct {
	Kind, By, Relation       string
	SourceURL, SourcePageURL string
	EntryID, ManifestURL     string
	// ManifestHost is all of the manifest's URL a viewer reads (then
	// SourceURL and ManifestURL are empty).
	ManifestHost string
	FirstAt      time.Time
	EndedAt      *time.Time
}
