package a2aagent

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2aregistry/registry/internal/verify"
)

// JWKSPath serves the public key the card is signed with; the signature's
// jku names it, on the card's own origin, where a verifier may trust it
// over HTTPS (A2A issue #2096: the card's origin vouches for its key).
const JWKSPath = "/.well-known/jwks.json"

// ErrSigningKey is wrapped when the signing key cannot be used.
var ErrSigningKey = errors.New("a2aagent: signing key")

// LoadSigningKey reads a PEM private key (PKCS #8, or SEC 1 "EC PRIVATE
// KEY", or PKCS #1 "RSA PRIVATE KEY"): ECDSA P-256, Ed25519 or RSA of at
// least 2048 bits, the keys A2A signers use (ES256, EdDSA, RS256).
func LoadSigningKey(path string) (crypto.Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSigningKey, err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%w: %s holds no PEM block", ErrSigningKey, path)
	}
	var key any
	switch blk.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(blk.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSigningKey, path, err)
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a signing key", ErrSigningKey, path)
	}
	if _, err := algorithm(s); err != nil {
		return nil, err
	}
	return s, nil
}

func algorithm(s crypto.Signer) (jose.SignatureAlgorithm, error) {
	switch k := s.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve == elliptic.P256() {
			return jose.ES256, nil
		}
	case ed25519.PrivateKey:
		return jose.EdDSA, nil
	case *rsa.PrivateKey:
		if k.N.BitLen() >= 2048 {
			return jose.RS256, nil
		}
	}
	return "", fmt.Errorf("%w: use ECDSA P-256, Ed25519 or RSA of at least 2048 bits", ErrSigningKey)
}

// signer signs the registry's card.
type signer struct {
	key crypto.Signer
	alg jose.SignatureAlgorithm
	kid string
	// jwks is the public key as a JWK Set.
	jwks []byte
}

func newSigner(key crypto.Signer) (*signer, error) {
	alg, err := algorithm(key)
	if err != nil {
		return nil, err
	}
	pub := jose.JSONWebKey{Key: key.Public(), Algorithm: string(alg), Use: "sig"}
	// The key id is the key's own RFC 7638 thumbprint: stable across
	// restarts and replicas sharing the key, and naming nothing else.
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSigningKey, err)
	}
	pub.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pub}})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSigningKey, err)
	}
	return &signer{key: key, alg: alg, kid: pub.KeyID, jwks: jwks}, nil
}

// sign adds a detached JWS (A2A v1.0 §8.4) to the card raw. The payload is
// the JS SDK's canonical form: the card through the v1.0 schema, empties
// removed, keys sorted. The v0.3 fields beside the v1.0 ones are outside
// that schema, so the JS SDK could verify no other form of this mixed
// card; the registry's verifier tries that form too.
func (s *signer) sign(raw []byte, jku string) ([]byte, error) {
	payload, err := verify.Payload(raw, verify.FormJSSDK)
	if err != nil {
		return nil, fmt.Errorf("a2aagent: signing the card: %w", err)
	}
	opts := (&jose.SignerOptions{}).WithType("JOSE").WithHeader("kid", s.kid).WithHeader("jku", jku)
	js, err := jose.NewSigner(jose.SigningKey{Algorithm: s.alg, Key: s.key}, opts)
	if err != nil {
		return nil, fmt.Errorf("a2aagent: signing the card: %w", err)
	}
	obj, err := js.Sign(payload)
	if err != nil {
		return nil, fmt.Errorf("a2aagent: signing the card: %w", err)
	}
	compact, err := obj.DetachedCompactSerialize()
	if err != nil {
		return nil, fmt.Errorf("a2aagent: signing the card: %w", err)
	}
	protected, signature, _ := strings.Cut(strings.Replace(compact, "..", ".", 1), ".")
	sig, err := json.Marshal([]map[string]string{{"protected": protected, "signature": signature}})
	if err != nil {
		return nil, err
	}
	// The card is one JSON object: the signatures go in before its
	// closing brace, leaving every other byte as it was.
	body := bytes.TrimRight(raw, " \t\r\n")
	if len(body) == 0 || body[len(body)-1] != '}' {
		return nil, errors.New("a2aagent: signing the card: not a JSON object")
	}
	out := append(bytes.Clone(body[:len(body)-1]), []byte(",\n  \"signatures\": ")...)
	out = append(out, sig...)
	return append(out, "\n}"...), nil
}

// ServeJWKS serves the public key of the card's signature; 404 when the
// card is not signed.
func (ag *Agent) ServeJWKS(w http.ResponseWriter, r *http.Request) {
	if ag.signer == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write(ag.signer.jwks)
}
