package view

import "time"

// Listing is where an agent stands in the listing lifecycle, as its page
// shows it.
type Listing struct {
	State  string
	Reason string
	// Replacement is the id of the agent replacing a deprecated one, and
	// ReplacementURL its page.
	Replacement, ReplacementURL string
	By                          string
	At                          *time.Time
	// Form is the editor's transition form; nil when the caller may not
	// change the listing.
	Form *ListingForm
}

// ListingForm posts a listing transition.
type ListingForm struct {
	Action    string
	CSRFToken string
	// From names the page to come back to ("review" or the agent page).
	From string
}

// Review is the editor's review page: the agents awaiting approval.
type Review struct {
	Items []ReviewItem
	// Bulk approves or rejects the ticked agents at once.
	Bulk BulkForm
}

// BulkForm posts one transition, with one reason, for the ticked agents.
// A refused post shows it again as it was sent, with Error saying why.
type BulkForm struct {
	Action, CSRFToken string
	Reason            string
	Error             string
}

// ReviewFinding is one finding about a pending agent: the card's lint,
// the security audit or the content scan.
type ReviewFinding struct {
	Severity, Code, Message string
}

// ReviewItem is one pending agent with the diff from its approved
// version, when it had one.
type ReviewItem struct {
	ID, URL, Name, CardURL string
	Current                int
	// Approved is the version last approved, 0 when none was.
	Approved int
	Reason   string
	// Diff compares the approved version with the current one; nil for an
	// agent never approved.
	Diff *Diff
	Form ListingForm
	// The card's summary: what it says of itself.
	Description, Provider, CardVersion string
	Skills                             []string
	// Signature is the signature verdict of the current version (the
	// verifier's report when it has one, the stored status else).
	Signature string
	// Findings are the current version's, most severe first.
	Findings []ReviewFinding
	// Checked ticks the agent in the bulk form (a refused post kept).
	Checked bool
}

// Collections is the collections page.
type Collections struct {
	Items []Collection
	// Admin shows the forms that change collections; CSRFToken goes in
	// each.
	Admin     bool
	CSRFToken string
}

// Collection is one collection with the members the caller sees.
type Collection struct {
	Name, Description string
	Groups            []string
	Agents            int
	Members           []Member
	// Action is the URL of its membership forms.
	Action string
	// Candidates is the URL that finds agents to add as the admin types,
	// into the element CandidatesID; Search what the page shows of a
	// search already made (without htmx).
	Candidates, CandidatesID string
	Search                   Candidates
}

// Candidates are the agents an admin's words name, to add to a
// collection.
type Candidates struct {
	// Query is what was typed; Asked that something was.
	Query string
	Asked bool
	Items []Candidate
	// Error says why the words cannot name an agent.
	Error string
}

// Candidate is one agent that can be added: its name and where its card
// is (host and path), so that agents of one name are told apart.
type Candidate struct {
	ID, Name, CardAt string
}

// Member is an agent of a collection.
type Member struct {
	ID, Name, URL string
	// Remove is the URL that takes it out (admin).
	Remove string
}
