package safehttp_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/safehttp/safehttptest"
)

// TestDecisionIsOne: the policy's answer for an address is the same
// whether it is asked directly (Decide), through a name (OnOpenedNetwork)
// or by dialling (the Control hook refuses exactly what Decide refuses).
func TestDecisionIsOne(t *testing.T) {
	for _, tc := range safehttptest.NetworkCases {
		t.Run(tc.Name, func(t *testing.T) {
			addr := netip.MustParseAddr(tc.Addr)
			const name = "agent.corp.internal"
			res := safehttptest.NewResolver(t, map[string][]string{name: {addr.WithZone("").String()}})
			c := safehttp.New(safehttp.Config{AllowNetworks: tc.Allow, Resolver: res.Net(), DialTimeout: time.Second})

			d := c.Decide(addr)
			if d.Allowed() != tc.Allowed || d.Opened != tc.Opened {
				t.Errorf("Decide(%s) = %+v, want allowed %v, opened %v", addr, d, tc.Allowed, tc.Opened)
			}
			if addr.Zone() == "" {
				opened, err := c.OnOpenedNetwork(t.Context(), name)
				if err != nil || opened != tc.Opened {
					t.Errorf("OnOpenedNetwork(%s → %s) = %v, %v; want %v", name, addr, opened, err, tc.Opened)
				}
			}
			if tc.Allowed {
				// Dialling would leave the machine; refusals send nothing.
				return
			}
			targets := []string{net.JoinHostPort(addr.String(), "9")}
			if addr.Zone() == "" {
				targets = append(targets, net.JoinHostPort(name, "9"))
			}
			for _, target := range targets {
				conn, err := c.DialContext(t.Context(), "tcp", target)
				if conn != nil {
					conn.Close()
				}
				var be *safehttp.BlockedError
				if !errors.As(err, &be) || be.Reason != d.Reason {
					t.Errorf("DialContext(%s) = %v, want refusal for %q", target, err, d.Reason)
				}
			}
		})
	}
}

// TestReservedNamesAreNeverLookedUp: names in the domains RFC 2606 and RFC
// 6761 reserve fail with their own cause before any resolver is asked
// (the resolver fails the test if it is), and names that merely look like
// them are looked up as usual.
func TestReservedNamesAreNeverLookedUp(t *testing.T) {
	reserved := []string{
		"support.shop.example", "SHOP.Example.", "example", "agent.test", "x.y.invalid",
		"example.com", "www.example.net", "api.example.org", "Example.COM.",
	}
	res := safehttptest.NewResolver(t, nil)
	c := safehttp.New(safehttp.Config{Resolver: res.Net()})
	for _, host := range reserved {
		t.Run(host, func(t *testing.T) {
			checks := map[string]error{}
			_, checks["Get"] = c.Get(t.Context(), "https://"+host+"/.well-known/agent-card.json")
			_, checks["DialContext"] = c.DialContext(t.Context(), "tcp", net.JoinHostPort(host, "443"))
			_, checks["Resolve"] = c.Resolve(t.Context(), host)
			_, checks["OnOpenedNetwork"] = c.OnOpenedNetwork(t.Context(), host)
			for via, err := range checks {
				var re *safehttp.ReservedNameError
				if !errors.Is(err, safehttp.ErrReservedName) || !errors.As(err, &re) || re.Host != host {
					t.Errorf("%s: err = %v, want *ReservedNameError for %s", via, err, host)
				}
				if got := safehttp.Cause(err); got != safehttp.CauseReservedName {
					t.Errorf("%s: Cause = %q, want %q", via, got, safehttp.CauseReservedName)
				}
			}
			msg := safehttp.Describe(host, checks["Get"])
			if !strings.Contains(msg, host) || !strings.Contains(msg, "reserved") || !strings.Contains(msg, "RFC") {
				t.Errorf("Describe = %q: want the host, that it is reserved, and the RFC", msg)
			}
		})
	}
	if asked := res.Asked(); len(asked) != 0 {
		t.Errorf("resolver asked for %v", asked)
	}

	lookalikes := []string{"notexample.com", "example.com.evil.net", "example.co", "contest", "tests.internal", "invalid.corp.internal"}
	for _, host := range lookalikes {
		_, err := c.Resolve(t.Context(), host)
		if safehttp.ReservedName(host) || errors.Is(err, safehttp.ErrReservedName) {
			t.Errorf("%s: refused as reserved (%v)", host, err)
		}
	}
	asked := res.Asked()
	for _, host := range lookalikes {
		if !slices.Contains(asked, host) {
			t.Errorf("%s was not looked up; asked %v", host, asked)
		}
	}
}

// TestLocalhostIsLoopback: RFC 6761 §6.3 — localhost names are loopback
// without a lookup, and the address policy judges them like any other
// loopback address.
func TestLocalhostIsLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	res := safehttptest.NewResolver(t, nil)
	open := safehttp.New(safehttp.Config{Resolver: res.Net(), AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	closed := safehttp.New(safehttp.Config{Resolver: res.Net()})
	for _, host := range []string{"localhost", "LocalHost.", "api.localhost"} {
		u := fmt.Sprintf("http://%s/", net.JoinHostPort(host, fmt.Sprint(port)))
		resp, err := open.Get(t.Context(), u)
		if err != nil {
			t.Errorf("%s with loopback allowed: %v", u, err)
		} else {
			resp.Body.Close()
		}
		_, err = closed.Get(t.Context(), u)
		var be *safehttp.BlockedError
		if !errors.As(err, &be) || be.Host != host || be.Reason != "loopback" {
			t.Errorf("%s by default: err = %v, want a loopback refusal naming %s", u, err, host)
		}
		if opened, err := open.OnOpenedNetwork(t.Context(), host); err != nil || opened {
			// ::1 is not in 127.0.0.0/8: localhost is not wholly opened.
			t.Errorf("OnOpenedNetwork(%s) = %v, %v; want false: ::1 is not allowlisted", host, opened, err)
		}
	}
	if asked := res.Asked(); len(asked) != 0 {
		t.Errorf("resolver asked for %v", asked)
	}
}

// TestResolveHonoursContext: a lookup ends with the caller's deadline,
// not the resolver's own timeouts (Go's default is 5 s per try).
func TestResolveHonoursContext(t *testing.T) {
	res := safehttptest.NewHangingResolver(t)
	c := safehttp.New(safehttp.Config{Resolver: res.Net()})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.OnOpenedNetwork(ctx, "agent.corp.internal")
	if err == nil {
		t.Fatal("a resolver that never answers gave an answer")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("lookup took %v, want about the 200ms deadline", d)
	}
	if got := res.Asked(); len(got) == 0 || got[0] != "agent.corp.internal" {
		t.Errorf("asked %v, want the name to reach the injected resolver", got)
	}
}
