package main

import (
	"net"
	"net/netip"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/api"
	"github.com/a2aregistry/registry/internal/crawler"
)

// guardServer applies the server-wide request rules to e: the Host
// allowlist (DNS rebinding, api.HostGuard) when hosts is not nil, and the
// client address taken from the socket only. X-Forwarded-For and X-Real-IP
// are anyone's to write; trusting them would let any client put any
// address in the request log. Call it before any route is added.
func guardServer(e *echo.Echo, hosts []string) {
	e.IPExtractor = echo.ExtractIPDirect()
	if hosts != nil {
		e.Pre(api.HostGuard(hosts))
	}
}

// listenTCP listens on addr without widening it: Go's "tcp" network binds
// an IPv4 wildcard (0.0.0.0) as the dual-stack [::], which would also
// accept IPv6 clients the operator never named. An IPv4 literal binds
// IPv4 only; [::] stays dual-stack, as its operators expect.
func listenTCP(addr string) (net.Listener, error) {
	network := "tcp"
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip, err := netip.ParseAddr(host); err == nil && ip.Is4() {
			network = "tcp4"
		}
	}
	return net.Listen(network, addr)
}

// wireChecks makes registrations and on-demand refreshes follow the
// crawler's refresh policy and verify the versions they store at once.
// cr may be nil (crawling off).
func wireChecks(r *crawler.Registrar, cr *crawler.Crawler, v crawler.CardVerifier) {
	r.UseVerifier(v)
	if cr != nil {
		r.UsePolicy(cr.Policy())
		cr.UseVerifier(v)
	}
}

// wirePrecheck makes registrations and checks precheck each new card
// with p before storing it, for the admission policy. cr may be nil.
func wirePrecheck(r *crawler.Registrar, cr *crawler.Crawler, p crawler.Prechecker) {
	r.UsePrechecker(p)
	if cr != nil {
		cr.UsePrechecker(p)
	}
}
