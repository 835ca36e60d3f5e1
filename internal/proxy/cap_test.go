package proxy

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// TestErrorDetailCapped: an agent's error message of any length is stored
// and shown cut to MaxDetailBytes, marked, still valid UTF-8.
func TestErrorDetailCapped(t *testing.T) {
	long := strings.Repeat("é", 50_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
			"error": map[string]any{"code": -32603, "message": long}})
	}))
	defer srv.Close()
	p := New(Options{Client: proxytest.Loopback()})
	c := proxytest.Card(false, card.Interface{URL: srv.URL, Binding: card.BindingJSONRPC, ProtocolVersion: "1.0"})
	_, err := p.Send(t.Context(), Call{Card: c}, proxytest.Text("hi"), false, nil)
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if len(pe.Message) > MaxDetailBytes || !strings.HasSuffix(pe.Message, "[…]") || !utf8.ValidString(pe.Message) {
		t.Errorf("message of %d bytes (valid UTF-8 %v), want at most %d and marked", len(pe.Message), utf8.ValidString(pe.Message), MaxDetailBytes)
	}
	if !strings.Contains(pe.Message, "éé") {
		t.Errorf("the agent's words are gone: %.80q", pe.Message)
	}
}

// TestErrorDetailNeverCarriesABody: whatever an interface answers in
// place of A2A (an error page, a proxy's text, an error object with
// debugging fields), the turn's error and the check's detail name what
// happened and never quote the body.
func TestErrorDetailNeverCarriesABody(t *testing.T) {
	const marker = "BODY-MARKER-7f3a"
	serve := func(status int, ct, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	page := "<html><body><pre>Traceback: " + marker + "</pre></body></html>"
	var ifaces []card.Interface
	for _, b := range []struct{ binding, version string }{
		{card.BindingJSONRPC, "1.0"}, {card.BindingHTTPJSON, "1.0"}, {card.BindingJSONRPC, "0.3"}, {card.BindingHTTPJSON, "0.3"},
	} {
		for _, a := range []struct {
			status   int
			ct, body string
		}{
			{500, "text/html", page},
			{502, "text/plain", "upstream said " + marker},
			{200, "text/html", page},
			{400, "application/json", `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"bad request","details":[{"@type":"type.googleapis.com/google.rpc.DebugInfo","detail":"` + marker + `"}]},"debug":"` + marker + `"}`},
		} {
			ifaces = append(ifaces, card.Interface{URL: serve(a.status, a.ct, a.body), Binding: b.binding, ProtocolVersion: b.version})
		}
	}
	p := New(Options{Client: proxytest.Loopback()})
	for _, in := range ifaces {
		for _, stream := range []bool{false, true} {
			_, err := p.Send(t.Context(), Call{Card: proxytest.Card(stream, in)}, proxytest.Text("hi"), stream, nil)
			if err == nil || strings.Contains(err.Error(), marker) || len(err.Error()) > MaxDetailBytes {
				t.Errorf("%s %s %s stream %v: error %q", in.URL, in.Binding, in.ProtocolVersion, stream, err)
			}
		}
	}
	for _, c := range p.Check(t.Context(), proxytest.Card(false, ifaces...), Credentials{}, nil) {
		if c.Works || strings.Contains(c.Detail, marker) {
			t.Errorf("check of %s %s %s: works %v, detail %q", c.Interface.URL, c.Interface.Binding, c.Interface.ProtocolVersion, c.Works, c.Detail)
		}
	}
}
