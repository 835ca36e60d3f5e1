package verify

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"math/big"

	"github.com/go-jose/go-jose/v4"
)

// diagnose runs after no canonical form verified a signature with its
// key, and asks whether the signer used a form A2A does not allow, so the
// report says what happened instead of calling the card tampered:
//
//   - the JSON payload itself in the signing input, without the "b64":
//     false header that would announce it (RFC 7797 §3 makes the header
//     mandatory for that);
//   - an ECDSA signature in ASN.1 DER, which OpenSSL and Java produce,
//     where JWS requires R||S (RFC 7518 §3.4).
//
// A zero Result means neither explains the signature. Only the key the
// signature already selected is tried, so nothing here widens trust.
func diagnose(h header, protected, sigText string, key jose.JSONWebKey, seen []formPayload) SignatureResult {
	sig, err := base64.RawURLEncoding.DecodeString(sigText)
	if err != nil {
		return SignatureResult{}
	}
	for _, fp := range seen {
		unencoded := []byte(protected + "." + string(fp.payload))
		if verifyRaw(key.Key, h.alg, unencoded, sig, false) {
			return SignatureResult{Result: ResultUnencodedPayload, Form: fp.form, Problem: fmt.Sprintf(
				"signed with an unencoded payload (the card's JSON itself in the signing input, without even the RFC 7797 \"b64\": false header), which A2A does not use: "+
					"its signing input is the base64url-encoded payload (v1.0 §8.4.1), so A2A clients reject the signature. It does match the card's %s form: the card was not altered after signing", fp.form)}
		}
	}
	encoded := func(p []byte) []byte {
		return []byte(protected + "." + base64.RawURLEncoding.EncodeToString(p))
	}
	for _, fp := range seen {
		if verifyRaw(key.Key, h.alg, encoded(fp.payload), sig, true) {
			return SignatureResult{Result: ResultDEREncodedSignature, Form: fp.form, Problem: fmt.Sprintf(
				"the ECDSA signature is ASN.1 DER-encoded; JWS requires the fixed-size R||S pair (RFC 7518 §3.4), so A2A clients reject it. "+
					"It does match the card's %s form: the card was not altered after signing", fp.form)}
		}
	}
	return SignatureResult{}
}

// verifyRaw checks sig over input with a public key of go-jose's types,
// for the forms go-jose (rightly) refuses. der reads an ECDSA signature as
// ASN.1 DER; it only applies to ES* algorithms.
func verifyRaw(key any, alg string, input, sig []byte, der bool) bool {
	var h crypto.Hash
	switch alg {
	case "ES256", "RS256", "PS256":
		h = crypto.SHA256
	case "ES384", "RS384", "PS384":
		h = crypto.SHA384
	case "ES512", "RS512", "PS512":
		h = crypto.SHA512
	case "EdDSA":
	default:
		return false
	}
	digest := func() []byte {
		d := h.New()
		d.Write(input)
		return d.Sum(nil)
	}
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		if alg[:2] != "ES" {
			return false
		}
		if der {
			return ecdsa.VerifyASN1(k, digest(), sig)
		}
		n := (k.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*n {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])
		return ecdsa.Verify(k, digest(), r, s)
	case *rsa.PublicKey:
		if der {
			return false
		}
		switch alg[:2] {
		case "RS":
			return rsa.VerifyPKCS1v15(k, h, digest(), sig) == nil
		case "PS":
			return rsa.VerifyPSS(k, h, digest(), sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}) == nil
		}
	case ed25519.PublicKey:
		return !der && alg == "EdDSA" && ed25519.Verify(k, input, sig)
	}
	return false
}
