// Package proxy runs test tasks against a catalogued agent with the
// official A2A Go SDK (github.com/a2aproject/a2a-go/v2): it builds an SDK
// client from the interfaces the stored card declares, sends the caller's
// message (or gets, cancels, resubscribes to a task), relays the agent's
// events as they arrive and records what happened, for the transcript a
// run keeps as evidence.
//
// Invariants:
//   - Only URLs the stored card declares are called (an interface's URL, an
//     OAuth2 token URL of a declared scheme), and every connection goes
//     through the safe client's address policy: HTTP through its
//     *http.Client, gRPC through its dialer.
//   - A version the card does not declare is never guessed: an interface
//     whose version is card.VersionUnknown is skipped unless the caller
//     names the version to speak.
//   - Credentials live for one call: they are never logged, never returned,
//     and every string the proxy hands back (events, errors) is scrubbed of
//     them.
package proxy

import (
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/safehttp"
)

// Errors callers classify with errors.Is.
var (
	// ErrInterfaceNotDeclared: the caller picked a URL the card does not
	// declare.
	ErrInterfaceNotDeclared = errors.New("proxy: interface not declared by the card")
	// ErrVersionUnknown: the chosen interface does not say which protocol
	// version it speaks and the caller did not pick one.
	ErrVersionUnknown = errors.New("proxy: the interface declares no protocol version; pick one")
	// ErrNoUsableInterface: no declared interface has a binding and version
	// the proxy speaks.
	ErrNoUsableInterface = errors.New("proxy: no declared interface the proxy can speak")
	// ErrUnreachable: every interface tried failed to connect.
	ErrUnreachable = errors.New("proxy: agent unreachable")
	// ErrSelf: every interface tried, or the token URL, leads to the
	// registry itself, which the safe client never calls (safehttp.Self).
	ErrSelf = errors.New("proxy: the URL leads to the registry itself, which the registry never calls")
	// ErrAgent: the agent answered with an error (an A2A error, an HTTP
	// error status, a malformed answer).
	ErrAgent = errors.New("proxy: the agent answered with an error")
	// ErrCredentials: the credentials do not match a scheme the card
	// declares, or are incomplete.
	ErrCredentials = errors.New("proxy: credentials do not fit the card's security schemes")
	// ErrTokenRequest: the OAuth2 token endpoint refused the client
	// credentials or could not be reached.
	ErrTokenRequest = errors.New("proxy: OAuth2 token request failed")
	// ErrIssuer: an authorization response's iss is not the issuer the
	// sign-in started with, or is missing where the issuer promised it
	// (RFC 9207 §2.4); its code is sent nowhere.
	ErrIssuer = errors.New("proxy: the authorization response comes from another issuer")
	// ErrInvalidMessage: the message breaks the proxy's limits or has a
	// malformed part.
	ErrInvalidMessage = errors.New("proxy: invalid message")
	// ErrMessageTooLarge: the message or one of its files is over the
	// configured size.
	ErrMessageTooLarge = errors.New("proxy: message too large")
	// ErrRunTimeout: the operation passed the maximum run duration.
	ErrRunTimeout = errors.New("proxy: run took longer than allowed")
)

// Options configure a Proxy.
type Options struct {
	// Client makes every outbound connection. Build it with a negative
	// Timeout (streams last longer than any fixed exchange limit; MaxRun
	// bounds them instead) and negative MaxRedirects (a redirect would
	// make the proxy call a URL the card does not declare).
	Client *safehttp.Client
	// MaxRun bounds one operation, streams included. Zero means 5 minutes.
	MaxRun time.Duration
	// MaxMessageBytes bounds the encoded message; MaxFileBytes one file
	// part's bytes. Zero means 4 MiB and 2 MiB.
	MaxMessageBytes int64
	MaxFileBytes    int64
	// MaxEvents bounds the events one operation records (and relays): a
	// transcript is held in memory until the operation ends. Zero means
	// 2000.
	MaxEvents int
	// TokenHosts are hosts (host or host:port, lower case, as token URLs
	// write them) that may receive an authorization code issued on
	// another origin, when the scheme names no issuer metadata
	// (--oauth-token-hosts).
	TokenHosts []string
	Logger     *slog.Logger
}

// Defaults of Options.
const (
	DefaultMaxRun          = 5 * time.Minute
	DefaultMaxMessageBytes = 4 << 20
	DefaultMaxFileBytes    = 2 << 20
	DefaultMaxEvents       = 2000
)

// Proxy talks to agents. It is safe for concurrent use.
type Proxy struct {
	client *safehttp.Client
	opts   Options
	log    *slog.Logger
	now    func() time.Time
}

// New returns a Proxy; opts.Client must not be nil.
func New(opts Options) *Proxy {
	if opts.MaxRun <= 0 {
		opts.MaxRun = DefaultMaxRun
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = DefaultMaxEvents
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	hosts := make([]string, len(opts.TokenHosts))
	for i, h := range opts.TokenHosts {
		hosts[i] = strings.ToLower(h)
	}
	opts.TokenHosts = hosts
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Proxy{client: opts.Client, opts: opts, log: log, now: time.Now}
}

// Limits returns the effective size and time limits.
func (p *Proxy) Limits() (maxRun time.Duration, maxMessage, maxFile int64) {
	return p.opts.MaxRun, p.opts.MaxMessageBytes, p.opts.MaxFileBytes
}
