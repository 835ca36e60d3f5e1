package verify

import (
	"reflect"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
)

// TestVerifyUnsignedShortcut checks that Verify, which tells unsigned
// cards from their bytes, reports what a full signature check of the same
// bytes does, for cards with and without signatures members.
func TestVerifyUnsignedShortcut(t *testing.T) {
	const head = `{"name":"Weather","description":"Forecasts \u00e9t\u00e9.","version":"1",` +
		`"supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
		`"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
		`"skills":[{"id":"f","name":"Forecast","description":"Forecasts.","tags":["weather"]}]`
	cases := map[string]string{
		"no member":                head + `}`,
		"plain, no escapes":        `{"name":"Weather","description":"Forecasts.","version":"1","supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"f","name":"Forecast","description":"Forecasts.","tags":["weather"]}]}`,
		"empty list":               head + `,"signatures":[]}`,
		"escaped key":              head + `,"signature\u0073":[{"protected":"e30","signature":"AA"}]}`,
		"word in prose, no member": `{"name":"Signer","description":"Checks signatures.","version":"1","supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"f","name":"Check","description":"Checks.","tags":["jws"]}]}`,
	}
	v := New(Options{})
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := card.Parse([]byte(raw), card.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			got := v.Verify(t.Context(), c, "https://agent.example.com/.well-known/agent-card.json").Signatures
			want := v.VerifySignatures(t.Context(), c.Raw, []string{"https://agent.example.com"})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Verify reports signatures %+v, VerifySignatures %+v", got, want)
			}
		})
	}
}
