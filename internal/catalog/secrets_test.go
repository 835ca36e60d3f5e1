package catalog_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// TestSecretIsSharedAndKept: a secret is made once and every later call,
// as another replica's would, reads the same bytes; another name is
// another key.
func TestSecretIsSharedAndKept(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		first, err := s.Secret(ctx, catalog.SecretARDPageTokens)
		if err != nil {
			t.Fatal(err)
		}
		again, err := s.Secret(ctx, catalog.SecretARDPageTokens)
		if err != nil {
			t.Fatal(err)
		}
		other, err := s.Secret(ctx, "another")
		if err != nil {
			t.Fatal(err)
		}
		if len(first) != 32 || !bytes.Equal(first, again) || bytes.Equal(first, other) {
			t.Errorf("secrets: first %x, again %x, another %x; want 32 bytes, kept, distinct per name", first, again, other)
		}
	})
}
