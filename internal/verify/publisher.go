package verify

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/a2aregistry/registry/internal/card"
)

// PublisherReport says who publishes an agent and whether the publisher
// proved it holds the key that signs the card.
type PublisherReport struct {
	// Domain is the registrable domain of the card URL's host
	// (card.PublisherOfCard); an IP address is its own publisher.
	Domain string `json:"domain"`
	// Verified is true when a key that verified one of the card's
	// signatures is the publisher's own (Proof says how).
	Verified bool `json:"verified"`
	// Proof is how the publisher proved it: one of the Proof* values;
	// empty when not verified.
	Proof Proof `json:"proof,omitempty"`
	// ProofURL is the JWKS or manifest the proof came from, when there is
	// one.
	ProofURL string `json:"proof_url,omitempty"`
}

// Proof is how a publisher proved control of the key that signs its card.
type Proof string

const (
	// ProofWellKnownJWKS: the signing key is served at
	// https://<the domain or a host on it>/.well-known/jwks.json.
	ProofWellKnownJWKS Proof = "well_known_jwks"
	// ProofJKU: the signature's jku, over https, is on the domain.
	ProofJKU Proof = "jku"
	// ProofPinnedKey: the operator pinned the key for an origin on the
	// domain (not for any origin, "*").
	ProofPinnedKey Proof = "pinned_key"
	// ProofManifest: an ARD manifest on the domain lists the agent with a
	// trustManifest whose identity is the domain (ManifestListings).
	ProofManifest Proof = "ard_manifest"
)

// WellKnownJWKSPath is where a publisher serves its keys.
const WellKnownJWKSPath = "/.well-known/jwks.json"

// ManifestListings is the one hook for publisher proofs found elsewhere
// than in the card's signatures: an ARD manifest (/.well-known/ard.json)
// on the publisher's domain that lists the agent with a trustManifest
// identity equal to the domain. The sources feature implements it; nil
// (Options.Manifests) means no manifest is consulted.
type ManifestListings interface {
	// VouchedBy answers whether a manifest on domain lists the agent at
	// cardURL with trustManifest identity https://<domain>, and the
	// manifest's URL when it does.
	VouchedBy(ctx context.Context, domain, cardURL string) (manifestURL string, ok bool, err error)
}

// judgePublisher is the one rule of a verified publisher. It looks at the
// keys that verified a signature only: a key that verified nothing proves
// nothing about who holds it. nil for a card without a publisher.
func (v *Verifier) judgePublisher(ctx context.Context, cardURL string, sigs SignatureReport) *PublisherReport {
	domain, err := card.PublisherOfCard(cardURL)
	if err != nil {
		return nil
	}
	p := &PublisherReport{Domain: domain}
	prove := func(proof Proof, u string) *PublisherReport {
		p.Verified, p.Proof, p.ProofURL = true, proof, u
		return p
	}
	var signers []*Signer
	for _, e := range sigs.Entries {
		if (e.Result == ResultVerified || e.Result == ResultKeyChanged) && e.Signer != nil {
			signers = append(signers, e.Signer)
		}
	}
	for _, s := range signers {
		if (s.Source == KeySourceJKU || s.Source == KeySourceTrustedJKU) && httpsOnDomain(s.JKU, domain) {
			return prove(ProofJKU, s.JKU)
		}
	}
	for _, s := range signers {
		if s.Source == KeySourcePinned && v.pinnedFor(ctx, s, domain) {
			return prove(ProofPinnedKey, "")
		}
	}
	if len(signers) > 0 {
		for _, u := range wellKnownJWKS(cardURL, domain) {
			keys, err := v.fetchJWKS(ctx, u)
			if err != nil {
				v.log.Debug("publisher JWKS", "card_url", cardURL, "jwks", u, "err", err)
				continue
			}
			for _, k := range keys {
				d := describeKey(k.KeyID, k, KeySourceJKU, u)
				if slices.ContainsFunc(signers, func(s *Signer) bool { return s.Thumbprint == d.Thumbprint }) {
					return prove(ProofWellKnownJWKS, u)
				}
			}
		}
	}
	if v.opts.Manifests != nil {
		mu, ok, err := v.opts.Manifests.VouchedBy(ctx, domain, cardURL)
		if err != nil {
			v.log.Warn("publisher manifest", "card_url", cardURL, "publisher", domain, "err", err)
		} else if ok {
			return prove(ProofManifest, mu)
		}
	}
	return p
}

// httpsOnDomain tells whether raw is an https URL whose host belongs to
// domain.
func httpsOnDomain(raw, domain string) bool {
	o := origin(raw)
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	return err == nil && u.Scheme == "https" && card.RegistrableDomain(u.Hostname()) == domain
}

// pinnedFor tells whether the pinned key of s is pinned for an https
// origin on domain, rather than only for any origin.
func (v *Verifier) pinnedFor(ctx context.Context, s *Signer, domain string) bool {
	if v.opts.Keys == nil {
		return false
	}
	keys, err := v.opts.Keys.PinnedKeys(ctx, s.KID)
	if err != nil {
		return false
	}
	for _, k := range keys {
		if describeKey(s.KID, k.Key, KeySourcePinned, "").Thumbprint != s.Thumbprint {
			continue
		}
		if slices.ContainsFunc(k.Origins, func(o string) bool { return o != "*" && httpsOnDomain(o, domain) }) {
			return true
		}
	}
	return false
}

// wellKnownJWKS are the key sets a publisher may serve its keys at: on
// the card's own host and on the registrable domain itself, over https,
// on the card URL's port when an https card URL names one.
func wellKnownJWKS(cardURL, domain string) []string {
	u, err := url.Parse(origin(cardURL))
	if err != nil || u.Host == "" {
		return nil
	}
	host, port := u.Host, ""
	if u.Port() != "" {
		host, port = strings.TrimSuffix(u.Host, ":"+u.Port()), ":"+u.Port()
	}
	if u.Scheme != "https" {
		// An http card URL's port says nothing of an https service.
		port = ""
	}
	if strings.Contains(domain, ":") {
		domain = "[" + domain + "]" // an IPv6 address is its own publisher
	}
	out := []string{"https://" + host + port + WellKnownJWKSPath}
	if d := "https://" + domain + port + WellKnownJWKSPath; d != out[0] {
		out = append(out, d)
	}
	return out
}
