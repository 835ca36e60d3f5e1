package safehttptest

import "net/netip"

// NetworkCase is one address and what the one allowed-network decision
// (safehttp.Client.Decide) must say about it under an allowlist. Every
// caller that judges addresses (the dialer, the verifier's probes, the
// proxy) is held to this one table, so they cannot drift apart again.
type NetworkCase struct {
	Name  string
	Addr  string
	Allow []netip.Prefix
	// Allowed: a connection may go there. Opened: because the allowlist
	// names it (plain text may be tried there), not because it is public.
	Allowed, Opened bool
}

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// NetworkCases covers both address families, IPv4 mapped into IPv6,
// loopback, link-local, cloud metadata, CGNAT, unique local addresses and
// allowlisted ranges.
var NetworkCases = []NetworkCase{
	{Name: "public v4", Addr: "93.184.215.14", Allowed: true},
	{Name: "public v6", Addr: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", Allowed: true},
	{Name: "public v4 mapped in v6", Addr: "::ffff:93.184.215.14", Allowed: true},
	{Name: "public v4 in the allowlist", Addr: "93.184.215.14", Allow: prefixes("93.184.215.0/24"), Allowed: true, Opened: true},
	{Name: "loopback v4", Addr: "127.0.0.1"},
	{Name: "loopback v6", Addr: "::1"},
	{Name: "loopback v4 mapped in v6", Addr: "::ffff:127.0.0.1"},
	{Name: "loopback v4 allowlisted", Addr: "127.0.0.1", Allow: prefixes("127.0.0.0/8"), Allowed: true, Opened: true},
	{Name: "mapped loopback, v4 allowlisted", Addr: "::ffff:127.0.0.1", Allow: prefixes("127.0.0.0/8"), Allowed: true, Opened: true},
	{Name: "loopback v6, only v4 allowlisted", Addr: "::1", Allow: prefixes("127.0.0.0/8")},
	{Name: "link-local v4", Addr: "169.254.10.1"},
	{Name: "link-local v6", Addr: "fe80::1"},
	{Name: "link-local v6 with zone", Addr: "fe80::1%eth0"},
	{Name: "metadata", Addr: "169.254.169.254"},
	{Name: "metadata mapped in v6", Addr: "::ffff:169.254.169.254"},
	{Name: "metadata, link-local allowlisted", Addr: "169.254.169.254", Allow: prefixes("169.254.0.0/16")},
	{Name: "metadata, everything allowlisted", Addr: "169.254.169.254", Allow: prefixes("0.0.0.0/0")},
	{Name: "metadata named exactly", Addr: "169.254.169.254", Allow: prefixes("169.254.169.254/32"), Allowed: true, Opened: true},
	{Name: "CGNAT", Addr: "100.64.1.2"},
	{Name: "CGNAT allowlisted", Addr: "100.64.1.2", Allow: prefixes("100.64.0.0/10"), Allowed: true, Opened: true},
	{Name: "ULA", Addr: "fd12:3456::1"},
	{Name: "ULA allowlisted", Addr: "fd12:3456::1", Allow: prefixes("fc00::/7"), Allowed: true, Opened: true},
	{Name: "private in the allowlisted CIDR", Addr: "10.20.30.40", Allow: prefixes("10.20.0.0/16"), Allowed: true, Opened: true},
	{Name: "private outside the allowlisted CIDR", Addr: "10.21.0.1", Allow: prefixes("10.20.0.0/16")},
	{Name: "mapped private in the allowlisted CIDR", Addr: "::ffff:10.20.30.40", Allow: prefixes("10.20.0.0/16"), Allowed: true, Opened: true},
	{Name: "NAT64 of an allowlisted private address", Addr: "64:ff9b::a14:1e28", Allow: prefixes("10.20.0.0/16"), Allowed: true, Opened: true},
}
