package safehttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
)

// ErrSelf is wrapped by every refusal of a request that would reach the
// registry itself; the detail is in *SelfError.
var ErrSelf = errors.New("safehttp: destination is the registry itself")

// ErrNotSelf is returned by Self.Exempt for a URL that is not one of the
// registry's own.
var ErrNotSelf = errors.New("safehttp: not a URL of the registry's own")

// SelfError tells which request was refused for leading to the registry
// itself.
type SelfError struct {
	// Host is the name (or literal) the request asked for.
	Host string
	// Addr is the address and port the connection would have gone to;
	// zero when the name alone gave the registry away, before any lookup.
	Addr netip.AddrPort
	// Credential: the URL is one the registry may reach of its own
	// (Self.Exempt), but the request carried a credential.
	Credential bool
}

func (e *SelfError) Error() string {
	switch {
	case e.Credential:
		return fmt.Sprintf("safehttp: refusing to send credentials to %s: it is the registry itself", e.Host)
	case e.Addr.IsValid():
		return fmt.Sprintf("safehttp: refusing to connect to %s (%s): it is the registry itself", e.Host, e.Addr)
	}
	return fmt.Sprintf("safehttp: refusing to connect to %s: it is the registry itself", e.Host)
}

func (e *SelfError) Unwrap() error { return ErrSelf }

// Self is where the registry itself can be reached: its listen address
// and its public URL. A Client configured with one (Config.Self) never
// sends a request there, whatever Config.AllowNetworks opens: a card, a
// JWKS URL, a token URL or a webhook naming the registry would otherwise
// make the registry call its own API from inside — past the network edge
// the operator put in front of it, from a loopback address, and with
// whatever the caller attached for the agent.
//
// A request is refused
//   - by name, before any lookup, when its host and port are the public
//     URL's (default ports 80 and 443 included) or the listen address's
//     name;
//   - by address, in the dialer's Control hook after resolution (so a name
//     that resolves, or rebinds, to the registry is caught for every
//     connection of every redirect hop), when the connection would go to
//     the listen address, to any local address on the listen port when
//     the registry listens on a wildcard address (0.0.0.0: every local
//     IPv4 address; [::] or no host: every local address of either
//     family), to the unspecified address on the listen port (which
//     reaches the local host), or to an address the public URL's host
//     resolves to on the public port.
//
// The public host's addresses are looked up with the Client's resolver
// when a connection to the public port is about to be made, and kept for
// a minute; a failed lookup keeps the addresses known before. An agent
// served at the same address and port as the registry's public URL (one
// ingress, told apart only by name) is refused too: before the request is
// sent the two cannot be told apart.
//
// The one exception is Exempt: exactly the URLs of the registry's own
// it is given, reached with no credential of any kind.
//
// A Self is safe for concurrent use; one value is shared by every Client
// of a process.
type Self struct {
	mu sync.RWMutex
	// listen are the listen addresses. An unspecified address means every
	// local address of its family (of both for ::); port 0 is not known
	// until Bind.
	listen []netip.AddrPort
	// names are the host names that are the registry at a port: the
	// public URL's host and a listen host given as a name. Their
	// addresses are refused at that port too.
	names []*selfName
	// exempt are the canonical URLs Exempt allows.
	exempt map[string]bool
}

// selfName is a name of the registry's, with the addresses it resolved
// to when last looked up.
type selfName struct {
	host string
	port uint16

	mu    sync.Mutex
	addrs []netip.Addr
	until time.Time
}

// selfLookupTTL bounds how long the addresses of the registry's own
// names are trusted; selfRetry how soon a failed lookup is retried.
const (
	selfLookupTTL = time.Minute
	selfRetry     = 10 * time.Second
)

// NewSelf describes the registry that listens on listen (host:port, as
// given to net.Listen: an empty host or an unspecified address listens on
// every local address; a port of 0 is learned with Bind) and is reached
// at publicURL (empty when users reach it at the listen address).
func NewSelf(listen, publicURL string) (*Self, error) {
	s := &Self{}
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("safehttp: listen address %q: %w", listen, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("safehttp: listen address %q: bad port", listen)
	}
	switch ip, err := netip.ParseAddr(host); {
	case host == "":
		// Go's "tcp" network listens dual-stack on a missing host.
		s.listen = append(s.listen, netip.AddrPortFrom(netip.IPv6Unspecified(), uint16(port)))
	case err == nil:
		s.listen = append(s.listen, netip.AddrPortFrom(ip.WithZone("").Unmap(), uint16(port)))
	case isLocalhost(host):
		for _, a := range localhostAddrs {
			s.listen = append(s.listen, netip.AddrPortFrom(a, uint16(port)))
		}
	default:
		s.names = append(s.names, &selfName{host: normalizeName(host), port: uint16(port)})
	}
	if publicURL == "" {
		return s, nil
	}
	u, err := url.Parse(publicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("safehttp: public URL %q: want an absolute http(s) URL", publicURL)
	}
	pport, err := urlPort(u)
	if err != nil {
		return nil, fmt.Errorf("safehttp: public URL %q: %w", publicURL, err)
	}
	s.names = append(s.names, &selfName{host: normalizeName(u.Hostname()), port: pport})
	return s, nil
}

// urlPort is u's port, or its scheme's default (RFC 9110 §4.2).
func urlPort(u *url.URL) (uint16, error) {
	p := u.Port()
	if p == "" {
		switch u.Scheme {
		case "http":
			return 80, nil
		case "https":
			return 443, nil
		}
		return 0, fmt.Errorf("no port for scheme %q", u.Scheme)
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("bad port %q", p)
	}
	return uint16(n), nil
}

// Bind records the address the server's listener is bound to, which is
// the registry's listen address from then on: a configured port 0 becomes
// the port the system chose.
func (s *Self) Bind(addr net.Addr) error {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return fmt.Errorf("safehttp: bound address %s: %w", addr, err)
	}
	ap = netip.AddrPortFrom(ap.Addr().WithZone("").Unmap(), ap.Port())
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.names {
		if n.port == 0 {
			n.port = ap.Port()
		}
	}
	s.listen = []netip.AddrPort{ap}
	return nil
}

// Exempt lets Clients reach exactly urls, which must be the registry's
// own (by name or by listen address, as Self refuses them), over HTTP
// with no credential of any kind: no Authorization, Proxy-Authorization
// or Cookie header, no user info in the URL, and no header outside the
// few content-negotiation, caching and A2A ones a card fetch, a probe or
// an unauthenticated A2A call sends (exemptHeaders); an API key could
// travel in any other. It is for the registry listed as an A2A agent of
// its own: its card URL and exactly the interface URLs that card
// declares.
//
// The match is on the whole URL (scheme, host, port, path and query):
// another path on the same host — including the paths an HTTP+JSON
// binding adds under its base URL — is refused, and so is a redirect from
// an exempt URL to any other. gRPC calls (Client.DialContext) are never
// exempt: their metadata, where credentials travel, is out of the
// dialer's sight. A request to an exempt URL that carries a credential is
// refused with a *SelfError whose Credential is set. Connections made for
// exempt requests are pooled apart from all others, so no other request
// reuses one.
//
// Each call replaces the set; no URLs removes the exception.
func (s *Self) Exempt(urls ...string) error {
	set := make(map[string]bool, len(urls))
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			return fmt.Errorf("%w: %q: %w", ErrNotSelf, raw, err)
		}
		key, ok := canonicalURL(u)
		if !ok {
			return fmt.Errorf("%w: %q is not an absolute http(s) URL without user info", ErrNotSelf, raw)
		}
		port, _ := urlPort(u)
		if !s.isOwn(u.Hostname(), port) {
			return fmt.Errorf("%w: %q is neither at the public URL's host and port nor at a listen address", ErrNotSelf, raw)
		}
		set[key] = true
	}
	s.mu.Lock()
	s.exempt = set
	s.mu.Unlock()
	return nil
}

// isOwn tells whether host:port is the registry's by name, or by an
// address that needs no lookup.
func (s *Self) isOwn(host string, port uint16) bool {
	if s.namedSelf(host, port) {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && s.atListen(netip.AddrPortFrom(ip.WithZone("").Unmap(), port))
}

// canonicalURL is the form Exempt compares: lower-case scheme and host
// without a trailing dot, the port always written, the path as escaped
// ("/" for none), the raw query, no fragment.
func canonicalURL(u *url.URL) (string, bool) {
	if u == nil || u.User != nil || u.Hostname() == "" || u.Opaque != "" {
		return "", false
	}
	scheme := u.Scheme
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	port, err := urlPort(u)
	if err != nil {
		return "", false
	}
	host := normalizeName(u.Hostname())
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.WithZone("").Unmap().String()
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	key := scheme + "://" + net.JoinHostPort(host, strconv.Itoa(int(port))) + path
	if u.RawQuery != "" {
		key += "?" + u.RawQuery
	}
	return key, true
}

// exemptHeaders are the only request headers an exempt request may carry
// (canonical form): what the crawler's card fetch, the verifier's probes
// and an A2A client without credentials send. Anything else could be an
// API key under a name the card chose.
var exemptHeaders = map[string]bool{
	"Accept":            true,
	"Accept-Language":   true,
	"Content-Type":      true,
	"User-Agent":        true,
	"If-None-Match":     true,
	"If-Modified-Since": true,
	"Cache-Control":     true,
	"Pragma":            true,
	"A2a-Version":       true,
	"A2a-Extensions":    true,
	"X-A2a-Extensions":  true,
}

// exempts tells whether req may reach the registry itself: its URL is one
// Exempt allowed and it carries no credential. A request to an allowed
// URL with a credential is an error; any other is judged like every
// request (false, nil).
func (s *Self) exempts(req *http.Request) (bool, error) {
	if s == nil {
		return false, nil
	}
	s.mu.RLock()
	set := s.exempt
	s.mu.RUnlock()
	if len(set) == 0 {
		return false, nil
	}
	if req.URL.User != nil {
		// canonicalURL refuses user info; the credential is told apart.
		u := *req.URL
		u.User = nil
		if key, ok := canonicalURL(&u); ok && set[key] {
			return false, &SelfError{Host: req.URL.Host, Credential: true}
		}
		return false, nil
	}
	key, ok := canonicalURL(req.URL)
	if !ok || !set[key] {
		return false, nil
	}
	for name := range req.Header {
		if !exemptHeaders[http.CanonicalHeaderKey(name)] {
			return false, &SelfError{Host: req.URL.Host, Credential: true}
		}
	}
	return true, nil
}

// namedSelf tells whether host:port names the registry.
func (s *Self) namedSelf(host string, port uint16) bool {
	h := normalizeName(host)
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, n := range s.names {
		if n.host == h && n.port == port && port != 0 {
			return true
		}
	}
	return false
}

// atListen tells whether a connection to ap reaches a listen address.
func (s *Self) atListen(ap netip.AddrPort) bool {
	s.mu.RLock()
	listen := s.listen
	s.mu.RUnlock()
	ip := ap.Addr().WithZone("").Unmap()
	for _, l := range listen {
		if l.Port() == 0 || l.Port() != ap.Port() {
			continue
		}
		switch {
		case ip == l.Addr(), ip.IsUnspecified():
			// A connection to the unspecified address goes to the local
			// host (Linux and the BSDs route it to loopback).
			return true
		case l.Addr().IsUnspecified():
			// 0.0.0.0 is bound IPv4 only (cmd/registry listenTCP); :: is
			// dual-stack.
			if l.Addr().Is4() && !ip.Is4() {
				continue
			}
			if isLocalAddr(ip) {
				return true
			}
		}
	}
	return false
}

// namesAt returns the registry's names that are reached at port.
func (s *Self) namesAt(port uint16) []*selfName {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*selfName
	for _, n := range s.names {
		if n.port == port && port != 0 {
			out = append(out, n)
		}
	}
	return out
}

// resolve returns the addresses n resolves to, looked up with lookup
// under ctx when those known are older than selfLookupTTL.
func (n *selfName) resolve(ctx context.Context, lookup func(context.Context, string) ([]netip.Addr, error)) []netip.Addr {
	n.mu.Lock()
	addrs, fresh := n.addrs, time.Now().Before(n.until)
	n.mu.Unlock()
	if fresh {
		return addrs
	}
	// Looked up outside the lock: a slow resolver holds up only the
	// connections that need the answer, each under its own context.
	got, err := lookup(ctx, n.host)
	n.mu.Lock()
	defer n.mu.Unlock()
	if err != nil {
		n.until = time.Now().Add(selfRetry)
		return n.addrs
	}
	n.addrs, n.until = got, time.Now().Add(selfLookupTTL)
	return got
}

// isLocalAddr tells whether ip is an address of this host: loopback,
// unspecified, or assigned to one of its interfaces (read at each call:
// addresses come and go with DHCP and container networks).
func isLocalAddr(ip netip.Addr) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	return slices.ContainsFunc(addrs, func(a net.Addr) bool {
		n, ok := a.(*net.IPNet)
		if !ok {
			return false
		}
		x, ok := netip.AddrFromSlice(n.IP)
		return ok && x.Unmap() == ip
	})
}
