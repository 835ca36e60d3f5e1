package view

import "time"

// Audit is a page of the audit log, newest first.
type Audit struct {
	Entries []AuditEntry
	// Older is the URL of the next (older) page; "" on the last.
	Older string
}

// AuditEntry is one audited write.
type AuditEntry struct {
	At time.Time
	// Who is the caller's name or email, else their subject; Subject is
	// shown beside it when it differs.
	Who, Subject, Role string
	// System is true for the registry acting on a request's behalf
	// (development mode).
	System bool
	Action string
	// TargetKind is "agent" or "key"; TargetURL links to the agent's
	// page ("" for a key, or an agent since removed).
	TargetKind, TargetID, TargetURL string
	// Detail is what the write changed, as compact JSON.
	Detail string
	// RequestID is the registry's id of the request; ClientRequestID the
	// one the client sent, shown apart.
	RequestID, ClientRequestID string
	ClientAddr                 string
}

// Remove is the confirmation page of removing an agent.
type Remove struct {
	// Name and CardURL are card data, shown escaped.
	Name, CardURL string
	// URL is the agent page's path.
	URL       string
	CSRFToken string
}

// Crawl is the crawler status page.
type Crawl struct {
	// Due counts agents due and not being checked; OldestDue is when the
	// most overdue was due, Lag how long ago that is.
	Due       int
	OldestDue time.Time
	Lag       time.Duration
	Failing   []FailingHost
}

// FailingHost is a host whose agents' last checks failed.
type FailingHost struct {
	// Host comes from card URLs: card data, shown escaped.
	Host   string
	Agents int
	// Class and At are its latest failure's.
	Class string
	At    time.Time
}
