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
