package verify

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
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

// TestProbeSelf: with loopback allowlisted, an interface at the
// registry's own listen address — over every binding, directly or
// through a name that resolves there — and a JWKS URL there are refused
// with the cause self and a message that says so; the registry gets no
// request.
func TestProbeSelf(t *testing.T) {
	var hits atomic.Int32
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer reg.Close()
	hostport := reg.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(hostport)
	self, err := safehttp.NewSelf(hostport, "")
	if err != nil {
		t.Fatal(err)
	}
	res := safehttptest.NewResolver(t, map[string][]string{"rebind.corp.internal": {"127.0.0.1"}})
	client := safehttp.New(safehttp.Config{Resolver: res.Net(), Self: self,
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	v := New(Options{Client: client, AllowInsecureJKU: true})
	for _, in := range []card.Interface{
		{URL: reg.URL + "/a2a/v1", Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"},
		{URL: "http://rebind.corp.internal:" + port + "/a2a/v1", Binding: card.BindingJSONRPC, ProtocolVersion: "0.3"},
		{URL: reg.URL + "/a2a/rest", Binding: card.BindingHTTPJSON, ProtocolVersion: "1.0"},
		{URL: hostport, Binding: card.BindingGRPC, ProtocolVersion: "1.0"},
		{URL: "http://rebind.corp.internal:" + port, Binding: card.BindingGRPC, ProtocolVersion: "0.3"},
	} {
		p := v.ProbeInterface(t.Context(), in)
		if p.Status != ProbeUnreachable || p.Reachable || p.Cause != CauseSelf {
			t.Errorf("%s %s: %s reachable=%v cause=%q (%s), want unreachable, cause %s",
				in.Binding, in.URL, p.Status, p.Reachable, p.Cause, p.Problem, CauseSelf)
		}
		if !strings.Contains(p.Problem, "this registry itself") {
			t.Errorf("%s: problem %q does not say it is the registry itself", in.URL, p.Problem)
		}
	}
	if _, err := v.fetchJWKS(t.Context(), reg.URL+"/jwks"); !errors.Is(err, safehttp.ErrSelf) || !errors.Is(err, ErrJWKS) {
		t.Errorf("JWKS at the registry: %v, want ErrJWKS wrapping ErrSelf", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the registry got %d requests", n)
	}
}
