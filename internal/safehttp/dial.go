package safehttp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// DialContext opens a TCP connection under the client's address policy and
// dial timeout, for protocols that do not go through net/http (gRPC
// probes and proxied gRPC calls). Like the HTTP transport, it refuses a
// reserved name before any lookup and checks every resolved address in the
// dialer's Control hook, so a refused address fails with ErrBlockedAddress
// (or ErrSelf, for the registry itself; Self.Exempt never applies here)
// before any packet is sent. Proxy settings from the environment are
// ignored here too.
func (c *Client) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return c.dialer.dial(ctx, network, addr)
}

// Decide is the address policy's answer for ip: whether a connection may
// go there, and whether it lies on a network the operator opened. Every
// caller that asks "is this address on an allowed network?" asks here.
func (c *Client) Decide(ip netip.Addr) Decision {
	return c.dialer.pol.decide(ip)
}

// Resolve returns the addresses a connection to host would be tried on,
// looked up under ctx (its deadline and cancellation bound the lookup):
// an IP literal is itself; a name in a reserved domain is refused with a
// *ReservedNameError and a localhost name is loopback, neither asking the
// resolver; any other name goes to Config.Resolver. The addresses are not
// judged: see Decide.
func (c *Client) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	return c.dialer.resolve(ctx, host)
}

// OnOpenedNetwork tells whether every address host resolves to (under
// ctx) lies on a network the operator opened (Decision.Opened): where a
// declaration that names no scheme may be served in plain text. A name
// that resolves to nothing is not on one.
func (c *Client) OnOpenedNetwork(ctx context.Context, host string) (bool, error) {
	ips, err := c.Resolve(ctx, host)
	if err != nil {
		return false, err
	}
	for _, ip := range ips {
		if !c.Decide(ip).Opened {
			return false, nil
		}
	}
	return len(ips) > 0, nil
}

// dialer connects under the address policy.
type dialer struct {
	pol      policy
	timeout  time.Duration
	resolver *net.Resolver
	// self, when set, is refused by name and by address, unless
	// reachSelf: the dialer of the transport that carries only the
	// requests Self.Exempt allows.
	self      *Self
	reachSelf bool
}

// resolve is Client.Resolve.
func (d dialer) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	if addrs, ok, err := d.special(host); ok {
		return addrs, err
	}
	ips, err := d.lookup().LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", host, err)
	}
	return ips, nil
}

// selfAddrs refuses a connection to host:port that names the registry
// itself, and returns the addresses the registry's names at port resolve
// to, which the Control hook refuses on that port.
func (d dialer) selfAddrs(ctx context.Context, host, port string) ([]netip.Addr, error) {
	if d.self == nil || d.reachSelf {
		return nil, nil
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		// net.Dialer refuses it as it would without a Self.
		return nil, nil
	}
	if d.self.namedSelf(host, uint16(p)) {
		return nil, &SelfError{Host: host}
	}
	var out []netip.Addr
	for _, n := range d.self.namesAt(uint16(p)) {
		for _, ip := range n.resolve(ctx, d.resolve) {
			out = append(out, ip.WithZone("").Unmap())
		}
	}
	return out, nil
}

// refusesSelf tells whether a connection to ap reaches the registry
// itself: a listen address, or one of selfIPs on the port they were
// resolved for.
func (d dialer) refusesSelf(ap netip.AddrPort, selfIPs []netip.Addr) bool {
	if d.self == nil || d.reachSelf {
		return false
	}
	return d.self.atListen(ap) || slices.Contains(selfIPs, ap.Addr().WithZone("").Unmap())
}

func (d dialer) lookup() *net.Resolver {
	if d.resolver != nil {
		return d.resolver
	}
	return net.DefaultResolver
}

// special answers for the names no resolver is asked about: ok is true
// for a reserved name (refused) and a localhost name (loopback).
func (d dialer) special(host string) (addrs []netip.Addr, ok bool, err error) {
	if domain, reserved := reservedDomain(host); reserved {
		return nil, true, &ReservedNameError{Host: host, Domain: domain}
	}
	if isLocalhost(host) {
		return append([]netip.Addr(nil), localhostAddrs...), true, nil
	}
	return nil, false, nil
}

// dial resolves addr and connects, checking each resolved address in the
// Control hook, which runs after socket() and before connect(): the
// address checked is the one connected to, so a name that resolves to a
// public address at one moment and a private one the next (DNS
// rebinding) cannot slip through.
func (d dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("safehttp: network %q: %w", network, ErrBlockedAddress)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	// The registry itself is refused by name before any lookup, and by
	// address below, whatever the allowlist opens; a reserved name is
	// refused before the registry's own names are looked up.
	addrs, special, err := d.special(host)
	if err == nil {
		var selfIPs []netip.Addr
		if selfIPs, err = d.selfAddrs(ctx, host, port); err == nil {
			return d.connect(ctx, network, host, port, addrs, special, selfIPs)
		}
	}
	// Shaped as net.Dialer shapes a failed lookup, so callers that tell a
	// failed dial from a failed exchange see one.
	return nil, &net.OpError{Op: "dial", Net: network, Err: err}
}

// connect dials host:port (or, for a special name, each of addrs)
// refusing, in the Control hook, the registry itself (its listen
// addresses and selfIPs) and every address the policy refuses.
func (d dialer) connect(ctx context.Context, network, host, port string, addrs []netip.Addr, special bool, selfIPs []netip.Addr) (net.Conn, error) {
	nd := net.Dialer{
		Timeout:   d.timeout,
		KeepAlive: 30 * time.Second,
		Resolver:  d.resolver,
		ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("safehttp: unparsable dial address %q: %w", address, ErrBlockedAddress)
			}
			if d.refusesSelf(ap, selfIPs) {
				return &SelfError{Host: host, Addr: ap}
			}
			if reason := d.pol.decide(ap.Addr()).Reason; reason != "" {
				return &BlockedError{Host: host, IP: ap.Addr().WithZone(""), Reason: reason}
			}
			return nil
		},
	}
	if !special {
		return nd.DialContext(ctx, network, net.JoinHostPort(host, port))
	}
	// Localhost: each loopback address in turn, as literals, so nothing
	// is looked up; the first error is the one reported.
	var first error
	for _, ip := range addrs {
		if network == "tcp4" && !ip.Is4() || network == "tcp6" && !ip.Is6() {
			continue
		}
		conn, err := nd.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}
