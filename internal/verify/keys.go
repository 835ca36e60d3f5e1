package verify

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// PinnedKey is a public key an administrator trusts for cards of some
// origins. A pinned key overrides the card's jku: the signature's kid is
// looked up here first.
type PinnedKey struct {
	KID string
	// Key is the public key (crypto.PublicKey inside a JWK).
	Key jose.JSONWebKey
	// Origins are the card origins ("https://agent.example.com") this key
	// may sign for; "*" means any origin (keys given on the command line).
	Origins []string
	// NotAfter is the key's expiry; zero means none.
	NotAfter time.Time
	// RevokedAt, when set, revokes the key from that instant on.
	RevokedAt time.Time
	// Source is KeySourcePinned or KeySourceCLI.
	Source KeySource
}

// KeyStore is the trust store of pinned keys. The catalog implements it
// for admin-managed keys; StaticKeys serves tests and the CLI.
type KeyStore interface {
	// PinnedKeys returns every key pinned under kid, whatever its origins,
	// revocation or expiry: the verifier decides, so that a revoked key
	// is reported as revoked rather than unknown.
	PinnedKeys(ctx context.Context, kid string) ([]PinnedKey, error)
}

// StaticKeys is an in-memory KeyStore.
type StaticKeys []PinnedKey

// PinnedKeys implements KeyStore.
func (s StaticKeys) PinnedKeys(_ context.Context, kid string) ([]PinnedKey, error) {
	var out []PinnedKey
	for _, k := range s {
		if k.KID == kid {
			out = append(out, k)
		}
	}
	return out, nil
}

func (k PinnedKey) appliesTo(origins []string) bool {
	for _, o := range k.Origins {
		if o == "*" {
			return true
		}
		// Keys pinned before origins were canonicalized may be stored
		// in another spelling (an IDN host in Unicode).
		co := origin(o)
		for _, c := range origins {
			if strings.EqualFold(o, c) || co != "" && co == origin(c) {
				return true
			}
		}
	}
	return false
}

// ErrJWKS is wrapped by every failure to obtain a usable JWKS.
var ErrJWKS = errors.New("verify: JWKS unavailable")

// ParseJWKS reads a JWK Set (RFC 7517 §5) and keeps its public signature
// keys. Keys of unknown type are skipped (§5: "implementations SHOULD
// ignore JWKs within a JWK Set that use kty values that are not
// understood"); symmetric keys are skipped because no accepted algorithm
// uses them. A single JWK (an object with "kty") is accepted as a set of one.
func ParseJWKS(data []byte) ([]jose.JSONWebKey, error) {
	v, err := decodeStrict(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJWKS, err)
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: not a JSON object", ErrJWKS)
	}
	var raws []any
	if _, single := top["kty"]; single {
		raws = []any{top}
	} else {
		keys, ok := top["keys"].([]any)
		if !ok {
			return nil, fmt.Errorf("%w: no \"keys\" array", ErrJWKS)
		}
		raws = keys
	}
	if len(raws) > maxJWKSKeys {
		return nil, fmt.Errorf("%w: %d keys, more than %d", ErrJWKS, len(raws), maxJWKSKeys)
	}
	var out []jose.JSONWebKey
	for _, r := range raws {
		b, err := json.Marshal(r)
		if err != nil {
			continue
		}
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(b); err != nil {
			continue
		}
		pub := k.Public()
		if !pub.Valid() {
			continue // symmetric or unusable
		}
		pub.KeyID, pub.Algorithm, pub.Use = k.KeyID, k.Algorithm, k.Use
		out = append(out, pub)
	}
	return out, nil
}

const maxJWKSKeys = 100

// describeKey fills the key fields of a Signer.
func describeKey(kid string, k jose.JSONWebKey, src KeySource, jku string) *Signer {
	s := &Signer{KID: kid, Source: src, JKU: jku}
	if tp, err := k.Thumbprint(crypto.SHA256); err == nil {
		s.Thumbprint = base64.RawURLEncoding.EncodeToString(tp)
	}
	switch pk := k.Key.(type) {
	case *ecdsa.PublicKey:
		s.KeyType, s.Curve, s.Bits = "EC", pk.Curve.Params().Name, pk.Curve.Params().BitSize
	case *rsa.PublicKey:
		s.KeyType, s.Bits = "RSA", pk.N.BitLen()
	case ed25519.PublicKey:
		s.KeyType, s.Curve = "OKP", "Ed25519"
	}
	return s
}

// jwksCache keeps fetched key sets per URL for as long as their
// Cache-Control allows, clamped to [min, max]. It is bounded: when full,
// the entry expiring first is evicted.
type jwksCache struct {
	mu      sync.Mutex
	entries map[string]jwksEntry
	max     int
}

type jwksEntry struct {
	keys    []jose.JSONWebKey
	expires time.Time
}

func (c *jwksCache) get(u string, now time.Time) ([]jose.JSONWebKey, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[u]
	if !ok || !now.Before(e.expires) {
		return nil, false
	}
	return e.keys, true
}

func (c *jwksCache) put(u string, keys []jose.JSONWebKey, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]jwksEntry{}
	}
	if _, ok := c.entries[u]; !ok && len(c.entries) >= c.max {
		var victim string
		var first time.Time
		for k, e := range c.entries {
			if victim == "" || e.expires.Before(first) {
				victim, first = k, e.expires
			}
		}
		delete(c.entries, victim)
	}
	c.entries[u] = jwksEntry{keys: keys, expires: expires}
}

// cacheTTL reads max-age from Cache-Control (RFC 9111 §5.2.2.1); no-store
// and no-cache mean "as short as allowed".
func cacheTTL(h http.Header, def, lo, hi time.Duration) time.Duration {
	ttl := def
	for part := range strings.SplitSeq(h.Get("Cache-Control"), ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch strings.ToLower(name) {
		case "no-store", "no-cache":
			ttl = 0
		case "max-age":
			if n, err := strconv.Atoi(strings.Trim(val, `"`)); err == nil && n >= 0 {
				ttl = time.Duration(n) * time.Second
			}
		}
	}
	return min(max(ttl, lo), hi)
}

// fetchJWKS gets the key set at u through the safe client, without
// following redirects (a same-origin jku must not be bounced to another
// origin after the origin check), capped in size and time.
func (v *Verifier) fetchJWKS(ctx context.Context, u string) ([]jose.JSONWebKey, error) {
	now := v.now()
	if keys, ok := v.jwks.get(u, now); ok {
		return keys, nil
	}
	if v.opts.Client == nil {
		return nil, fmt.Errorf("%w: no network client configured", ErrJWKS)
	}
	ctx, cancel := context.WithTimeout(ctx, v.opts.JWKSTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJWKS, err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	hc := v.opts.Client.HTTPClient()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: fetching %s: %w", ErrJWKS, u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: fetching %s: HTTP %d (redirects are not followed)", ErrJWKS, u, resp.StatusCode)
	}
	body, err := safehttp.ReadBody(resp, v.opts.MaxJWKSBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %w", ErrJWKS, u, err)
	}
	keys, err := ParseJWKS(body)
	if err != nil {
		return nil, err
	}
	ttl := cacheTTL(resp.Header, v.opts.DefaultJWKSTTL, v.opts.MinJWKSTTL, v.opts.MaxJWKSTTL)
	v.jwks.put(u, keys, now.Add(ttl))
	return keys, nil
}

// origin returns the canonical origin of an http(s) URL (card.CanonicalOrigin:
// RFC 6454 §4 with IDN hosts in ASCII, default port and trailing dot
// dropped), or "" for anything else. Every origin comparison of the
// verifier (card origin, jku, trust store scope) goes through it, so that
// two spellings of one host never disagree.
func origin(raw string) string {
	o, err := card.CanonicalOrigin(raw)
	if err != nil {
		return ""
	}
	return o
}
