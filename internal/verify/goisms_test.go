package verify

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// goIsms are what only Go's own texts say. Probe problems, findings and
// signature problems are shown to anyone reading the agent.
var goIsms = regexp.MustCompile(`Go struct field|Go value of type|json: cannot unmarshal|invalid character '|` +
	`\*(url|net|json|tls|x509|http|jose)\.[A-Z]|dial tcp|Error while dialing|\b(Post|Get) "http|%!|` +
	`map\[string\]|interface \{\}|\bfloat64\b|\bjson\.Number\b|illegal base64 data|go-jose/`)

// TestDetailsSayNoGoTypes probes agents that misbehave every way, audits
// and lints every corpus card, and checks no text a person reads carries a
// Go-ism.
func TestDetailsSayNoGoTypes(t *testing.T) {
	base, g1, g0 := peers(t)
	serve := func(status int, ct, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := lis.Addr().String()
	lis.Close()
	v := New(Options{Client: safehttp.New(safehttp.Config{AllowNetworks: loopback}), ProbeTimeout: 2 * time.Second})
	ifaces := []card.Interface{
		{URL: base + "/jsonrpc", Binding: "GRPC", ProtocolVersion: "1.0"},
		{URL: g1, Binding: "JSONRPC", ProtocolVersion: "1.0"},
		{URL: g0, Binding: "GRPC", ProtocolVersion: "1.0"},
		{URL: base + "/rest-v0", Binding: "HTTP+JSON", ProtocolVersion: "1.0"},
		{URL: "http://" + closed + "/a2a", Binding: "JSONRPC", ProtocolVersion: "1.0"},
		{URL: closed, Binding: "GRPC", ProtocolVersion: "1.0"},
		{URL: "https://" + strings.TrimPrefix(base, "http://") + "/jsonrpc", Binding: "JSONRPC", ProtocolVersion: "1.0"},
		{URL: serve(200, "application/json", `{"jsonrpc":"2.0","id":5,"result":{"id":5}}`), Binding: "JSONRPC", ProtocolVersion: "1.0"},
		{URL: serve(200, "text/html", `<html>oops</html>`), Binding: "JSONRPC", ProtocolVersion: "1.0"},
		{URL: serve(500, "text/html", `<html>oops</html>`), Binding: "HTTP+JSON", ProtocolVersion: "1.0"},
		{URL: serve(200, "application/json", `{"error":{"code":"x"}}`), Binding: "HTTP+JSON", ProtocolVersion: "0.3"},
		{URL: "grpcs://[::1", Binding: "GRPC", ProtocolVersion: "1.0"},
	}
	for _, in := range ifaces {
		p := v.ProbeInterface(t.Context(), in)
		for _, s := range []string{p.Problem, p.Evidence} {
			if m := goIsms.FindString(s); m != "" {
				t.Errorf("probe of %s %s: %q says %q", in.Binding, in.URL, s, m)
			}
		}
	}

	files, _ := filepath.Glob(filepath.Join("..", "card", "testdata", "realworld", "*.json"))
	more, _ := filepath.Glob(filepath.Join("..", "card", "testdata", "*.json"))
	files = append(files, more...)
	if len(files) < 20 {
		t.Fatalf("only %d corpus cards", len(files))
	}
	raws := [][]byte{
		[]byte(`{"name":42,"url":["x"],"skills":{"a":1},"capabilities":[1],"securitySchemes":{"a":{"type":1}},"security":[{"a":"read"}]}`),
		[]byte(`{"name":"x","supportedInterfaces":[{"url":1.5,"protocolBinding":true,"protocolVersion":{}}],"skills":[{"id":[],"tags":[null]}]}`),
	}
	for _, sig := range []string{
		`{"protected":"!!!","signature":"AA"}`,
		`{"protected":"` + b64(`{"alg":"ES256","kid":"k1"}`) + `","signature":"not base64!"}`,
		`{"protected":"` + b64(`{"alg":"ES256","kid":5}`) + `","signature":"AA"}`,
		`{"protected":"` + b64(`["alg"]`) + `","signature":"AA"}`,
		`{"protected":"` + b64(`{"alg":"ES256","kid":"k1","b64":"no"}`) + `","signature":"AA"}`,
		`{"protected":"` + b64(`{"alg":"ES256","kid":"k1","crit":[1]}`) + `","signature":"AA"}`,
		`{"protected":"` + b64(`{"alg":"ES256","kid":"k1"}`) + `","signature":"AAAA","header":"x"}`,
	} {
		raws = append(raws, []byte(strings.TrimSuffix(baseCard, "}")+`,"signatures":[`+sig+`]}`))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
	}
	for i, raw := range raws {
		c, err := card.Parse(raw, card.Limits{Stored: true})
		if err != nil {
			if m := goIsms.FindString(err.Error()); m != "" {
				t.Errorf("card %d: refusal %q says %q", i, err, m)
			}
			continue
		}
		findings := append(c.Findings, New(Options{}).AuditSecurity(t.Context(), c)...)
		for _, f := range findings {
			if m := goIsms.FindString(f.Message); m != "" {
				t.Errorf("card %d: finding %q says %q", i, f.Message, m)
			}
		}
		pinned := StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{"*"}}}
		for _, e := range New(Options{Keys: pinned}).VerifySignatures(t.Context(), raw, []string{"https://agent.example.com"}).Entries {
			if m := goIsms.FindString(e.Problem); m != "" {
				t.Errorf("card %d: signature problem %q says %q", i, e.Problem, m)
			}
		}
	}
}
