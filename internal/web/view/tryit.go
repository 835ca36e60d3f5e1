package view

import "time"

// TryIt is the "Try it" page of an agent: the compose form and the
// caller's past runs.
type TryIt struct {
	AgentName, AgentURL string
	// Action is where the compose form posts.
	Action    string
	CSRFToken string
	// Interfaces are the card's declared interfaces to pick from.
	Interfaces []TryInterface
	// AskVersion: some interface declares no protocol version, so the
	// tester picks the one to speak there.
	AskVersion bool
	Creds      CredentialForm
	// MaxFile is the largest file part the proxy accepts, in bytes.
	MaxFile int64
	Runs    []RunSummary
	// Script is the URL of the script that streams a run into the page.
	Script string
	// OAuth offers signing in to the agent's authorization-code schemes.
	OAuth OAuthForm
	// Conversation is the id the next run takes: a sign-in prepared it,
	// and its token waits (in memory) for that run.
	Conversation string
}

// OAuthForm starts an OAuth 2.0 sign-in (authorization code with PKCE) at
// one of the card's schemes; empty Schemes means none to offer.
type OAuthForm struct {
	Action, CSRFToken string
	// Callback is the redirect URI the tester registers with the agent's
	// authorization server.
	Callback string
	Schemes  []OAuthScheme
}

// DefaultScopes are the scopes to ask for: those the card declares, when
// it has one such scheme.
func (f OAuthForm) DefaultScopes() string {
	if len(f.Schemes) != 1 {
		return ""
	}
	return f.Schemes[0].Scopes
}

// OAuthScheme is one oauth2 scheme with an authorizationCode flow, and
// the scopes it declares (space-separated).
type OAuthScheme struct {
	Name, Scopes string
	// TokenHost is where the code and the client secret go (the flow's
	// token URL's host), shown before anything is typed.
	TokenHost string
}

// TryInterface is one declared interface, by its index in the card.
type TryInterface struct {
	Value, Label string
}

// CredentialForm says which credential inputs the card's security schemes
// call for. The inputs never carry a value: a secret is typed, sent, and
// never shown back.
type CredentialForm struct {
	Bearer, APIKey, Basic, ClientCredentials bool
	// Schemes names the card's schemes, for the tester to read.
	Schemes []string
	// Remembered: the registry holds (in memory) the credentials this
	// tester gave earlier in the conversation; empty inputs reuse them.
	Remembered bool
}

// Any tells whether the card asks for any credential the proxy can send.
func (f CredentialForm) Any() bool {
	return f.Bearer || f.APIKey || f.Basic || f.ClientCredentials
}

// RunSummary is one past run in a list.
type RunSummary struct {
	URL, State, ErrorCode string
	CreatedAt             time.Time
}

// Run is one run with its transcript.
type Run struct {
	AgentName, AgentURL, TryURL string
	URL, State, ErrorCode       string
	CreatedAt                   time.Time
	// Withheld: another tester's run made with credentials; the page
	// says it happened, without its transcript.
	Withheld bool
	Turns    []Turn
	// Result is what the conversation produced last: artifacts, or the
	// agent's message.
	Result []Item
	// ReplyURL is set when the task waits for the tester
	// (input-required, auth-required); CancelURL while it may still be
	// canceled.
	ReplyURL, CancelURL string
	CSRFToken           string
	Creds               CredentialForm
	// OAuth offers signing in again before the reply (auth-required).
	OAuth   OAuthForm
	MaxFile int64
	Script  string
}

// Turn is one operation of a run.
type Turn struct {
	Op             string
	StartedAt      time.Time
	Interface      string
	CredentialKind string
	Sent           []Item
	Events         []Event
	// Violations are the protocol rules the agent broke, as
	// "code: detail".
	Violations []string
	ErrorCode  string
	Error      string
}

// Event is one relayed A2A event.
type Event struct {
	Seq   int
	Kind  string
	State string
	Items []Item
}

// Item is one part of a message or artifact, as shown.
type Item struct {
	// Kind is text, data, file or url.
	Kind string
	// Text is the text, the data as JSON, or the URL.
	Text string
	// Artifact names the artifact the part belongs to, if any.
	Artifact  string
	Filename  string
	MediaType string
	Size      int
}
