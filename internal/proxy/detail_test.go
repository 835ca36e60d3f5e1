package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// goIsms are what only Go's own error texts say; a check's details are
// shown to curators and developers, who should read what the agent did,
// not how the registry's SDK failed to decode it. Independent of detail's
// own pattern on purpose.
var goIsms = []*regexp.Regexp{
	regexp.MustCompile(`Go struct field`),
	regexp.MustCompile(`Go value of type`),
	regexp.MustCompile(`json: cannot unmarshal`),
	regexp.MustCompile(`invalid character '`),
	regexp.MustCompile(`\*(url|net|json|tls|x509|http)\.[A-Z]`),
	regexp.MustCompile(`dial tcp`),
	regexp.MustCompile(`Error while dialing`),
	regexp.MustCompile(`\b(Post|Get) "http`),
	regexp.MustCompile(`%!`),
	regexp.MustCompile(`\bmap\[string\]|\[\]interface \{\}|\binterface \{\}`),
}

func hasGoIsm(s string) string {
	for _, re := range goIsms {
		if m := re.FindString(s); m != "" {
			return m
		}
	}
	return ""
}

// TestCheckDetailsSayNoGoTypes runs the declared-vs-working check against
// agents that misbehave in every way a real one has, and scans what it
// stores and shows.
func TestCheckDetailsSayNoGoTypes(t *testing.T) {
	p := New(Options{Client: proxytest.Loopback()})
	jsonrpc := proxytest.Start(t, card.BindingJSONRPC, "1.0", proxytest.Options{})
	grpc := proxytest.Start(t, card.BindingGRPC, "1.0", proxytest.Options{})
	rest03 := proxytest.Start(t, card.BindingHTTPJSON, "0.3", proxytest.Options{})
	closed := proxytest.ClosedURL(t)
	_, port, _ := net.SplitHostPort(closed[len("http://"):])
	serve := func(status int, ct, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	wrongBinding := jsonrpc.Interface
	wrongBinding.Binding = card.BindingHTTPJSON
	wrongVersion := rest03.Interface
	wrongVersion.ProtocolVersion = "1.0"
	wrongGRPC := grpc.Interface
	wrongGRPC.ProtocolVersion = "0.3"
	ifaces := []card.Interface{
		{URL: "127.0.0.1:" + port, Binding: card.BindingGRPC, ProtocolVersion: "1.0"},
		{URL: closed, Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"},
		wrongBinding, wrongVersion, wrongGRPC,
		{URL: serve(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"task":{"id":5}}}`), Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"},
		{URL: serve(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":5}}`), Binding: card.BindingJSONRPC, ProtocolVersion: "0.3"},
		{URL: serve(200, "text/html", `<html>oops</html>`), Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"},
		{URL: serve(500, "text/html", `<html>oops</html>`), Binding: card.BindingHTTPJSON, ProtocolVersion: "1.0"},
		{URL: serve(200, "application/json", `{"task":{"id":5,"status":"done"}}`), Binding: card.BindingHTTPJSON, ProtocolVersion: "1.0"},
		{URL: serve(200, "application/json", `{"kind":"task","id":5}`), Binding: card.BindingHTTPJSON, ProtocolVersion: "0.3"},
	}
	checks := p.Check(t.Context(), proxytest.Card(true, ifaces...), Credentials{}, nil)
	for _, c := range checks {
		if c.Works {
			t.Errorf("%s %s works", c.Interface.URL, c.Interface.Binding)
		}
		if c.Detail == "" {
			t.Errorf("%s %s: no detail", c.Interface.URL, c.Interface.Binding)
		}
		if m := hasGoIsm(c.Detail); m != "" {
			t.Errorf("%s %s: detail %q says %q", c.Interface.URL, c.Interface.Binding, c.Detail, m)
		}
		for _, v := range c.Violations {
			if m := hasGoIsm(v.Detail); m != "" {
				t.Errorf("violation %q says %q", v.Detail, m)
			}
		}
	}
}

// TestDetail words each kind of SDK error, wrapped as the SDKs wrap them.
func TestDetail(t *testing.T) {
	var ute *json.UnmarshalTypeError
	if err := json.Unmarshal([]byte(`{"id":5}`), &struct {
		ID string `json:"id"`
	}{}); !errors.As(err, &ute) {
		t.Fatal(err)
	}
	var se *json.SyntaxError
	if err := json.Unmarshal([]byte(`<html>`), new(any)); !errors.As(err, &se) {
		t.Fatal(err)
	}
	refused := &url.Error{Op: "Post", URL: "http://10.1.2.3:8080/a2a", Err: &net.OpError{Op: "dial", Net: "tcp",
		Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 8080}, Err: errors.New("connect: connection refused")}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"field of the wrong type", fmt.Errorf("failed to decode response: %w", ute), `the agent's answer could not be read: "id" holds a number where A2A expects a string`},
		{"not JSON", fmt.Errorf("failed to decode response: %w", se), "the agent's answer is not valid JSON (at byte 1)"},
		{"connection refused", fmt.Errorf("failed to send HTTP request: %w", refused), "could not connect to agent.example.com"},
		{"flattened decode error", errors.New("failed to decode response: json: cannot unmarshal number into Go struct field ClientResponse.id of type string"),
			"agent.example.com answered with something that is not a well-formed A2A response"},
		{"flattened dial error", errors.New(`failed to send HTTP request: Post "http://10.1.2.3:8080": dial tcp 10.1.2.3:8080: connect: connection refused`),
			"could not connect to agent.example.com"},
		{"gRPC dial", status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 10.1.2.3:443: connect: connection refused"`),
			"could not connect to agent.example.com, or the connection broke before a complete answer (gRPC Unavailable)"},
		{"gRPC agent error", status.Error(codes.NotFound, "task not found"), "gRPC NotFound: task not found"},
		{"agent's own words", errors.New("task not found: no task abc"), "task not found: no task abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := detail(tt.err, "https://agent.example.com/a2a")
			if m := hasGoIsm(got); m != "" {
				t.Errorf("detail %q says %q", got, m)
			}
			if len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
				t.Errorf("detail = %q, want it to start %q", got, tt.want)
			}
		})
	}
}
