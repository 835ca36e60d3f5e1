package proxy

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strings"
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

// registryAt describes a registry listening where raw (an interface URL
// or a bare host:port) points.
func registryAt(t *testing.T, raw string) *safehttp.Self {
	t.Helper()
	hostport := raw
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		hostport = u.Host
	}
	self, err := safehttp.NewSelf(hostport, "")
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// TestSelfIsNeverCalled: with loopback allowlisted, a run whose every
// interface is the registry's own listen address fails with its own
// code, over every binding, and a message that says why; an agent that
// declares the registry beside itself is reached on its own interface; a
// token URL at the registry fails the run the same way. The one
// exception reaches exactly the registry's own declared interface, and
// only without credentials.
func TestSelfIsNeverCalled(t *testing.T) {
	for _, peer := range []struct{ binding, version string }{
		{card.BindingJSONRPC, "1.0"}, {card.BindingJSONRPC, "0.3"},
		{card.BindingHTTPJSON, "1.0"}, {card.BindingGRPC, "1.0"}, {card.BindingGRPC, "0.3"},
	} {
		t.Run(peer.binding+" "+peer.version, func(t *testing.T) {
			reg := proxytest.Start(t, peer.binding, peer.version, proxytest.Options{})
			client := safehttp.New(safehttp.Config{Self: registryAt(t, reg.Interface.URL), Timeout: -1, MaxRedirects: -1,
				AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
			p := New(Options{Client: client, MaxRun: 5 * time.Second})
			x, err := p.Send(t.Context(), Call{Card: proxytest.Card(false, reg.Interface)}, proxytest.Text("hi"), false, nil)
			var pe *Error
			if !errors.Is(err, ErrSelf) || ErrorCode(err) != CodeSelf || !errors.As(err, &pe) || !strings.Contains(pe.Message, "this registry itself") {
				t.Fatalf("err = %v (code %s), want ErrSelf, code %s and a message saying so", err, ErrorCode(err), CodeSelf)
			}
			if len(x.Attempts) != 1 || !strings.Contains(x.Attempts[0].Error, "this registry itself") {
				t.Errorf("attempts %+v, want the one interface refused as the registry", x.Attempts)
			}

			other := proxytest.Start(t, peer.binding, peer.version, proxytest.Options{})
			x, err = p.Send(t.Context(), Call{Card: proxytest.Card(false, reg.Interface, other.Interface)}, proxytest.Text("hi"), false, nil)
			if err != nil || x.Endpoint.URL != other.Interface.URL {
				t.Errorf("registry declared beside the agent: %v via %s, want the agent reached on %s", err, x.Endpoint.URL, other.Interface.URL)
			}
		})
	}

	t.Run("token URL", func(t *testing.T) {
		tokenURL := proxytest.TokenServer(t, "client-1", "secret", "minted")
		agent := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
		client := safehttp.New(safehttp.Config{Self: registryAt(t, tokenURL), Timeout: -1, MaxRedirects: -1,
			AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
		p := New(Options{Client: client})
		c := proxytest.Card(false, agent.Interface)
		c.SecuritySchemes = []card.SecurityScheme{{Name: "oauth", Type: card.SchemeOAuth2, Flows: []card.OAuthFlow{{Name: "clientCredentials", TokenURL: tokenURL}}}}
		_, err := p.Send(t.Context(), Call{Card: c, Credentials: Credentials{OAuth2ClientCredentials: &ClientCredentials{ClientID: "client-1", ClientSecret: "secret"}}},
			proxytest.Text("hi"), false, nil)
		if !errors.Is(err, ErrTokenRequest) || !errors.Is(err, ErrSelf) || ErrorCode(err) != CodeSelf {
			t.Errorf("err = %v (code %s), want the token request refused as the registry, code %s", err, ErrorCode(err), CodeSelf)
		}
	})

	t.Run("the exception", func(t *testing.T) {
		reg := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
		self := registryAt(t, reg.Interface.URL)
		if err := self.Exempt(reg.Interface.URL); err != nil {
			t.Fatal(err)
		}
		client := safehttp.New(safehttp.Config{Self: self, Timeout: -1, MaxRedirects: -1,
			AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
		p := New(Options{Client: client})
		c := proxytest.Card(true, reg.Interface)
		c.SecuritySchemes = []card.SecurityScheme{{Name: "bearer", Type: card.SchemeHTTP, Scheme: "Bearer"}}
		for _, stream := range []bool{false, true} {
			if _, err := p.Send(t.Context(), Call{Card: c}, proxytest.Text("hi"), stream, nil); err != nil {
				t.Errorf("the registry's own interface, no credentials, stream %v: %v", stream, err)
			}
		}
		_, err := p.Send(t.Context(), Call{Card: c, Credentials: Credentials{Bearer: "tok"}}, proxytest.Text("hi"), false, nil)
		if ErrorCode(err) != CodeSelf {
			t.Errorf("with a bearer token: %v (code %s), want code %s", err, ErrorCode(err), CodeSelf)
		}
	})
}
