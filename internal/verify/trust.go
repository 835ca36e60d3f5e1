package verify

import (
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2aregistry/registry/internal/catalog"
)

// TrustedKeyLookup is the part of the catalog CatalogKeys reads.
type TrustedKeyLookup interface {
	TrustedKeysByKID(ctx context.Context, kid string) ([]catalog.TrustedKey, error)
}

// CatalogKeys is the KeyStore of the admin-managed trust store kept in the
// catalog (table trusted_keys).
type CatalogKeys struct {
	Store TrustedKeyLookup
}

// PinnedKeys implements KeyStore.
func (c CatalogKeys) PinnedKeys(ctx context.Context, kid string) ([]PinnedKey, error) {
	stored, err := c.Store.TrustedKeysByKID(ctx, kid)
	if err != nil {
		return nil, err
	}
	// Rows are never deleted, so a key revoked and later pinned again has
	// two rows; the newest is the administrator's current decision
	// (stored is oldest first). Distinct keys under one kid stay distinct:
	// the verifier refuses such an ambiguous kid.
	latest := make(map[string]int, len(stored))
	for i, k := range stored {
		latest[k.Thumbprint] = i
	}
	out := make([]PinnedKey, 0, len(stored))
	for i, k := range stored {
		if latest[k.Thumbprint] != i {
			continue
		}
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(k.JWK); err != nil {
			// Only NewTrustedKey's output is stored; a key that no longer
			// parses is our fault, and guessing around it could accept
			// what the admin did not pin.
			return nil, fmt.Errorf("trusted key %s: %w", k.ID, err)
		}
		p := PinnedKey{KID: k.KID, Key: jwk, Origins: k.Origins, Source: KeySourcePinned}
		if k.NotAfter != nil {
			p.NotAfter = *k.NotAfter
		}
		if k.RevokedAt != nil {
			p.RevokedAt = *k.RevokedAt
		}
		out = append(out, p)
	}
	return out, nil
}

// ErrTrustedKey is wrapped by every reason NewTrustedKey refuses a key.
var ErrTrustedKey = errors.New("verify: unusable trusted key")

// NewTrustedKey checks a JWK an administrator wants to pin and returns the
// catalog row for it: only the public part is kept (a private JWK is
// accepted and reduced, so its secret never reaches the database), the
// key must be an asymmetric signature key, kid defaults to the JWK's own
// and must agree with it, and origins are normalized (RFC 6454 §4) — "*"
// means any origin.
func NewTrustedKey(jwkJSON []byte, kid string, origins []string, notAfter time.Time) (catalog.TrustedKey, error) {
	keys, err := ParseJWKS(jwkJSON)
	if err != nil {
		return catalog.TrustedKey{}, fmt.Errorf("%w: %w", ErrTrustedKey, err)
	}
	if len(keys) != 1 {
		return catalog.TrustedKey{}, fmt.Errorf("%w: want exactly one public signature key, found %d", ErrTrustedKey, len(keys))
	}
	k := keys[0]
	switch {
	case kid == "" && k.KeyID == "":
		return catalog.TrustedKey{}, fmt.Errorf("%w: the JWK has no kid; give one", ErrTrustedKey)
	case kid == "":
		kid = k.KeyID
	case k.KeyID != "" && k.KeyID != kid:
		return catalog.TrustedKey{}, fmt.Errorf("%w: kid %q differs from the JWK's kid %q", ErrTrustedKey, kid, k.KeyID)
	}
	k.KeyID = kid
	if k.Use != "" && k.Use != "sig" {
		return catalog.TrustedKey{}, fmt.Errorf("%w: the key's use is %q, not sig", ErrTrustedKey, k.Use)
	}
	if k.Algorithm != "" && !slices.Contains(acceptedAlgs, jose.SignatureAlgorithm(k.Algorithm)) {
		return catalog.TrustedKey{}, fmt.Errorf("%w: alg %q is not an accepted asymmetric algorithm (%s)", ErrTrustedKey, k.Algorithm, algList())
	}
	var norm []string
	for _, o := range origins {
		n := o
		if o != "*" {
			if n = origin(o); n == "" {
				return catalog.TrustedKey{}, fmt.Errorf("%w: origin %q is not scheme://host[:port]", ErrTrustedKey, o)
			}
		}
		if !slices.Contains(norm, n) {
			norm = append(norm, n)
		}
	}
	if len(norm) == 0 {
		return catalog.TrustedKey{}, fmt.Errorf("%w: give the origins the key may sign for (or * for any)", ErrTrustedKey)
	}
	tp, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		return catalog.TrustedKey{}, fmt.Errorf("%w: thumbprint: %w", ErrTrustedKey, err)
	}
	pub, err := json.Marshal(k)
	if err != nil {
		return catalog.TrustedKey{}, fmt.Errorf("%w: %w", ErrTrustedKey, err)
	}
	out := catalog.TrustedKey{
		KID:        kid,
		JWK:        pub,
		Thumbprint: base64.RawURLEncoding.EncodeToString(tp),
		Origins:    norm,
	}
	if !notAfter.IsZero() {
		na := notAfter.UTC()
		out.NotAfter = &na
	}
	return out, nil
}
