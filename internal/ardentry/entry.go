package ardentry

import (
	"slices"
	"strings"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/verify"
)

// TypeRegistry is the entry type of a registry (spec/ard.md §4.1), the
// registry's own entry in its manifest.
const TypeRegistry = "application/ai-registry+json"

// SpecVersion is the manifest's specVersion (spec/ard.md §4.1).
const SpecVersion = "1.0"

// Trust is what the registry itself verified of an agent (ARD's
// trustManifest, spec/ard.md §5.1), never what the card merely claims.
type Trust struct {
	Identity, IdentityType string
	Attestations           []Attestation
}

// Attestation is one verified claim (spec/ard.md §5.2).
type Attestation struct {
	Type, URI, MediaType string
}

// Attestation types of a card signature the registry verified, by what
// vouches for the signing key (verify.Trust*).
const (
	AttestationPinnedKey     = "a2a-agent-card-jws:pinned-key"
	AttestationTrustedOrigin = "a2a-agent-card-jws:trusted-origin"
)

// IdentityOf is the trustManifest identity of an agent whose card URL is
// cardURL: the https URI of its publisher, whose trust domain is the
// identifier's publisher by construction (spec/ard.md Appendix C.3).
func IdentityOf(cardURL string) string {
	p, err := card.PublisherOf(cardURL)
	if err != nil || strings.HasSuffix(p, ".invalid") {
		// An imported card file has no publisher domain to be vouched for.
		return ""
	}
	return "https://" + p
}

// trusted are the signature trusts that earn a trustManifest: a key the
// operator pinned or fetched from an origin the operator trusts. A key
// vouched for only by the card's own origin proves nothing a client could
// not check itself, so it earns none.
var trusted = map[string]string{
	string(verify.TrustPinned):        AttestationPinnedKey,
	string(verify.TrustTrustedOrigin): AttestationTrustedOrigin,
}

// TrustedSignatureTrusts are the signature_trust values that earn a
// trustManifest.
func TrustedSignatureTrusts() []string {
	out := make([]string, 0, len(trusted))
	for t := range trusted {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// trustOf is the trust of an agent, nil unless its current card's
// signature was verified with a trusted key.
func trustOf(s catalog.Summary) *Trust {
	att, ok := trusted[s.SignatureTrust]
	if s.SignatureStatus != catalog.SignatureVerified || !ok {
		return nil
	}
	id := IdentityOf(s.CardURL)
	if id == "" {
		return nil
	}
	return &Trust{Identity: id, IdentityType: "https",
		Attestations: []Attestation{{Type: att, URI: s.CardURL, MediaType: TypeA2ACard}}}
}

// WithExamples is e with the card's skill examples as its representative
// queries: at most five, and none when there are fewer than two (ARD asks
// for 2 to 5, spec/ard.md §4.3, and the manifest schema refuses fewer).
func (e Entry) WithExamples(examples []string) Entry {
	if len(examples) > catalog.MaxPublishedExamples {
		examples = examples[:catalog.MaxPublishedExamples]
	}
	e.RepresentativeQueries = nil
	if len(examples) >= 2 {
		e.RepresentativeQueries = slices.Clone(examples)
	}
	return e
}

// HasCardURL reports whether the entry's url is one a client can fetch
// the card at, rather than the URN of an imported card.
func (e Entry) HasCardURL() bool {
	return strings.HasPrefix(e.URL, "https://") || strings.HasPrefix(e.URL, "http://")
}

// ExamplesOf are the first example prompts of c's skills, in skill order,
// at most five.
func ExamplesOf(c *card.Card) []string {
	var out []string
	if c == nil {
		return nil
	}
	for _, sk := range c.Skills {
		for _, ex := range sk.Examples {
			if ex != "" && len(out) < catalog.MaxPublishedExamples {
				out = append(out, ex)
			}
		}
	}
	return out
}
