package catalog_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
)

// A peer registry's bearer token is sealed at rest like webhook secrets:
// written plain without keys, sealed by Migrate once a key is given,
// sealed when written under a key, read back only by SourceToken, never
// part of a Source; a source without one stays empty.
func TestSourceTokenSealedAtRest(t *testing.T) {
	forEachDSN(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		const token = "peer-bearer-token-value"
		plain := openWithKeys(t, dsn)
		old, err := plain.CreateSource(ctx, catalog.System("test"), catalog.NewSource{URL: "https://peer.example/", Kind: catalog.SourceRegistry, Token: token})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := plain.CreateSource(ctx, catalog.System("test"), catalog.NewSource{URL: "https://publisher.example/"}); err != nil {
			t.Fatal(err)
		}
		if _, err := plain.CreateSource(ctx, catalog.System("test"), catalog.NewSource{URL: "https://x.example/", Kind: "peer"}); !errors.Is(err, catalog.ErrInvalidSource) {
			t.Errorf("an unknown kind: %v", err)
		}
		raw := func(s *catalog.Store) string {
			t.Helper()
			v, err := s.RawStrings(ctx, "SELECT kind || ':' || token FROM sources ORDER BY url")
			if err != nil {
				t.Fatal(err)
			}
			return strings.Join(v, "\n")
		}
		if r := raw(plain); !strings.Contains(r, token) {
			t.Fatalf("without a key the token is stored as it is: %s", r)
		}
		sealed := openWithKeys(t, dsn, key(1))
		if _, err := sealed.CreateSource(ctx, catalog.System("test"), catalog.NewSource{URL: "https://peer2.example/", Kind: catalog.SourceRegistry, Token: token + "2"}); err != nil {
			t.Fatal(err)
		}
		r := raw(sealed)
		if strings.Contains(r, token) || strings.Count(r, "registry:sealed:v1:") != 2 || !strings.HasSuffix(r, "\nmanifest:") {
			t.Errorf("rows: %s", r)
		}
		if got, err := sealed.SourceToken(ctx, old.ID); err != nil || got != token {
			t.Errorf("SourceToken = %q, %v", got, err)
		}
		all, err := sealed.Sources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range all {
			if s.HasToken != (s.Kind == catalog.SourceRegistry) {
				t.Errorf("source %s: HasToken %v", s.URL, s.HasToken)
			}
		}
		// Moved onto another row, a sealed token does not open.
		if err := sealed.RawExec(ctx, "UPDATE sources SET token = (SELECT token FROM sources WHERE url = 'https://peer2.example/') WHERE id = ?", old.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := sealed.SourceToken(ctx, old.ID); !errors.Is(err, catalog.ErrSealed) {
			t.Errorf("a token moved to another row opened: %v", err)
		}
	})
}

// The registry id is the same for every store of one database, and is
// not the secret it is derived from.
func TestRegistryID(t *testing.T) {
	forEachDSN(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		a, b := openWithKeys(t, dsn), openWithKeys(t, dsn)
		ida, err := a.RegistryID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		idb, err := b.RegistryID(ctx)
		if err != nil || ida != idb || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(ida) {
			t.Errorf("ids %q, %q (%v)", ida, idb, err)
		}
		stored, err := a.RawStrings(ctx, "SELECT value_hex FROM registry_secrets WHERE name = ?", catalog.SecretRegistryID)
		if err != nil || len(stored) != 1 || strings.Contains(stored[0], ida) {
			t.Errorf("stored %v, %v", stored, err)
		}
	})
}
