package catalog

import (
	"encoding/json"
	"fmt"
	"time"
)

// Records of the tables, one struct per table. They never leave the
// package: callers see Agent, Summary and friends. The tables written in
// bulk name their columns once, next to the values (see bulk.go).

type agentRecord struct {
	PK               int64 `gorm:"column:pk;primaryKey"`
	ID               string
	CardURL          string
	Name             string
	Description      string
	Provider         string
	AgentVersion     string
	Shape            string
	ProtocolVersions string
	// Summary is a summaryRecord as JSON.
	Summary         string
	SignatureStatus string
	Health          string
	CurrentVersion  int
	RawSHA256       string `gorm:"column:raw_sha256"`
	Seq             int64
	CreatedAt       time.Time
	UpdatedAt       time.Time
	FetchedAt       time.Time
	// AuditCodes is the sorted JSON array of the security-audit finding
	// codes of the current version's verification report.
	AuditCodes string
	// FindingSeverities is the sorted JSON array of the severities those
	// findings have (card.Severity values), the severity facet.
	FindingSeverities string
	// SignatureTrust says what vouched for the key that verified the
	// current version's signature (verify.Trust*); empty when none did.
	SignatureTrust string
	// PublisherVerified is "true" when the publisher proved it holds the
	// current version's signing key, else "false".
	PublisherVerified string
	// RemovedAt and RemovedBy are set while an admin has removed the
	// agent (see RemoveAgent); written by their own statements, never by
	// the bulk ones.
	RemovedAt *time.Time
	RemovedBy string
	// WithdrawnReason is set, with RemovedAt, when the registry withdrew
	// the agent (see sources.go); Provenance is its provenance facet.
	WithdrawnReason string
	Provenance      string
	// Works is the works facet, from the latest check (Works*).
	Works string
	// Listing and the columns after it are the lifecycle (see listing.go);
	// Visibility and Collections are JSON arrays derived from collection
	// membership (see collections.go).
	Listing            string
	ListingReason      string
	ListingReplacement string
	ListingBy          string
	ListingAt          *time.Time
	ApprovedVersion    int
	Visibility         string
	Collections        string
	// DerivedSHA256 is the digest of the current version's derived rows
	// (derivedDigest); empty when not known.
	DerivedSHA256 string `gorm:"column:derived_sha256"`
	// PolicyFailing is the sorted JSON array of the admission policy's
	// rules failing (or errored) on the current version; PolicyDigest
	// names the policy that judged it ('' none); PolicyRefused is the rule
	// that refused the last card a crawl brought ('' none). See
	// admission.go.
	PolicyFailing string
	PolicyDigest  string
	PolicyRefused string
}

func (agentRecord) TableName() string { return "agents" }

var agentsTable = bulkTable[agentRecord]{
	name: "agents",
	cols: []bulkCol{{"pk", pgBigint}, {"id", pgText}, {"card_url", pgText}, {"name", pgText}, {"description", pgText},
		{"provider", pgText}, {"agent_version", pgText}, {"shape", pgText}, {"protocol_versions", pgText},
		{"summary", pgText}, {"signature_status", pgText}, {"health", pgText}, {"current_version", pgInteger},
		{"raw_sha256", pgText}, {"seq", pgBigint}, {"created_at", pgTimestamp}, {"updated_at", pgTimestamp},
		{"fetched_at", pgTimestamp}, {"audit_codes", pgText}, {"signature_trust", pgText}, {"works", pgText}, {"listing", pgText},
		{"approved_version", pgInteger}, {"derived_sha256", pgText}, {"publisher_verified", pgText}, {"finding_severities", pgText}, {"policy_failing", pgText},
		{"policy_digest", pgText}},
	args: func(a []any, r agentRecord) []any {
		return append(a, r.PK, r.ID, r.CardURL, r.Name, r.Description, r.Provider, r.AgentVersion, r.Shape,
			r.ProtocolVersions, r.Summary, r.SignatureStatus, r.Health, r.CurrentVersion, r.RawSHA256, r.Seq,
			r.CreatedAt, r.UpdatedAt, r.FetchedAt, r.AuditCodes, r.SignatureTrust, r.Works, r.Listing, r.ApprovedVersion, r.DerivedSHA256,
			publisherVerifiedValue(r.PublisherVerified), severitiesColumn(r.FindingSeverities), r.PolicyFailing, r.PolicyDigest)
	},
}

// agentCardUpdate is what a new card version changes in its agents row.
// Written for a whole batch with one UPDATE … FROM (VALUES …).
var agentCardUpdate = bulkUpdate[agentRecord]{
	table: "agents", key: "pk",
	cols: []bulkCol{{"pk", pgBigint}, {"name", pgText}, {"description", pgText}, {"provider", pgText},
		{"agent_version", pgText}, {"shape", pgText}, {"protocol_versions", pgText}, {"summary", pgText},
		{"raw_sha256", pgText}, {"seq", pgBigint}, {"current_version", pgInteger}, {"updated_at", pgTimestamp},
		{"fetched_at", pgTimestamp}, {"signature_status", pgText}, {"audit_codes", pgText}, {"signature_trust", pgText},
		{"approved_version", pgInteger}, {"derived_sha256", pgText}, {"health", pgText}, {"publisher_verified", pgText},
		{"finding_severities", pgText}, {"policy_failing", pgText}, {"policy_digest", pgText}, {"policy_refused", pgText}},
	args: func(a []any, r agentRecord) []any {
		return append(a, r.PK, r.Name, r.Description, r.Provider, r.AgentVersion, r.Shape, r.ProtocolVersions,
			r.Summary, r.RawSHA256, r.Seq, r.CurrentVersion, r.UpdatedAt, r.FetchedAt, r.SignatureStatus, r.AuditCodes,
			r.SignatureTrust, r.ApprovedVersion, r.DerivedSHA256, r.Health, publisherVerifiedValue(r.PublisherVerified),
			severitiesColumn(r.FindingSeverities), r.PolicyFailing, r.PolicyDigest, r.PolicyRefused)
	},
}

// agentHealthRow is a health change of one agent.
type agentHealthRow struct {
	PK        int64
	Health    string
	Seq       int64
	UpdatedAt time.Time
	// prev is the seq the agent had before (not written): the index
	// applies the change only on that state (see fieldUpdate).
	prev int64
}

var agentHealthUpdate = bulkUpdate[agentHealthRow]{
	table: "agents", key: "pk",
	cols: []bulkCol{{"pk", pgBigint}, {"health", pgText}, {"seq", pgBigint}, {"updated_at", pgTimestamp}},
	args: func(a []any, r agentHealthRow) []any { return append(a, r.PK, r.Health, r.Seq, r.UpdatedAt) },
}

type cardVersionRecord struct {
	AgentPK    int64  `gorm:"column:agent_pk;primaryKey"`
	Number     int    `gorm:"primaryKey"`
	SHA256     string `gorm:"column:sha256"`
	Size       int
	Source     string
	ReceivedAt time.Time
	Raw        []byte
}

func (cardVersionRecord) TableName() string { return "card_versions" }

var cardVersionsTable = bulkTable[cardVersionRecord]{
	name: "card_versions",
	cols: []bulkCol{{"agent_pk", pgBigint}, {"number", pgInteger}, {"sha256", pgText}, {"size", pgInteger},
		{"source", pgText}, {"received_at", pgTimestamp}, {"raw", pgBytea}},
	args: func(a []any, r cardVersionRecord) []any {
		return append(a, r.AgentPK, r.Number, r.SHA256, r.Size, r.Source, r.ReceivedAt, r.Raw)
	},
}

// skillRow is one skill of an agent's current card. The list columns
// hold JSON arrays.
type skillRow struct {
	AgentPK                                   int64
	Ordinal                                   int
	SkillID, Name, Description                string
	Examples, Tags, InputModes, OutputModes   string
	InputModesInherited, OutputModesInherited bool
}

var skillsTable = bulkTable[skillRow]{
	name: "skills",
	cols: []bulkCol{{"agent_pk", pgBigint}, {"ordinal", pgInteger}, {"skill_id", pgText}, {"name", pgText},
		{"description", pgText}, {"examples", pgText}, {"tags", pgText}, {"input_modes", pgText},
		{"output_modes", pgText}, {"input_modes_inherited", pgBoolean}, {"output_modes_inherited", pgBoolean}},
	args: func(a []any, r skillRow) []any {
		return append(a, r.AgentPK, r.Ordinal, r.SkillID, r.Name, r.Description, r.Examples, r.Tags,
			r.InputModes, r.OutputModes, r.InputModesInherited, r.OutputModesInherited)
	},
}

type interfaceRow struct {
	AgentPK                               int64
	Ordinal                               int
	URL, Binding, ProtocolVersion, Tenant string
}

var interfacesTable = bulkTable[interfaceRow]{
	name: "interfaces",
	cols: []bulkCol{{"agent_pk", pgBigint}, {"ordinal", pgInteger}, {"url", pgText}, {"binding", pgText},
		{"protocol_version", pgText}, {"tenant", pgText}},
	args: func(a []any, r interfaceRow) []any {
		return append(a, r.AgentPK, r.Ordinal, r.URL, r.Binding, r.ProtocolVersion, r.Tenant)
	},
}

// schemeRow is one security scheme; Details is the card.SecurityScheme as JSON.
type schemeRow struct {
	AgentPK             int64
	Name, Type, Details string
}

var schemesTable = bulkTable[schemeRow]{
	name: "security_schemes",
	cols: []bulkCol{{"agent_pk", pgBigint}, {"name", pgText}, {"type", pgText}, {"details", pgText}},
	args: func(a []any, r schemeRow) []any { return append(a, r.AgentPK, r.Name, r.Type, r.Details) },
}

type findingRow struct {
	AgentPK                       int64
	Ordinal                       int
	Code, Severity, Path, Message string
}

var findingsTable = bulkTable[findingRow]{
	name: "lint_findings",
	cols: []bulkCol{{"agent_pk", pgBigint}, {"ordinal", pgInteger}, {"code", pgText}, {"severity", pgText},
		{"path", pgText}, {"message", pgText}},
	args: func(a []any, r findingRow) []any {
		return append(a, r.AgentPK, r.Ordinal, r.Code, r.Severity, r.Path, r.Message)
	},
}

// crawlStateRow is the crawl state of a new agent.
type crawlStateRow struct {
	AgentPK     int64
	NextCheckAt time.Time
	Paused      bool
}

var crawlStateTable = bulkTable[crawlStateRow]{
	name: "crawl_state",
	cols: []bulkCol{{"agent_pk", pgBigint}, {"next_check_at", pgTimestamp}, {"paused", pgBoolean}},
	args: func(a []any, r crawlStateRow) []any { return append(a, r.AgentPK, r.NextCheckAt, r.Paused) },
}

// crawlOutcomeRow is what one check changes in crawl_state. A nil field
// keeps the stored value.
type crawlOutcomeRow struct {
	AgentPK             int64
	NextCheckAt         time.Time
	ConsecutiveFailures int
	LastCheckAt         time.Time
	ServedURL           *string
	LegacyPath          *bool
	LastSuccessAt       *time.Time
	ETag, LastModified  *string
	ErrorClass          *string
	ErrorMessage        *string
	ErrorStatus         *int
	ErrorAt             *time.Time
}

var crawlOutcomeUpdate = bulkUpdate[crawlOutcomeRow]{
	table: "crawl_state", key: "agent_pk",
	cols: []bulkCol{{"agent_pk", pgBigint}, {"next_check_at", pgTimestamp}, {"consecutive_failures", pgInteger},
		{"last_check_at", pgTimestamp}, {"served_url", pgText + keep}, {"legacy_path", pgBoolean + keep},
		{"last_success_at", pgTimestamp + keep}, {"etag", pgText + keep}, {"last_modified", pgText + keep},
		{"last_error_class", pgText + keep}, {"last_error_message", pgText + keep},
		{"last_error_status", pgInteger + keep}, {"last_error_at", pgTimestamp + keep}},
	// Every check ends the lease it was made under.
	set: "lease_owner = '', lease_until = NULL",
	args: func(a []any, r crawlOutcomeRow) []any {
		return append(a, r.AgentPK, r.NextCheckAt, r.ConsecutiveFailures, r.LastCheckAt, r.ServedURL, r.LegacyPath,
			r.LastSuccessAt, r.ETag, r.LastModified, r.ErrorClass, r.ErrorMessage, r.ErrorStatus, r.ErrorAt)
	},
}

type fetchLogRow struct {
	AgentPK         int64
	At              time.Time
	OK, NotModified bool
	Status          int
	LatencyMS       int64
	Class, Message  string
}

var fetchLogTable = bulkTable[fetchLogRow]{
	name: "fetch_log",
	cols: []bulkCol{{"agent_pk", pgBigint}, {"at", pgTimestamp}, {"ok", pgBoolean}, {"not_modified", pgBoolean},
		{"status", pgInteger}, {"latency_ms", pgInteger}, {"class", pgText}, {"message", pgText}},
	args: func(a []any, r fetchLogRow) []any {
		return append(a, r.AgentPK, r.At, r.OK, r.NotModified, r.Status, r.LatencyMS, r.Class, r.Message)
	},
}

// changeRow is one entry of the change feed; its seq is assigned by the
// database.
type changeRow struct {
	AgentPK                int64
	AgentID, CardURL, Kind string
	Version                int
	At                     time.Time
	// Detail is an event's JSON data; empty for the feed's own kinds.
	Detail string
}

var changesTable = bulkTable[changeRow]{
	name: "changes",
	cols: []bulkCol{{"agent_pk", pgBigint}, {"agent_id", pgText}, {"card_url", pgText}, {"kind", pgText},
		{"version", pgInteger}, {"at", pgTimestamp}, {"detail", pgText}},
	args: func(a []any, r changeRow) []any {
		return append(a, r.AgentPK, r.AgentID, r.CardURL, r.Kind, r.Version, r.At, r.Detail)
	},
}

type verificationKidRow struct {
	KID     string
	AgentPK int64
}

var verificationKidsTable = bulkTable[verificationKidRow]{
	name: "verification_kids",
	cols: []bulkCol{{"kid", pgText}, {"agent_pk", pgBigint}},
	args: func(a []any, r verificationKidRow) []any { return append(a, r.KID, r.AgentPK) },
}

// summaryRecord is the stored form of a Summary's card-derived part, the
// agents.summary column. It is apart from Summary so that no change of the
// domain or API shapes can change what is stored: its JSON names are the
// storage format, pinned by a golden test. The other Summary fields are
// read from their own columns.
type summaryRecord struct {
	Name             string               `json:"name"`
	Description      string               `json:"description"`
	Version          string               `json:"version"`
	Provider         string               `json:"provider,omitempty"`
	ProtocolVersions []string             `json:"protocol_versions"`
	Bindings         []string             `json:"bindings"`
	SecuritySchemes  []string             `json:"security_schemes"`
	InputModes       []string             `json:"input_modes"`
	OutputModes      []string             `json:"output_modes"`
	Skills           []skillSummaryRecord `json:"skills"`
}

type skillSummaryRecord struct {
	ID   string   `json:"id"`
	Name string   `json:"name"`
	Tags []string `json:"tags,omitempty"`
}

func recordOfSummary(s Summary) summaryRecord {
	r := summaryRecord{
		Name: s.Name, Description: s.Description, Version: s.Version, Provider: s.Provider,
		ProtocolVersions: nonNil(s.ProtocolVersions), Bindings: nonNil(s.Bindings),
		SecuritySchemes: nonNil(s.SecuritySchemes), InputModes: nonNil(s.InputModes), OutputModes: nonNil(s.OutputModes),
		Skills: make([]skillSummaryRecord, len(s.Skills)),
	}
	for i, sk := range s.Skills {
		r.Skills[i] = skillSummaryRecord{ID: sk.ID, Name: sk.Name, Tags: sk.Tags}
	}
	return r
}

func (r summaryRecord) summary() Summary {
	s := Summary{
		Name: r.Name, Description: r.Description, Version: r.Version, Provider: r.Provider,
		ProtocolVersions: r.ProtocolVersions, Bindings: r.Bindings, SecuritySchemes: r.SecuritySchemes,
		InputModes: r.InputModes, OutputModes: r.OutputModes, Skills: make([]SkillSummary, len(r.Skills)),
	}
	for i, sk := range r.Skills {
		s.Skills[i] = SkillSummary{ID: sk.ID, Name: sk.Name, Tags: sk.Tags}
	}
	return s
}

func encodeSummaryRecord(r summaryRecord) (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("encoding summary: %w", err)
	}
	return string(b), nil
}

func decodeSummaryRecord(raw string) (summaryRecord, error) {
	var r summaryRecord
	if err := unmarshalSummaryRecord(raw, &r); err != nil {
		return summaryRecord{}, fmt.Errorf("decoding stored summary: %w", err)
	}
	return r, nil
}

// decodeSummary reads an agents.summary column into the card-derived part
// of a Summary; the caller sets the fields kept in their own columns.
func decodeSummary(raw string) (Summary, error) {
	r, err := decodeSummaryRecord(raw)
	if err != nil {
		return Summary{}, err
	}
	return r.summary(), nil
}

// facetRecord is one (field, value) pair of a document's facets.
type facetRecord struct {
	Field string
	Value string
}
