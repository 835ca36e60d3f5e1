package proxy

import (
	"net"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// TestCheckTellsTruthfulFromFalse checks every declared interface of a
// card whose declarations all hold, and of one that declares interfaces it
// does not serve.
func TestCheckTellsTruthfulFromFalse(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	jsonrpc := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
	grpc := proxytest.Start(t, card.BindingGRPC, "1.0", proxytest.Options{})
	rest03 := proxytest.Start(t, card.BindingHTTPJSON, "0.3", proxytest.Options{})

	closedGRPC := proxytest.ClosedURL(t)
	_, port, _ := net.SplitHostPort(closedGRPC[len("http://"):])
	wrongBinding := jsonrpc.Interface
	wrongBinding.Binding = card.BindingHTTPJSON // serves JSON-RPC, declared as REST
	wrongVersion := rest03.Interface
	wrongVersion.ProtocolVersion = "1.0" // serves 0.3, declared as 1.0
	unknown := jsonrpc.Interface
	unknown.ProtocolVersion = card.VersionUnknown

	tests := []struct {
		name   string
		ifaces []card.Interface
		works  []bool
		causes []string
		want   string
	}{
		{"truthful", []card.Interface{jsonrpc.Interface, grpc.Interface, rest03.Interface}, []bool{true, true, true}, []string{"", "", ""}, "all"},
		{"false", []card.Interface{
			jsonrpc.Interface,
			{URL: "127.0.0.1:" + port, Binding: card.BindingGRPC, ProtocolVersion: "1.0"},
			wrongBinding,
			wrongVersion,
			unknown,
		}, []bool{true, false, false, false, false}, []string{"", CodeUnreachable, CodeAgentError, CodeAgentError, CauseUnchecked}, "some"},
		{"nothing served", []card.Interface{{URL: closedGRPC, Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"}}, []bool{false}, []string{CodeUnreachable}, "none"},
		{"nothing checkable", []card.Interface{unknown}, []bool{false}, []string{CauseUnchecked}, "unchecked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.Check(t.Context(), proxytest.Card(true, tt.ifaces...), Credentials{})
			if len(got) != len(tt.ifaces) {
				t.Fatalf("%d results for %d interfaces", len(got), len(tt.ifaces))
			}
			for i, c := range got {
				if c.Works != tt.works[i] || c.Cause != tt.causes[i] {
					t.Errorf("%s %s %s: works %v cause %q (%s), want %v %q", c.Interface.URL, c.Interface.Binding, c.Interface.ProtocolVersion,
						c.Works, c.Cause, c.Detail, tt.works[i], tt.causes[i])
				}
			}
			if w := Works(got); w != tt.want {
				t.Errorf("Works = %q, want %q", w, tt.want)
			}
		})
	}
}
