package api

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/labstack/echo/v4"
)

// HostGuard refuses requests whose Host header names a host outside
// allowed (compared without port, case-insensitively) with 421 Misdirected
// Request (RFC 9110 §15.5.20). IP literals are always accepted: DNS
// rebinding, the attack this stops, needs a name the attacker controls
// (their page's own host, re-pointed at the registry's address), and the
// browser sends that name as Host. Use it with echo's Pre so that it runs
// before routing, for every path.
func HostGuard(allowed []string) echo.MiddlewareFunc {
	set := make(map[string]bool, len(allowed))
	for _, h := range allowed {
		set[strings.ToLower(strings.Trim(h, "[]"))] = true
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			host := requestHost(c.Request().Host)
			if _, err := netip.ParseAddr(host); err == nil || set[host] {
				return next(c)
			}
			// An echo error, not an apiError: the guard runs for every
			// path, and the API's error handler maps 421 to its code.
			return echo.NewHTTPError(http.StatusMisdirectedRequest,
				"this registry does not answer to the host named in the request; an operator can add it with --allowed-hosts or --public-url")
		}
	}
}

// requestHost is the Host header's host, lower case, without port or IPv6
// brackets.
func requestHost(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
}
