package verify

import (
	"fmt"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2aregistry/registry/internal/catalog"
)

// CheckRestoredKey reports whether k, read from an export, is a trusted key
// as NewTrustedKey makes them: a canonical id, a public JWK (an export
// never carries private parameters: NewTrustedKey drops them before
// anything is stored), the thumbprint of that key (RFC 7638), and origins
// already in their normalized form. Anything else means the file was
// altered, and the import refuses it before writing.
func CheckRestoredKey(k catalog.TrustedKey) error {
	if err := catalog.CheckID(k.ID); err != nil {
		return fmt.Errorf("trusted key: %w", err)
	}
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(k.JWK); err != nil {
		return fmt.Errorf("%w: trusted key %s: %w", catalog.ErrInvalidImport, k.ID, err)
	}
	if !jwk.IsPublic() {
		return fmt.Errorf("%w: trusted key %s carries private key parameters", catalog.ErrInvalidImport, k.ID)
	}
	want, err := NewTrustedKey(k.JWK, k.KID, k.Origins, time.Time{})
	if err != nil {
		return fmt.Errorf("%w: trusted key %s: %w", catalog.ErrInvalidImport, k.ID, err)
	}
	switch {
	case want.Thumbprint != k.Thumbprint:
		return fmt.Errorf("%w: trusted key %s: thumbprint %q is not the key's (%q)", catalog.ErrInvalidImport, k.ID, k.Thumbprint, want.Thumbprint)
	case want.KID != k.KID:
		return fmt.Errorf("%w: trusted key %s: kid %q differs from the key's", catalog.ErrInvalidImport, k.ID, k.KID)
	case !slices.Equal(want.Origins, k.Origins):
		return fmt.Errorf("%w: trusted key %s: origins %q are not origins in normalized form", catalog.ErrInvalidImport, k.ID, k.Origins)
	}
	return nil
}
