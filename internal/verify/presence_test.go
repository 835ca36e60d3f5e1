package verify

import (
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// presenceCard exercises every presence rule: required fields that are
// empty (description, defaultInputModes, skills), unset optional ones
// (tenant, provider, extensions, securitySchemes), `optional` fields set
// to their zero value (documentationUrl, iconUrl, streaming), and a field
// the schema does not know (x-vendor).
const presenceCard = `{"name":"Echo","description":"","version":"1",` +
	`"supportedInterfaces":[{"url":"https://a.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":""}],` +
	`"provider":null,"documentationUrl":"","iconUrl":"","capabilities":{"streaming":false,"extensions":[]},` +
	`"defaultInputModes":[],"defaultOutputModes":["text/plain"],"skills":[],"securitySchemes":{},"x-vendor":""}`

// presenceVector is the §8.4.1 payload of presenceCard, worked out by hand
// from a2a.proto's REQUIRED annotations and proto3 presence.
const presenceVector = `{"capabilities":{"streaming":false},"defaultInputModes":[],"defaultOutputModes":["text/plain"],` +
	`"description":"","documentationUrl":"","iconUrl":"","name":"Echo","skills":[],` +
	`"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://a.example.com/a2a"}],` +
	`"version":"1","x-vendor":""}`

func TestSpecPresenceVector(t *testing.T) {
	tree, err := decodeStrict([]byte(presenceCard))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := newPayloads(tree.(map[string]any)).build(formSpec{form: FormSpecPresence, presence: true})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != presenceVector {
		t.Errorf("got  %s\nwant %s", got, presenceVector)
	}
}

// TestSpecPresenceSignatureVerifies: a card signed over the §8.4.1 payload
// verifies, and the report names that form; no other form produces it.
func TestSpecPresenceSignatureVerifies(t *testing.T) {
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: testKey},
		(&jose.SignerOptions{}).WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Sign([]byte(presenceVector))
	if err != nil {
		t.Fatal(err)
	}
	compact, err := obj.DetachedCompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	prot, sig, _ := strings.Cut(compact, "..")
	raw := withSignature(presenceCard, prot, sig)
	v := New(Options{Keys: StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{"*"}}}})
	rep := v.VerifySignatures(t.Context(), raw, []string{"https://a.example.com"})
	if rep.Status != StatusVerified || len(rep.Entries) != 1 || rep.Entries[0].Form != FormSpecPresence {
		t.Fatalf("report %+v, want verified by %s", rep, FormSpecPresence)
	}
}
