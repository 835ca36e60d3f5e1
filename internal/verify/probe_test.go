package verify

import (
	"context"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	grpcv0 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	grpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

type echoExecutor struct{}

func (echoExecutor) Execute(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("echo")), nil)
	}
}

func (echoExecutor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// peers starts honest a2asrv agents (a2a-go v2.4.0) on loopback: one HTTP
// server with v1.0 JSON-RPC and HTTP+JSON plus their v0.3 compatibility
// handlers, and gRPC servers for v1.0 and v0.3.
func peers(t *testing.T) (httpURL, grpcV1, grpcV0 string) {
	t.Helper()
	h := a2asrv.NewHandler(echoExecutor{})
	mux := http.NewServeMux()
	mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(h))
	mux.Handle("/jsonrpc-v0", a2av0.NewJSONRPCHandler(h))
	mux.Handle("/rest/", http.StripPrefix("/rest", a2asrv.NewRESTHandler(h)))
	mux.Handle("/rest-v0/", http.StripPrefix("/rest-v0", a2av0.NewRESTHandler(h)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	serve := func(register func(*grpc.Server)) string {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		gs := grpc.NewServer()
		register(gs)
		go gs.Serve(lis)
		t.Cleanup(gs.Stop)
		return "http://" + lis.Addr().String()
	}
	grpcV1 = serve(grpcv1.NewHandler(h).RegisterWith)
	grpcV0 = serve(grpcv0.NewHandler(h).RegisterWith)
	return srv.URL, grpcV1, grpcV0
}

func TestProbeRealPeers(t *testing.T) {
	base, g1, g0 := peers(t)
	v := New(Options{Client: safehttp.New(safehttp.Config{AllowNetworks: loopback}), ProbeTimeout: 5 * time.Second})
	tests := []struct {
		name                 string
		in                   card.Interface
		want                 ProbeStatus
		wantBinding, wantVer bool
		wantCause            string
		wantTLS              bool
	}{
		{"JSON-RPC v1.0", card.Interface{URL: base + "/jsonrpc", Binding: "JSONRPC", ProtocolVersion: "1.0"}, ProbeConfirmed, true, true, "", false},
		{"JSON-RPC v0.3", card.Interface{URL: base + "/jsonrpc-v0", Binding: "JSONRPC", ProtocolVersion: "0.3"}, ProbeConfirmed, true, true, "", false},
		{"HTTP+JSON v1.0", card.Interface{URL: base + "/rest", Binding: "HTTP+JSON", ProtocolVersion: "1.0"}, ProbeConfirmed, true, true, "", false},
		{"HTTP+JSON v0.3", card.Interface{URL: base + "/rest-v0", Binding: "HTTP+JSON", ProtocolVersion: "0.3"}, ProbeConfirmed, true, true, "", false},
		{"gRPC v1.0", card.Interface{URL: g1, Binding: "GRPC", ProtocolVersion: "1.0"}, ProbeConfirmed, true, true, "", false},
		{"gRPC v0.3", card.Interface{URL: g0, Binding: "GRPC", ProtocolVersion: "0.3"}, ProbeConfirmed, true, true, "", false},

		// Declarations that lie.
		{"liar: says GRPC, speaks JSON-RPC", card.Interface{URL: base + "/jsonrpc", Binding: "GRPC", ProtocolVersion: "1.0"}, ProbeBindingMismatch, false, false, CauseWrongBinding, false},
		{"says JSON-RPC, is a gRPC server", card.Interface{URL: g1, Binding: "JSONRPC", ProtocolVersion: "1.0"}, ProbeBindingMismatch, false, false, CauseWrongBinding, false},
		{"says JSON-RPC v1.0, serves v0.3", card.Interface{URL: base + "/jsonrpc-v0", Binding: "JSONRPC", ProtocolVersion: "1.0"}, ProbeVersionMismatch, true, false, CauseVersionMismatch, false},
		{"says JSON-RPC v0.3, serves v1.0", card.Interface{URL: base + "/jsonrpc", Binding: "JSONRPC", ProtocolVersion: "0.3"}, ProbeVersionMismatch, true, false, CauseVersionMismatch, false},
		{"says gRPC v1.0, serves v0.3", card.Interface{URL: g0, Binding: "GRPC", ProtocolVersion: "1.0"}, ProbeVersionMismatch, true, false, CauseVersionMismatch, false},
		{"says HTTP+JSON, is JSON-RPC", card.Interface{URL: base + "/jsonrpc", Binding: "HTTP+JSON", ProtocolVersion: "1.0"}, ProbeBindingMismatch, false, false, CauseWrongBinding, false},
		{"says HTTP+JSON v1.0, serves v0.3", card.Interface{URL: base + "/rest-v0", Binding: "HTTP+JSON", ProtocolVersion: "1.0"}, ProbeBindingMismatch, false, false, CauseWrongBinding, false},
		{"nothing there", card.Interface{URL: "http://127.0.0.1:1/a2a", Binding: "JSONRPC", ProtocolVersion: "1.0"}, ProbeUnreachable, false, false, CauseConnect, false},
		// a2a-go's samples serve gRPC in plain text on a bare host:port;
		// on an allowlisted network the probe falls back to plain text
		// and reports the missing TLS as a fact, not a false binding.
		{"bare host:port gRPC in plain text", card.Interface{URL: strings.TrimPrefix(g1, "http://"), Binding: "GRPC", ProtocolVersion: "1.0"}, ProbeConfirmed, true, true, "", false},
		// An explicit https:// is a promise of TLS: no fallback.
		{"https:// gRPC in plain text", card.Interface{URL: "https://" + strings.TrimPrefix(g1, "http://"), Binding: "GRPC", ProtocolVersion: "1.0"}, ProbeTLSMismatch, false, false, CauseTLSMismatch, false},
		{"https:// JSON-RPC in plain text", card.Interface{URL: "https://" + strings.TrimPrefix(base, "http://") + "/jsonrpc", Binding: "JSONRPC", ProtocolVersion: "1.0"}, ProbeTLSMismatch, false, false, CauseTLSMismatch, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := v.ProbeInterface(t.Context(), tt.in)
			if p.Status != tt.want || p.BindingConfirmed != tt.wantBinding || p.VersionConfirmed != tt.wantVer ||
				p.Cause != tt.wantCause || p.TLS != tt.wantTLS {
				t.Errorf("got %s binding=%v version=%v cause=%q tls=%v (evidence %q, problem %q); want %s binding=%v version=%v cause=%q tls=%v",
					p.Status, p.BindingConfirmed, p.VersionConfirmed, p.Cause, p.TLS, p.Evidence, p.Problem,
					tt.want, tt.wantBinding, tt.wantVer, tt.wantCause, tt.wantTLS)
			}
		})
	}
}

// TestProbeRefusesPrivateAddresses: probes go through the safe client and
// its dialer, so an agent on loopback is unreachable without an allowlist
// — over HTTP and over gRPC.
func TestProbeRefusesPrivateAddresses(t *testing.T) {
	base, g1, _ := peers(t)
	v := New(Options{Client: safehttp.New(safehttp.Config{})})
	for _, in := range []card.Interface{
		{URL: base + "/jsonrpc", Binding: "JSONRPC", ProtocolVersion: "1.0"},
		{URL: g1, Binding: "GRPC", ProtocolVersion: "1.0"},
	} {
		p := v.ProbeInterface(t.Context(), in)
		if p.Status != ProbeUnreachable || p.Reachable || p.Cause != CauseBlockedAddress {
			t.Errorf("%s %s: %s reachable=%v cause=%q (%s), want unreachable, cause blocked_address",
				in.Binding, in.URL, p.Status, p.Reachable, p.Cause, p.Problem)
		}
		// The problem is shown to anyone reading the agent: the declared
		// host, never the address it resolved to (here the same text, so
		// the check is on the address class wording and no dial address).
		if !strings.Contains(p.Problem, "loopback") || strings.Contains(p.Problem, "dial") {
			t.Errorf("%s: problem %q", in.Binding, p.Problem)
		}
	}
}
