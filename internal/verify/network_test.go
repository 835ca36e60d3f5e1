package verify

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/safehttp/safehttptest"
)

// TestOpenedNetworkIsSafehttps: the gRPC probe's "may plain text be tried
// here?" is the safe client's one decision (safehttptest.NetworkCases, the
// table the proxy and safehttp are held to).
func TestOpenedNetworkIsSafehttps(t *testing.T) {
	for _, tc := range safehttptest.NetworkCases {
		t.Run(tc.Name, func(t *testing.T) {
			v := New(Options{Client: safehttp.New(safehttp.Config{AllowNetworks: tc.Allow})})
			addr := netip.MustParseAddr(tc.Addr)
			remote := &net.TCPAddr{IP: addr.AsSlice(), Port: 50051, Zone: addr.Zone()}
			if got := v.onOpenedNetwork(remote); got != tc.Opened {
				t.Errorf("onOpenedNetwork(%s) = %v, want %v", remote, got, tc.Opened)
			}
		})
	}
}

// TestProbeReservedNames: an interface on a reserved name (as the shipped
// example cards declare) is reported with its own cause, over every
// binding, and no resolver is asked.
func TestProbeReservedNames(t *testing.T) {
	res := safehttptest.NewResolver(t, nil)
	v := New(Options{Client: safehttp.New(safehttp.Config{Resolver: res.Net()})})
	for _, in := range []card.Interface{
		{URL: "https://support.shop.example/a2a/v1", Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"},
		{URL: "https://trips.journeys.example/a2a/rest", Binding: card.BindingHTTPJSON, ProtocolVersion: "1.0"},
		{URL: "https://analytics.insights.example/a2a/grpc", Binding: card.BindingGRPC, ProtocolVersion: "1.0"},
		{URL: "review.devtools.example:443", Binding: card.BindingGRPC, ProtocolVersion: "0.3"},
		{URL: "https://agent.example.com/a2a", Binding: card.BindingJSONRPC, ProtocolVersion: "0.3"},
	} {
		p := v.ProbeInterface(t.Context(), in)
		if p.Status != ProbeUnreachable || p.Reachable || p.Cause != CauseReservedName {
			t.Errorf("%s %s: %s reachable=%v cause=%q (%s), want unreachable, cause %s",
				in.Binding, in.URL, p.Status, p.Reachable, p.Cause, p.Problem, CauseReservedName)
		}
		if !strings.Contains(p.Problem, "reserved") {
			t.Errorf("%s: problem %q does not say the name is reserved", in.URL, p.Problem)
		}
	}
	if asked := res.Asked(); len(asked) != 0 {
		t.Errorf("resolver asked for %v", asked)
	}
}
