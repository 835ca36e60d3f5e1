package policy

import (
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/a2aregistry/registry/internal/card"
)

// Agent is what a rule's expression sees as `agent`: one version of one
// agent's card, with what the registry found about it. Field names in CEL
// are the `cel` tags; docs/security.md documents each one, and a rule that
// names a field not here is refused when the policy is loaded.
//
// Fields the verifier fills (signatures, probes, content findings) hold
// their zero values until a report exists: signature_status is then
// "unchecked", as the search facet says.
type Agent struct {
	Name string `cel:"name"`
	// Card is the card as published (its JSON), not the normalized view:
	// a rule can ask about any field the card carries, in the card's own
	// spelling (`agent.card.supportedInterfaces`, `agent.card.url`).
	//
	// FromCard leaves it nil: the card's bytes are decoded when a rule
	// first reads `agent.card`, once per evaluation of the agent (see
	// cardField), so a policy that never does pays nothing for it. A
	// caller may set it instead; the rules then read it. It is a
	// google.protobuf.Struct because cel-go's native types cannot declare
	// a field of Go type any; CEL reads it as a map(string, dyn), so
	// rules see plain JSON values.
	Card *structpb.Struct `cel:"card"`
	// raw is the card's bytes, decoded into published on first use.
	raw              []byte
	published        map[string]any
	ProtocolVersions []string    `cel:"protocol_versions"`
	Interfaces       []Interface `cel:"interfaces"`
	SecuritySchemes  []Scheme    `cel:"security_schemes"`
	// Anonymous is true when the card asks for no credentials at all
	// (card.Card.SecurityTypes is empty), as the search facet judges it.
	Anonymous bool `cel:"anonymous"`
	// SignatureStatus is the signature_status facet value: verified,
	// invalid, unsigned, key_unavailable or unchecked.
	SignatureStatus string `cel:"signature_status"`
	// SignedByTrustedKey is true when a key the operator pinned, or one
	// from a jku on an origin the operator trusts, verified a signature —
	// not a same-origin jku alone, which only the card's origin vouches for.
	SignedByTrustedKey bool        `cel:"signed_by_trusted_key"`
	Signatures         []Signature `cel:"signatures"`
	ContentFindings    []Finding   `cel:"content_findings"`
	LintFindings       []Finding   `cel:"lint_findings"`
	// Publisher is who publishes the agent and whether it proved it
	// holds the signing key, from the verification report; before the
	// first report verify.PolicyInput takes its domain from the card URL
	// ("" for a card without one).
	Publisher Publisher `cel:"publisher"`
	// Health is the crawler's view of the agent (catalog.Health*): up,
	// down, stale, removed (its card is gone) or unknown.
	Health string `cel:"health"`
	// Provenance is how the agent came to the catalog, as the provenance
	// facet says it: "registered" (by URL, by a person), "seeded" (a seed
	// list), "imported" (a card file), and for an entry of a source's ARD
	// manifest its relation, "publishedFrom" (a manifest on the card's own
	// host), "discoveredFrom" (one elsewhere) or "federatedFrom" (a peer
	// registry). Only the ways that still vouch for the agent count; an
	// agent may have several.
	Provenance []string `cel:"provenance"`
	// VersionSource is how this card version reached the catalog: "url"
	// (a registration by URL, seeds and sources' entries included),
	// "crawl" (a check) or "import" (a card file).
	VersionSource string `cel:"version_source"`
}

// Interface is one declared interface and what its live probe found.
type Interface struct {
	URL             string `cel:"url"`
	Binding         string `cel:"binding"`
	ProtocolVersion string `cel:"protocol_version"`
	// Probe is the probe's status (confirmed, version_unconfirmed,
	// binding_mismatch, unreachable, skipped, tls_mismatch), or "" when
	// the interface has not been probed.
	Probe string `cel:"probe"`
}

// Scheme is one declared security scheme.
type Scheme struct {
	Name string `cel:"name"`
	Type string `cel:"type"`
}

// Signature is one `signatures[]` entry and its verdict.
type Signature struct {
	Alg       string `cel:"alg"`
	KID       string `cel:"kid"`
	KeySource string `cel:"key_source"`
	Verdict   string `cel:"verdict"`
}

// Publisher is the agent's publisher: the registrable domain of its card
// URL, and whether it proved it holds the key that signs the card
// (verify.PublisherReport; docs/security.md, Publishers).
type Publisher struct {
	Domain   string `cel:"domain"`
	Verified bool   `cel:"verified"`
}

// Finding is a lint or content-scan finding.
type Finding struct {
	Code     string `cel:"code"`
	Severity string `cel:"severity"`
	Path     string `cel:"path"`
}

// FromCard fills what the card alone tells: name, the published card
// (decoded when a rule reads it), protocol versions, interfaces, schemes,
// anonymity and lint findings. The signature fields start as "unchecked"
// until a report is added.
func FromCard(c *card.Card) Agent {
	a := Agent{
		Name:             c.Name,
		raw:              c.Raw,
		ProtocolVersions: nonNil(c.ProtocolVersions),
		Interfaces:       make([]Interface, 0, len(c.Interfaces)),
		SecuritySchemes:  make([]Scheme, 0, len(c.SecuritySchemes)),
		Anonymous:        len(c.SecurityTypes()) == 0,
		SignatureStatus:  "unchecked",
		Signatures:       []Signature{},
		ContentFindings:  []Finding{},
		LintFindings:     make([]Finding, 0, len(c.Findings)),
		Health:           "unknown",
		Provenance:       []string{},
	}
	for _, in := range c.Interfaces {
		a.Interfaces = append(a.Interfaces, Interface{URL: in.URL, Binding: in.Binding, ProtocolVersion: in.ProtocolVersion})
	}
	for _, s := range c.SecuritySchemes {
		a.SecuritySchemes = append(a.SecuritySchemes, Scheme{Name: s.Name, Type: s.Type})
	}
	for _, f := range c.Findings {
		a.LintFindings = append(a.LintFindings, Finding{Code: f.Code, Severity: string(f.Severity), Path: f.Path})
	}
	return a
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
