package catalog

import (
	"time"

	"github.com/a2aregistry/registry/internal/card"
)

// CrawlTarget is an agent due for a check, as ClaimDue hands it to the
// crawler together with a lease: no other crawler (replica) gets it until
// the lease expires or RecordFetch releases it.
type CrawlTarget struct {
	AgentID string
	CardURL string
	// ETag and LastModified are the validators of the last successful
	// fetch, for a conditional request.
	ETag         string
	LastModified string
	// ConsecutiveFailures counts failed checks since the last success.
	ConsecutiveFailures int
	Health              string
	// RawSHA256 is the hex SHA-256 of the current card's bytes: a check
	// that brings other bytes prechecks them (crawler.Prechecker).
	RawSHA256     string
	NextCheckAt   time.Time
	LastSuccessAt time.Time // zero when never
	// LastCheckAt is when the agent was last checked, successfully or
	// not; zero when never. On-demand checks are throttled by it.
	LastCheckAt time.Time
}

// FetchOutcome is the result of one check of an agent, as the crawler
// decided it: the catalog stores it without judging it.
type FetchOutcome struct {
	AgentID string
	At      time.Time
	// URL is the URL that answered; LegacyPath tells that it was
	// /.well-known/agent.json.
	URL        string
	LegacyPath bool
	Status     int // HTTP status; 0 when no response arrived
	Latency    time.Duration
	// Class is empty on success, else a failure class (crawler.Class*).
	Class   string
	Message string
	// NotModified is a 304: a successful check that changed nothing.
	NotModified  bool
	ETag         string
	LastModified string
	// Card is the parsed card of a 200 response; stored as a new version
	// when its bytes changed.
	Card *card.Card
	// Precheck is the verifier's precheck of Card when its bytes are new
	// (see UpsertInput.Precheck); nil otherwise.
	Precheck *Precheck
	// Health, ConsecutiveFailures and NextCheckAt are the crawler's
	// verdict and schedule after this check.
	Health              string
	ConsecutiveFailures int
	NextCheckAt         time.Time
	// Removed marks the agent gone for good (410): it leaves search
	// results and the change feed reports it removed.
	Removed bool
}

// Health states beyond those in types.go.
const (
	// HealthRemoved is an agent whose card answered 410 Gone.
	HealthRemoved = "removed"
)

// Change kinds of the change feed.
const (
	ChangeCreated = "created"
	ChangeUpdated = "updated"
	ChangeRemoved = "removed"
	// ChangeRestored: an agent an admin had removed was registered again
	// (same id, its history kept).
	ChangeRestored = "restored"
)

// Change is one entry of the change feed.
type Change struct {
	// Seq orders the feed; pass the last one seen as `since`.
	Seq     int64
	Kind    string
	AgentID string
	CardURL string
	Version int
	At      time.Time
	// Federated is set when the agent is in this catalog only because a
	// peer registry lists it: a registry federating from this one skips
	// it, so federation does not loop.
	Federated bool
}

// HealthReport is an agent's recent availability.
type HealthReport struct {
	State               string
	LastCheckAt         *time.Time
	LastSuccessAt       *time.Time
	NextCheckAt         *time.Time
	ConsecutiveFailures int
	LastError           *FetchError
	// Uptime24h and Uptime7d are the shares of successful checks in the
	// window; nil when there was no check.
	Uptime24h *float64
	Uptime7d  *float64
	Paused    bool
}

// FetchError is the last failure of an agent.
type FetchError struct {
	Class   string
	Message string
	Status  int
	At      time.Time
}
