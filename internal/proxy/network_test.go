package proxy

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/safehttp/safehttptest"
)

// TestPlaintextIsSafehttpsDecision: whether a bare gRPC host:port is
// spoken to in plain text is the safe client's one allowed-network
// decision, for a name and for an address literal alike
// (safehttptest.NetworkCases, the table the verifier and safehttp are
// held to).
func TestPlaintextIsSafehttpsDecision(t *testing.T) {
	const name = "agent.corp.internal"
	for _, tc := range safehttptest.NetworkCases {
		t.Run(tc.Name, func(t *testing.T) {
			addr := netip.MustParseAddr(tc.Addr)
			res := safehttptest.NewResolver(t, map[string][]string{name: {addr.WithZone("").String()}})
			p := New(Options{Client: safehttp.New(safehttp.Config{AllowNetworks: tc.Allow, Resolver: res.Net()})})
			hosts := []string{addr.String()}
			if addr.Zone() == "" {
				hosts = append(hosts, name)
			}
			for _, host := range hosts {
				got, err := p.plaintext(t.Context(), plaintextIfAllowed, host)
				if err != nil || got != tc.Opened {
					t.Errorf("plaintext(%s) = %v, %v; want %v", host, got, err, tc.Opened)
				}
			}
		})
	}
}

// TestPlaintextLookupHonoursTheRun: the lookup behind the plain-text
// decision runs under the run's context, so a resolver that never answers
// holds a run no longer than its limit (it used its own background
// context, and waited out the resolver's timeouts).
func TestPlaintextLookupHonoursTheRun(t *testing.T) {
	res := safehttptest.NewHangingResolver(t)
	client := safehttp.New(safehttp.Config{Resolver: res.Net()})

	t.Run("decision", func(t *testing.T) {
		p := New(Options{Client: client})
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := p.plaintext(ctx, plaintextIfAllowed, "agent.corp.internal"); err == nil {
			t.Error("no error from a resolver that never answers")
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v, want about the 200ms deadline", d)
		}
	})
	t.Run("run", func(t *testing.T) {
		p := New(Options{Client: client, MaxRun: 300 * time.Millisecond})
		in := card.Interface{URL: "agent.corp.internal:50051", Binding: card.BindingGRPC, ProtocolVersion: "1.0"}
		start := time.Now()
		_, err := p.Send(t.Context(), Call{Card: proxytest.Card(false, in)}, proxytest.Text("hi"), false, nil)
		if err == nil {
			t.Error("a run against an unresolvable agent succeeded")
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("run took %v, want about its 300ms limit", d)
		}
	})
}

// TestReservedNameIsUnreachable: an agent on a reserved name (as the
// example cards declare) is unreachable over every binding, and no
// resolver is asked.
func TestReservedNameIsUnreachable(t *testing.T) {
	res := safehttptest.NewResolver(t, nil)
	p := New(Options{Client: safehttp.New(safehttp.Config{Resolver: res.Net()})})
	for _, in := range []card.Interface{
		{URL: "https://support.shop.example/a2a/v1", Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"},
		{URL: "https://trips.journeys.example/a2a/rest", Binding: card.BindingHTTPJSON, ProtocolVersion: "1.0"},
		{URL: "review.devtools.example:443", Binding: card.BindingGRPC, ProtocolVersion: "1.0"},
		{URL: "https://analytics.insights.example/a2a/grpc", Binding: card.BindingGRPC, ProtocolVersion: "0.3"},
	} {
		_, err := p.Send(t.Context(), Call{Card: proxytest.Card(false, in)}, proxytest.Text("hi"), false, nil)
		if !errors.Is(err, ErrUnreachable) {
			t.Errorf("%s: err = %v, want ErrUnreachable", in.URL, err)
		}
	}
	if asked := res.Asked(); len(asked) != 0 {
		t.Errorf("resolver asked for %v", asked)
	}
}
