// Package verify checks what an A2A agent card claims: its JWS signatures
// (over every canonical form real signers produce, with keys from a pinned
// trust store or a same-origin jku), its transport declarations (by
// side-effect-free live probes), its security schemes and the text it
// shows to people and models (the content scan, package contentscan).
//
// Everything a stranger controls — the card, its jku, its endpoints, its
// OpenID Connect URL — is reached through the safehttp client only.
//
// The JSON form of Report is a documented, stable API (the `registry verify
// --json` output and, later, the catalog's stored report): field names and
// the string codes below are never renamed; new ones may be added.
package verify

import (
	"time"

	"github.com/a2aregistry/registry/internal/card"
)

// Status is the verdict on a card's signatures.
type Status string

const (
	// StatusVerified: at least one signature verifies with an acceptable
	// key (v1.0 §8.4: one valid signature suffices), a key_changed one
	// included.
	StatusVerified Status = "verified"
	// StatusInvalid: no signature verifies and at least one is
	// definitely wrong: it does not match, is malformed, uses a refused
	// algorithm or critical header, is in a form A2A does not allow
	// (unencoded payload, DER-encoded ECDSA), or names a revoked or
	// expired key.
	StatusInvalid Status = "invalid"
	// StatusUnsigned: the card has no signatures.
	StatusUnsigned Status = "unsigned"
	// StatusKeyUnavailable: the signatures could not be checked because
	// no acceptable key was found (unknown kid, jku not trusted, JWKS
	// unreachable).
	StatusKeyUnavailable Status = "key_unavailable"
)

// Result is the outcome of one signature.
type Result string

const (
	ResultVerified             Result = "verified"
	ResultBadSignature         Result = "bad_signature"
	ResultUnknownKey           Result = "unknown_key"
	ResultUntrustedKeySource   Result = "untrusted_key_source"
	ResultUnsupportedAlgorithm Result = "unsupported_algorithm"
	ResultMalformed            Result = "malformed"
	// ResultUnsupportedCritical: a `crit` header names an extension this
	// verifier does not implement (RFC 7515 §4.1.11: MUST reject).
	ResultUnsupportedCritical Result = "unsupported_critical"
	// ResultKeyRevoked and ResultKeyExpired: the pinned key is revoked or
	// past its expiry; v1.0 §8.4.3: such keys MUST NOT be accepted.
	ResultKeyRevoked Result = "key_revoked"
	ResultKeyExpired Result = "key_expired"
	// ResultKeyFetchFailed: the jku was acceptable but its JWKS could not
	// be fetched or read (refused address, timeout, too large, not JSON).
	ResultKeyFetchFailed Result = "key_fetch_failed"
	// ResultUnencodedPayload: the signature is over the card's payload
	// unencoded (RFC 7797 "b64": false, or the JSON itself in the signing
	// input), a form A2A does not use (v1.0 §8.4.1: BASE64URL(payload)).
	// The card was not altered, but A2A clients reject the signature.
	ResultUnencodedPayload Result = "unencoded_payload"
	// ResultDEREncodedSignature: an ECDSA signature in ASN.1 DER, as
	// OpenSSL and Java write it, where JWS requires the fixed-size R||S
	// pair (RFC 7518 §3.4). The card was not altered, but A2A clients
	// reject the signature.
	ResultDEREncodedSignature Result = "der_encoded_signature"
	// ResultKeyChanged: the key pinned under the signature's kid does not
	// verify it, but the key the card's trusted jku publishes under that
	// kid does: the signer changed keys (rotation), not the card. It
	// counts as a verification by that jku key (its trust, not
	// TrustPinned); ReplacedKey names the pinned one.
	ResultKeyChanged Result = "key_changed"
)

// definite reports whether a result proves the signature wrong, as opposed
// to leaving it unchecked.
func (r Result) definite() bool {
	switch r {
	case ResultBadSignature, ResultMalformed, ResultUnsupportedAlgorithm,
		ResultUnsupportedCritical, ResultKeyRevoked, ResultKeyExpired,
		ResultUnencodedPayload, ResultDEREncodedSignature:
		return true
	}
	return false
}

// KeySource tells where a verification key came from.
type KeySource string

const (
	// KeySourceJKU: the JWKS at the signature's jku, on the card's origin.
	KeySourceJKU KeySource = "jku"
	// KeySourceTrustedJKU: the JWKS at a jku on an operator-trusted origin.
	KeySourceTrustedJKU KeySource = "trusted_jku"
	// KeySourcePinned: the trust store of pinned keys.
	KeySourcePinned KeySource = "pinned"
	// KeySourceCLI: keys trusted for one `registry verify` run.
	KeySourceCLI KeySource = "cli"
)

// Trust says what vouches for the key of a verified signature. A jku is
// the signer's own word (A2A issue #2096 treats it as a hint): a
// same-origin https jku proves only that whoever controls the card's
// origin published the key, which an attacker who took the origin also
// does. A security team filters on TrustPinned for "verified by a key the
// operator pinned".
type Trust string

const (
	// TrustPinned: a key the operator pinned (or passed to `registry
	// verify`) verified a signature.
	TrustPinned Trust = "pinned"
	// TrustTrustedOrigin: a key from a jku on an origin the operator
	// trusts (--trust-jku-origin), not pinned.
	TrustTrustedOrigin Trust = "trusted_origin"
	// TrustOriginOnly: the only thing vouching for the key is the card's
	// own origin (a same-origin https jku).
	TrustOriginOnly Trust = "origin_only"
)

// trustOf ranks a key source.
func trustOf(src KeySource) Trust {
	switch src {
	case KeySourcePinned, KeySourceCLI:
		return TrustPinned
	case KeySourceTrustedJKU:
		return TrustTrustedOrigin
	}
	return TrustOriginOnly
}

// Report is everything verify found about one card.
type Report struct {
	// CardURL is where the card came from; empty for a local file.
	CardURL string `json:"card_url,omitempty"`
	// Origin is the origin key sources are judged against: the card
	// URL's, or for a local file the origins its interfaces declare.
	Origins    []string        `json:"origins"`
	CheckedAt  time.Time       `json:"checked_at"`
	Signatures SignatureReport `json:"signatures"`
	// Publisher is who publishes the agent (the card URL's registrable
	// domain) and whether it proved it holds the signing key; absent for
	// a card without a URL and from reports made before it existed.
	Publisher  *PublisherReport `json:"publisher,omitempty"`
	Transports []Probe          `json:"transports,omitempty"`
	Security   []Finding        `json:"security_findings"`
	// Content are the content scan's findings on the card's text
	// (contentscan); [] when it found nothing, absent from reports made
	// before it existed and null when the stored card no longer parses.
	Content []ContentFinding `json:"content_findings"`
}

// SignatureReport is the verdict on the card's signatures and one entry
// per signature, in card order.
type SignatureReport struct {
	Status Status `json:"status"`
	// Signer is the key of the first verified signature.
	Signer  *Signer           `json:"signer,omitempty"`
	Entries []SignatureResult `json:"entries"`
	// Rotation is true when valid signatures by several keys are
	// present: a signer rolling keys over, not an attack.
	Rotation bool `json:"rotation,omitempty"`
	// Trust is the strongest vouching among the verified signatures;
	// empty when none verified.
	Trust Trust `json:"trust,omitempty"`
}

// SignatureResult is the outcome of one `signatures[]` entry.
type SignatureResult struct {
	Index  int    `json:"index"`
	Result Result `json:"result"`
	// Alg, KID, Typ and JKU are as written in the protected header (kid
	// may come from the unprotected header).
	Alg string `json:"alg,omitempty"`
	KID string `json:"kid,omitempty"`
	Typ string `json:"typ,omitempty"`
	JKU string `json:"jku,omitempty"`
	// Signer is the key that was used, when one was selected.
	Signer *Signer `json:"signer,omitempty"`
	// ReplacedKey is the pinned key a key_changed signature no longer
	// matches.
	ReplacedKey *Signer `json:"replaced_key,omitempty"`
	// Form is the canonical form whose payload verified.
	Form Form `json:"form,omitempty"`
	// UnsignedFields are JSON paths of non-empty card fields the verified
	// form leaves out of the payload: the signature says nothing about
	// them (e.g. v0.3 `url` on a card signed by the JS SDK).
	UnsignedFields []string `json:"unsigned_fields,omitempty"`
	// Problem says what was wrong, for people.
	Problem string `json:"problem,omitempty"`
	// Notes are observations that do not change the result (typ not
	// JOSE, jku in the unprotected header ignored, …).
	Notes []string `json:"notes,omitempty"`
}

// Signer identifies a verification key.
type Signer struct {
	KID string `json:"kid"`
	// Thumbprint is the RFC 7638 SHA-256 JWK thumbprint, base64url.
	Thumbprint string    `json:"thumbprint"`
	Source     KeySource `json:"source"`
	// JKU is the JWKS URL the key came from (jku sources).
	JKU string `json:"jku,omitempty"`
	// KeyType and Curve describe the key ("EC"/"P-256", "RSA", "OKP"/"Ed25519").
	KeyType string `json:"key_type"`
	Curve   string `json:"curve,omitempty"`
	Bits    int    `json:"bits,omitempty"`
}

// Severity and Finding are the card package's: a security-audit finding
// reads like a lint finding (stable Code, JSON Path into the card).
type (
	Severity = card.Severity
	Finding  = card.Finding
)

const (
	SeverityError   = card.SeverityError
	SeverityWarning = card.SeverityWarning
	SeverityInfo    = card.SeverityInfo
)
