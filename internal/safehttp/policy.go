package safehttp

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrBlockedAddress is wrapped by every refusal of a destination address.
// Callers classify with errors.Is; the detail is in *BlockedError.
var ErrBlockedAddress = errors.New("safehttp: destination address is not allowed")

// ErrInvalidNetwork is wrapped by ParseNetworks for an entry that is neither
// a CIDR prefix nor an IP address.
var ErrInvalidNetwork = errors.New("safehttp: invalid network")

// BlockedError tells which connection was refused and why.
type BlockedError struct {
	// Host is the name (or literal) the request asked for, before DNS.
	Host string
	// IP is the resolved address the connection would have gone to.
	IP netip.Addr
	// Reason names the address class, e.g. "private (RFC 1918)".
	Reason string
}

func (e *BlockedError) Error() string {
	if e.Host == "" || e.Host == e.IP.String() {
		return fmt.Sprintf("safehttp: refusing to connect to %s: %s address", e.IP, e.Reason)
	}
	return fmt.Sprintf("safehttp: refusing to connect to %s (%s): %s address", e.Host, e.IP, e.Reason)
}

func (e *BlockedError) Unwrap() error { return ErrBlockedAddress }

type deniedRange struct {
	prefix netip.Prefix
	reason string
}

// deniedRanges lists every range of the IANA IPv4 and IPv6 Special-Purpose
// Address Registries (RFC 6890 and updates) that is not globally reachable,
// plus multicast and the deprecated site-local range. Order matters only for
// the reason reported: narrower entries come first.
var deniedRanges = func() []deniedRange {
	raw := []struct{ cidr, reason string }{
		// IPv4.
		{"0.0.0.0/32", "unspecified"},
		{"0.0.0.0/8", `"this network" (RFC 791)`},
		{"10.0.0.0/8", "private (RFC 1918)"},
		{"100.64.0.0/10", "shared CGNAT (RFC 6598)"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link-local (RFC 3927)"},
		{"172.16.0.0/12", "private (RFC 1918)"},
		{"192.0.0.0/24", "IETF protocol assignment (RFC 6890)"},
		{"192.0.2.0/24", "documentation (RFC 5737)"},
		{"192.88.99.0/24", "6to4 relay anycast (RFC 7526)"},
		{"192.168.0.0/16", "private (RFC 1918)"},
		{"198.18.0.0/15", "benchmarking (RFC 2544)"},
		{"198.51.100.0/24", "documentation (RFC 5737)"},
		{"203.0.113.0/24", "documentation (RFC 5737)"},
		{"224.0.0.0/4", "multicast"},
		{"255.255.255.255/32", "broadcast"},
		{"240.0.0.0/4", "reserved (RFC 1112)"},
		// IPv6. ::ffff:0:0/96 never reaches this table: addresses are
		// unmapped first. NAT64 and 6to4 are judged by the IPv4 address
		// they embed (see embeddedIPv4).
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"::/96", "IPv4-compatible (deprecated, RFC 4291)"},
		// IPv4-translated (SIIT, RFC 2765 §2.1): not the mapped form, so
		// Unmap leaves it alone, and a translator routes it to the IPv4
		// address it embeds.
		{"::ffff:0:0:0/96", "IPv4-translated (RFC 2765)"},
		{"64:ff9b:1::/48", "local-use NAT64 (RFC 8215)"},
		{"100::/64", "discard-only (RFC 6666)"},
		{"2001::/32", "Teredo (RFC 4380)"},
		{"2001:db8::/32", "documentation (RFC 3849)"},
		{"2001::/23", "IETF protocol assignment (RFC 2928)"},
		{"3fff::/20", "documentation (RFC 9637)"},
		{"5f00::/16", "SRv6 SID (RFC 9602)"},
		{"fc00::/7", "unique local (RFC 4193)"},
		{"fe80::/10", "link-local"},
		{"fec0::/10", "site-local (deprecated, RFC 3879)"},
		{"ff00::/8", "multicast"},
	}
	out := make([]deniedRange, len(raw))
	for i, r := range raw {
		out[i] = deniedRange{netip.MustParsePrefix(r.cidr), r.reason}
	}
	return out
}()

// metadataAddrs are endpoints that hand out credentials or control a
// cloud host: instance metadata (AWS/GCP/Azure/OCI at 169.254.169.254,
// AWS IPv6, Alibaba), container credential endpoints (ECS task roles at
// 169.254.170.2, EKS Pod Identity at 169.254.170.23 and fd00:ec2::23), and
// Azure's WireServer (168.63.129.16, a public address every Azure VM
// reaches on the host). Opening a whole range such as 169.254.0.0/16 or
// fd00::/8 must not open them by accident: only an allowlist entry naming
// the single address does.
var metadataAddrs = map[netip.Addr]string{
	netip.MustParseAddr("169.254.169.254"): "cloud metadata",
	netip.MustParseAddr("fd00:ec2::254"):   "cloud metadata",
	netip.MustParseAddr("100.100.100.200"): "cloud metadata",
	netip.MustParseAddr("169.254.170.2"):   "container credentials",
	netip.MustParseAddr("169.254.170.23"):  "container credentials",
	netip.MustParseAddr("fd00:ec2::23"):    "container credentials",
	netip.MustParseAddr("168.63.129.16"):   "cloud host endpoint",
}

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052
	sixToFour   = netip.MustParsePrefix("2002::/16")    // RFC 3056
)

// embeddedIPv4 returns the IPv4 address a NAT64 or 6to4 address routes to:
// a connection to such an address ends up at the embedded IPv4 host, so
// that host is what must be judged.
func embeddedIPv4(ip netip.Addr) (netip.Addr, string, bool) {
	if !ip.Is6() {
		return netip.Addr{}, "", false
	}
	b := ip.As16()
	switch {
	case nat64Prefix.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), "NAT64", true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), "6to4", true
	}
	return netip.Addr{}, "", false
}

// Decision is the address policy's answer for one address: the one
// answer to "is this address on an allowed network?" that the dialer, the
// verifier's probes and the proxy all ask (Client.Decide).
type Decision struct {
	// Reason names the address class when a connection to the address is
	// refused (e.g. "private (RFC 1918)", "cloud metadata"); "" when it
	// may be dialled.
	Reason string
	// Opened is true when the address may be dialled because the
	// operator's allowlist (Config.AllowNetworks) names it, not because
	// it is globally reachable: a network the operator vouches for, where
	// an agent may be spoken to without TLS.
	Opened bool
}

// Allowed tells whether a connection may go to the address.
func (d Decision) Allowed() bool { return d.Reason == "" }

// policy decides which resolved addresses a connection may go to.
type policy struct {
	allow []netip.Prefix
}

// decide judges ip. An IPv4-mapped address is judged as the IPv4 address
// it is; a NAT64 or 6to4 address as the IPv4 host it routes to.
func (p policy) decide(ip netip.Addr) Decision {
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return Decision{Reason: "invalid"}
	}
	if reason, ok := metadataAddrs[ip]; ok {
		if p.allowsExactly(ip) {
			return Decision{Opened: true}
		}
		return Decision{Reason: reason}
	}
	inner, kind, embeds := embeddedIPv4(ip)
	if embeds {
		if reason, meta := metadataAddrs[inner]; meta && !p.allowsExactly(inner) {
			return Decision{Reason: kind + " address embedding " + reason}
		}
	}
	if p.allows(ip) {
		return Decision{Opened: true}
	}
	if embeds {
		if p.allows(inner) {
			return Decision{Opened: true}
		}
		if r := classify(inner); r != "" {
			return Decision{Reason: kind + " address embedding " + r}
		}
		return Decision{}
	}
	return Decision{Reason: classify(ip)}
}

func (p policy) allows(ip netip.Addr) bool {
	for _, pr := range p.allow {
		if pr.Contains(ip) {
			return true
		}
	}
	return false
}

func (p policy) allowsExactly(ip netip.Addr) bool {
	for _, pr := range p.allow {
		if pr.IsSingleIP() && pr.Addr() == ip {
			return true
		}
	}
	return false
}

// classify returns the special-purpose class of ip, or "" for a globally
// reachable unicast address.
func classify(ip netip.Addr) string {
	for _, d := range deniedRanges {
		if d.prefix.Contains(ip) {
			return d.reason
		}
	}
	return ""
}

// ParseNetworks parses the comma-separated allowlist of the
// --allow-networks flag (REGISTRY_ALLOW_NETWORKS). Each entry is a CIDR
// prefix or a bare IP address (meaning /32 or /128). Empty entries are
// skipped, host bits are masked off, and IPv4-mapped IPv6 prefixes are
// turned into their IPv4 form because addresses are unmapped before they
// are checked.
func ParseNetworks(csv string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for entry := range strings.SplitSeq(csv, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		p, err := parseNetwork(entry)
		if err != nil {
			return nil, fmt.Errorf("%w %q in allowlist: %w", ErrInvalidNetwork, entry, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func parseNetwork(entry string) (netip.Prefix, error) {
	var p netip.Prefix
	if strings.Contains(entry, "/") {
		var err error
		if p, err = netip.ParsePrefix(entry); err != nil {
			return netip.Prefix{}, err
		}
	} else {
		ip, err := netip.ParseAddr(entry)
		if err != nil {
			return netip.Prefix{}, err
		}
		if ip.Zone() != "" {
			return netip.Prefix{}, errors.New("IPv6 zones are not allowed")
		}
		p = netip.PrefixFrom(ip, ip.BitLen())
	}
	if p.Addr().Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, errors.New("IPv4-mapped prefix shorter than /96")
		}
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}
