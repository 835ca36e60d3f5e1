package safehttp

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrReservedName is wrapped by every refusal of a name reserved for
// documentation, testing or as invalid; the detail is in
// *ReservedNameError.
var ErrReservedName = errors.New("safehttp: reserved name is never looked up")

// ReservedNameError tells which name was refused before any lookup.
type ReservedNameError struct {
	// Host is the name the request asked for.
	Host string
	// Domain is the reserved domain Host lies in: "example", "test",
	// "invalid", "example.com", "example.net" or "example.org".
	Domain string
}

func (e *ReservedNameError) Error() string {
	return fmt.Sprintf("safehttp: %s is in the reserved domain %s and is never looked up", e.Host, e.Domain)
}

func (e *ReservedNameError) Unwrap() error { return ErrReservedName }

// reservedDomains can never name an agent on the Internet: the top-level
// names of RFC 2606 §2 and RFC 6761 §6.2, §6.4 and §6.5, and the
// second-level names of RFC 2606 §3. Documentation, example cards and
// tests use them, and a card copied from any of those must not make the
// registry ask a resolver, nor reach whoever answers for such a name on a
// misconfigured network. RFC 6761 asks resolver libraries to pass .test
// and .example queries on; the registry is an application that only
// fetches what strangers' cards name, so it refuses them before its
// resolver is asked. "localhost" is not here: RFC 6761 §6.3 makes it
// loopback, answered without a resolver (see localhostAddrs).
var reservedDomains = []string{"example", "test", "invalid", "example.com", "example.net", "example.org"}

// normalizeName lower-cases host and drops one trailing dot, so that
// "Shop.Example." and "shop.example" are judged alike (DNS names are
// case-insensitive, RFC 4343, and the trailing dot only makes a name
// absolute).
func normalizeName(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// reservedDomain returns the reserved domain host lies in.
func reservedDomain(host string) (string, bool) {
	h := normalizeName(host)
	for _, d := range reservedDomains {
		if h == d || strings.HasSuffix(h, "."+d) {
			return d, true
		}
	}
	return "", false
}

// localhostAddrs are the addresses of "localhost" and every name under
// it, which RFC 6761 §6.3 says resolver libraries should answer with
// loopback addresses, never asking a DNS server. IPv4 first, as most
// /etc/hosts files list them. Whether a connection may go there is the
// address policy's decision, like any other address's.
var localhostAddrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}

func isLocalhost(host string) bool {
	h := normalizeName(host)
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}
