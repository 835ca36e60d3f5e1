package card

import (
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// PublisherOfCard is the publisher of the agent whose card is at cardURL:
// the registrable domain of its host (RegistrableDomain). A card kept
// without a URL it is served at (an imported file, a urn: card URL) has
// no publisher. Errors wrap ErrInvalidURL.
func PublisherOfCard(cardURL string) (string, error) {
	if strings.HasPrefix(cardURL, cardURNPrefix) {
		return "", fmt.Errorf("%w: %q is not served at a host", ErrInvalidURL, cardURL)
	}
	_, host, err := parseHTTP(cardURL)
	if err != nil {
		return "", err
	}
	return RegistrableDomain(hostName(host)), nil
}

// RegistrableDomain is the publisher a host belongs to, in the canonical
// form of card URLs (ASCII, lower case): the host's public suffix and one
// label more, by the public suffix list with its private section
// (golang.org/x/net/publicsuffix: agents.acme.co.uk → acme.co.uk,
// alice.github.io → alice.github.io). An IP address is its own publisher;
// so is a host that is itself a public suffix or a single label (co.uk, an
// intranet name). Every name under localhost is the one machine
// (RFC 6761 §6.3), so its publisher is localhost. host is as
// canonicalHost writes it (an IPv6 address without brackets).
func RegistrableDomain(host string) string {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String()
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return "localhost"
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		// The host is a public suffix itself, or has no suffix to cut.
		return host
	}
	return d
}

// NormalizePublisher is the publisher a person names by typing it (any
// case, a Unicode domain, a trailing dot, brackets around an IPv6 address,
// or a host on the publisher's domain), in the form RegistrableDomain
// gives, so that a filter or an address finds the publisher however it
// was spelled. It answers "" for what cannot be a host.
func NormalizePublisher(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "/?#@ ") {
		return ""
	}
	h, err := canonicalHost(strings.Trim(s, "[]"))
	if err != nil {
		return ""
	}
	return RegistrableDomain(h)
}

// hostName is the name or address of a canonical host[:port], without the
// port and the brackets of an IPv6 literal.
func hostName(hostport string) string {
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		return hostport[1:end]
	}
	name, _, _ := strings.Cut(hostport, ":")
	return name
}
