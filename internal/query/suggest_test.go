package query

import (
	"slices"
	"testing"
)

func TestSuggest(t *testing.T) {
	tests := []struct {
		text string
		have map[string][]string
		want []Suggestion
	}{
		{text: "summarise contracts, accepts PDF", want: []Suggestion{{"input_mode", "application/pdf", "accepts PDF"}}},
		{text: "takes images and returns JSON", want: []Suggestion{
			{"input_mode", "image/*", "takes images"}, {"output_mode", "application/json", "returns JSON"}}},
		{text: "accepts a pdf", want: []Suggestion{{"input_mode", "application/pdf", "accepts a pdf"}}},
		{text: "weather over gRPC", want: []Suggestion{{"binding", "GRPC", "gRPC"}}},
		{text: "JSON-RPC translation", want: []Suggestion{{"binding", "JSONRPC", "JSON-RPC"}}},
		{text: "a REST API for invoices", want: []Suggestion{{"binding", "HTTP+JSON", "REST API"}}},
		{text: "HTTP+JSON", want: []Suggestion{{"binding", "HTTP+JSON", "HTTP+JSON"}}},
		{text: "agents on v0.3", want: []Suggestion{{"protocol_version", "0.3", "v0.3"}}},
		{text: "A2A 1.0 booking", want: []Suggestion{{"protocol_version", "1.0", "A2A 1.0"}}},
		{text: "protocol 0.3.0", want: []Suggestion{{"protocol_version", "0.3", "protocol 0.3.0"}}},
		{text: "translate with no auth", want: []Suggestion{{"security_scheme", "none", "no auth"}}},
		{text: "OAuth calendar", want: []Suggestion{{"security_scheme", "oauth2", "OAuth"}}},
		{text: "needs an API key", want: []Suggestion{{"security_scheme", "apiKey", "API key"}}},
		{text: "mutual TLS only", want: []Suggestion{{"security_scheme", "mutualTLS", "mutual TLS"}}},
		// Filters the request already has are not suggested again.
		{text: "over gRPC", have: map[string][]string{"binding": {"grpc"}}},
		// Words that must not suggest anything.
		{text: "pdf summariser"},
		{text: "PDFBox agent that accepts pdfkit"},
		{text: "accepts structured PDF"},
		{text: "grpc-gateway helper"},
		{text: "the rest of my invoices"},
		{text: "costs 1.0 dollars"},
		{text: "version control for JSON"},
		{text: "no authors"},
		{text: "apiary keys"},
		{text: ""},
	}
	for _, tt := range tests {
		got := Suggest(tt.text, tt.have)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Suggest(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestSuggestBounded(t *testing.T) {
	text := ""
	for range 50 {
		text += "gRPC JSON-RPC REST API v0.3 v1.0 OAuth API key no auth mTLS OIDC accepts PDF returns JSON "
	}
	if got := Suggest(text, nil); len(got) > maxSuggestions {
		t.Errorf("%d suggestions, want at most %d", len(got), maxSuggestions)
	}
}
