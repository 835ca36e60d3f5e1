// Package safehttp is the registry's one outbound HTTP client. Agent cards,
// JWKS documents, probes and proxied A2A tasks all name URLs chosen by
// strangers, so every connection is checked against an address policy
// after DNS resolution, redirects and response sizes are capped, and proxy
// settings from the environment are ignored.
//
// Names reserved for documentation, testing or as invalid (RFC 2606, RFC
// 6761: .example, .test, .invalid, example.com) are refused before any
// lookup, and localhost names are loopback without one (names.go).
//
// The address check runs in the dialer's Control hook: it sees the address
// the socket is about to connect to, after the resolver ran, for every
// connection of every redirect hop and retry. A hostname that resolves to a
// public address at check time and a private one at connect time (DNS
// rebinding) is therefore refused, and a refused connection sends no packet.
package safehttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strings"
	"time"
)

// Errors callers classify with errors.Is. They reach the caller wrapped in
// *url.Error (and *net.OpError for dial refusals).
var (
	ErrTooManyRedirects  = errors.New("safehttp: too many redirects")
	ErrRedirectRefused   = errors.New("safehttp: redirect refused")
	ErrUnsupportedScheme = errors.New("safehttp: only http and https URLs are allowed")
	// ErrHeadersTooLarge: the response's status line and headers passed
	// Config.MaxResponseHeaderBytes.
	ErrHeadersTooLarge = errors.New("safehttp: response headers too large")
)

// Config tunes a Client. Zero fields take the value DefaultConfig gives
// them, so Config{AllowNetworks: nets} is a complete configuration.
type Config struct {
	// AllowNetworks opens otherwise denied ranges, e.g. the private network
	// enterprise agents live on. Cloud metadata addresses are opened only by
	// an entry naming the single address.
	AllowNetworks []netip.Prefix
	// Timeout bounds a whole exchange, redirects and body reading
	// included. Negative means no overall limit (streams); the caller's
	// context then bounds the exchange.
	Timeout time.Duration
	// DialTimeout, TLSHandshakeTimeout and ResponseHeaderTimeout bound each
	// phase of one connection.
	DialTimeout           time.Duration
	TLSHandshakeTimeout   time.Duration
	ResponseHeaderTimeout time.Duration
	// MaxBodyBytes caps every response body, counted after decompression.
	// Negative means no cap (streams).
	MaxBodyBytes int64
	// MaxResponseHeaderBytes caps the status line and headers.
	MaxResponseHeaderBytes int64
	// MaxRedirects is how many redirects one request may follow. Negative
	// means none.
	MaxRedirects int
	// UserAgent is sent when the request sets none.
	UserAgent string
	// RootCAs verifies servers; nil means the system roots. Enterprise
	// directories set their private CA here.
	RootCAs *x509.CertPool
	// MaxIdleConnsPerHost keeps that many connections to one host for
	// reuse; set it to the crawler's per-host concurrency so connections
	// are not closed and reopened. Zero means 4.
	MaxIdleConnsPerHost int
	// Resolver looks up every name a connection or Client.Resolve needs,
	// under the caller's context; nil means net.DefaultResolver. Reserved
	// and localhost names never reach it (see Client.Resolve).
	Resolver *net.Resolver
	// Self is the registry's own server, which requests never reach
	// whatever AllowNetworks opens (see Self); nil refuses nothing on
	// that ground. Clients of one process share one Self.
	Self *Self
}

// Defaults, see Config.
const (
	DefaultTimeout                = 10 * time.Second
	DefaultDialTimeout            = 5 * time.Second
	DefaultTLSHandshakeTimeout    = 5 * time.Second
	DefaultResponseHeaderTimeout  = 10 * time.Second
	DefaultMaxBodyBytes           = 1 << 20
	DefaultMaxResponseHeaderBytes = 64 << 10
	DefaultMaxRedirects           = 5
)

// DefaultUserAgent is "a2a-registry/<module version>", "a2a-registry/dev"
// for builds without version information.
var DefaultUserAgent = func() string {
	v := "dev"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return "a2a-registry/" + v
}()

// DefaultConfig returns the defaults with an empty allowlist: only globally
// reachable addresses are dialled.
func DefaultConfig() Config {
	return Config{
		Timeout:                DefaultTimeout,
		DialTimeout:            DefaultDialTimeout,
		TLSHandshakeTimeout:    DefaultTLSHandshakeTimeout,
		ResponseHeaderTimeout:  DefaultResponseHeaderTimeout,
		MaxBodyBytes:           DefaultMaxBodyBytes,
		MaxResponseHeaderBytes: DefaultMaxResponseHeaderBytes,
		MaxRedirects:           DefaultMaxRedirects,
		UserAgent:              DefaultUserAgent,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = d.DialTimeout
	}
	if c.TLSHandshakeTimeout <= 0 {
		c.TLSHandshakeTimeout = d.TLSHandshakeTimeout
	}
	if c.ResponseHeaderTimeout <= 0 {
		c.ResponseHeaderTimeout = d.ResponseHeaderTimeout
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = d.MaxBodyBytes
	}
	if c.MaxResponseHeaderBytes <= 0 {
		c.MaxResponseHeaderBytes = d.MaxResponseHeaderBytes
	}
	if c.MaxRedirects == 0 {
		c.MaxRedirects = d.MaxRedirects
	}
	if c.MaxIdleConnsPerHost <= 0 {
		c.MaxIdleConnsPerHost = 4
	}
	if c.UserAgent == "" {
		c.UserAgent = d.UserAgent
	}
	return c
}

// Client sends guarded requests. It is safe for concurrent use.
type Client struct {
	cfg       Config
	transport *guardedTransport
	client    *http.Client
	dialer    dialer
}

// New builds a Client. The allowlist is copied.
func New(cfg Config) *Client {
	cfg = cfg.withDefaults()
	cfg.AllowNetworks = append([]netip.Prefix(nil), cfg.AllowNetworks...)
	d := dialer{pol: policy{allow: cfg.AllowNetworks}, timeout: cfg.DialTimeout, resolver: cfg.Resolver, self: cfg.Self}
	gt := &guardedTransport{base: newBase(cfg, d), maxBody: cfg.MaxBodyBytes, userAgent: cfg.UserAgent, self: cfg.Self}
	if cfg.Self != nil {
		// The requests Self.Exempt allows go through their own pool of
		// connections, which no other request can reuse.
		d.reachSelf = true
		gt.selfBase = newBase(cfg, d)
		d.reachSelf = false
	}
	c := &Client{cfg: cfg, transport: gt, dialer: d}
	c.client = c.HTTPClient()
	return c
}

func newBase(cfg Config, d dialer) *http.Transport {
	return &http.Transport{
		// A proxy would make the connection, so the dial check would judge
		// the proxy and not the destination: environment proxies are ignored.
		Proxy:                  nil,
		DialContext:            d.dial,
		TLSClientConfig:        &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    cfg.TLSHandshakeTimeout,
		ResponseHeaderTimeout:  cfg.ResponseHeaderTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: cfg.MaxResponseHeaderBytes,
		MaxIdleConns:           max(100, 4*cfg.MaxIdleConnsPerHost),
		MaxIdleConnsPerHost:    cfg.MaxIdleConnsPerHost,
		IdleConnTimeout:        90 * time.Second,
	}
}

// Config returns the effective configuration (defaults filled in).
func (c *Client) Config() Config {
	cfg := c.cfg
	cfg.AllowNetworks = append([]netip.Prefix(nil), cfg.AllowNetworks...)
	return cfg
}

// Do sends req. Like http.Client.Do, a non-nil error means a nil response;
// otherwise the caller closes resp.Body. The body is capped at
// Config.MaxBodyBytes; reading past the cap fails with ErrBodyTooLarge.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.client.Do(req)
	if err != nil {
		// When CheckRedirect refuses, net/http returns the previous
		// response (body closed) together with the error; callers of this
		// package get the usual "error means no response".
		return nil, err
	}
	return resp, nil
}

// Get fetches url.
func (c *Client) Get(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

// HTTPClient returns a new *http.Client that shares the guarded transport,
// redirect policy and timeout, for SDKs that take an *http.Client (a2a-go,
// x/oauth2, go-oidc). Callers may change the returned value freely.
func (c *Client) HTTPClient() *http.Client {
	timeout := c.cfg.Timeout
	if timeout < 0 {
		timeout = 0
	}
	return &http.Client{
		Transport:     c.transport,
		CheckRedirect: c.checkRedirect,
		Timeout:       timeout,
	}
}

// Transport returns the guarded round tripper: address policy, scheme
// check, User-Agent and body cap, without the redirect policy or overall
// timeout (those belong to http.Client).
func (c *Client) Transport() http.RoundTripper { return c.transport }

// CloseIdleConnections closes pooled connections, e.g. at shutdown.
func (c *Client) CloseIdleConnections() {
	c.transport.base.CloseIdleConnections()
	if c.transport.selfBase != nil {
		c.transport.selfBase.CloseIdleConnections()
	}
}

// checkRedirect caps hops, keeps to http(s), and refuses https→http: the
// requester chose TLS, and a downgrade would hand the rest of the exchange
// (and, for cards, the content we store and verify) to anyone on the path.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	max := max(c.cfg.MaxRedirects, 0)
	if len(via) > max {
		return fmt.Errorf("%w (limit %d)", ErrTooManyRedirects, max)
	}
	switch req.URL.Scheme {
	case "http", "https":
	default:
		return fmt.Errorf("%w: redirect to scheme %q: %w", ErrRedirectRefused, req.URL.Scheme, ErrUnsupportedScheme)
	}
	if prev := via[len(via)-1]; prev.URL.Scheme == "https" && req.URL.Scheme == "http" {
		return fmt.Errorf("%w: https to http downgrade to %s", ErrRedirectRefused, req.URL.Redacted())
	}
	return nil
}

// guardedTransport adds what every exchange needs regardless of which
// http.Client drives it.
type guardedTransport struct {
	base      *http.Transport
	maxBody   int64
	userAgent string
	// self and selfBase: requests Self.Exempt allows go through selfBase,
	// whose dialer lets them reach the registry itself.
	self     *Self
	selfBase *http.Transport
}

func (t *guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		return nil, errors.New("safehttp: request without URL")
	}
	switch req.URL.Scheme {
	case "http", "https":
	default:
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %q", ErrUnsupportedScheme, req.URL.Scheme)
	}
	// Leaving Accept-Encoding to the transport makes it ask for gzip and
	// decompress transparently, so the body cap below counts decompressed
	// bytes and a gzip bomb stops at the cap. A caller-set Accept-Encoding
	// would make the caller decompress, outside the cap.
	if req.Header.Get("User-Agent") == "" || req.Header.Get("Accept-Encoding") != "" {
		req = req.Clone(req.Context())
		if req.Header.Get("User-Agent") == "" {
			req.Header.Set("User-Agent", t.userAgent)
		}
		req.Header.Del("Accept-Encoding")
	}
	base := t.base
	if exempt, err := t.self.exempts(req); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	} else if exempt {
		base = t.selfBase
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		if headersTooLarge(err) {
			err = fmt.Errorf("%w: %w", ErrHeadersTooLarge, err)
		}
		return nil, err
	}
	if t.maxBody >= 0 && resp.Body != nil && resp.Body != http.NoBody {
		resp.Body = newLimitedBody(resp.Body, resp.ContentLength, t.maxBody)
	}
	return resp, nil
}

// headersTooLarge recognises net/http's refusal of oversized response
// headers. net/http has no exported error for it (transport.go builds it
// with fmt.Errorf, and the HTTP/2 transport's errResponseHeaderListSize is
// unexported), so its two fixed messages are matched here, in the one place
// that sets the limit; TestResponseHeaderCap fails if they change.
func headersTooLarge(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "server response headers exceeded") ||
		strings.Contains(msg, "response header list larger than advertised limit")
}
