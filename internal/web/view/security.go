package view

// Security is the fleet security report page: every number links to the
// console search that lists the agents it counts.
type Security struct {
	// Agents counts the agents the caller sees.
	Agents                       int
	Signature, Schemes, Findings []SecurityCount
	// Severity counts agents per finding severity, error first.
	Severity              []SecurityCount
	Anonymous, KeyChanges SecurityCount
	// RecentKeyChanges are the key changes of the last 30 days.
	RecentKeyChanges  SecurityCount
	PlainHTTP         SecurityCount
	PublisherVerified SecurityCount
	// Charts draw the report's daily history; HistoryNote says whose
	// agents it counts.
	Charts      []Chart
	HistoryNote string
	// Policy counts agents per admission-policy rule failing.
	Policy []SecurityCount
}

// SecurityCount is one number of the report. Label is a facet value (a
// signature status, a scheme type, a finding code): from the catalog,
// shown escaped. URL is the console search listing the agents counted.
type SecurityCount struct {
	Label, Kind string
	Count       int
	URL         string
}

// Publisher is a publisher's page: its agents the caller sees, each
// number linking to the search listing the agents it counts.
type Publisher struct {
	// Domain is the publisher (ASCII, as the registry writes it).
	Domain   string
	Agents   int
	Verified SecurityCount
	// Signature, Findings and Health count agents per value.
	Signature, Findings, Health []SecurityCount
	// Results are the first agents; SearchURL lists them all.
	Results   []Result
	SearchURL string
}
