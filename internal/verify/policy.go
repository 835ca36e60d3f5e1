package verify

import "github.com/a2aregistry/registry/internal/policy"

// PolicyFacts adds what r found to an admission-policy input made from
// the card (policy.FromCard): the signature verdicts, the publisher, the
// probes of the interfaces and the content findings.
func PolicyFacts(a *policy.Agent, r Report) {
	a.SignatureStatus = string(r.Signatures.Status)
	// A same-origin jku is vouched for only by the card's origin (Trust).
	a.SignedByTrustedKey = r.Signatures.Trust == TrustPinned || r.Signatures.Trust == TrustTrustedOrigin
	a.Signatures = make([]policy.Signature, 0, len(r.Signatures.Entries))
	for _, e := range r.Signatures.Entries {
		s := policy.Signature{Alg: e.Alg, KID: e.KID, Verdict: string(e.Result)}
		if e.Signer != nil {
			s.KeySource = string(e.Signer.Source)
		}
		a.Signatures = append(a.Signatures, s)
	}
	if r.Publisher != nil {
		a.Publisher = policy.Publisher{Domain: r.Publisher.Domain, Verified: r.Publisher.Verified}
	}
	type declared struct{ url, binding, version string }
	probes := make(map[declared]ProbeStatus, len(r.Transports))
	for _, p := range r.Transports {
		probes[declared{p.URL, p.Binding, p.ProtocolVersion}] = p.Status
	}
	for i, in := range a.Interfaces {
		a.Interfaces[i].Probe = string(probes[declared{in.URL, in.Binding, in.ProtocolVersion}])
	}
	a.ContentFindings = make([]policy.Finding, 0, len(r.Content))
	for _, f := range r.Content {
		a.ContentFindings = append(a.ContentFindings, policy.Finding{Code: f.Code, Severity: string(f.Severity), Path: f.Path})
	}
}
