package catalog_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// forEachDSN runs fn once per available backend with a fresh database's DSN.
func forEachDSN(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, catalogtest.SQLiteDSN(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, catalogtest.PostgresDSN(t)) })
}

func openWithKeys(t *testing.T, dsn string, keys ...[]byte) *catalog.Store {
	t.Helper()
	ctx := context.Background()
	s, err := catalog.Open(ctx, catalog.Config{DSN: dsn, SecretKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func key(b byte) []byte { return bytes.Repeat([]byte{b}, catalog.SecretKeySize) }

const hookSecret = "whsec_c2VjcmV0LXNpZ25pbmcta2V5LW9mLXRoZS1ob29r"

// claimedSecret is the secret a due delivery of hook id is signed with.
func claimedSecret(t *testing.T, s *catalog.Store, id string) (string, error) {
	t.Helper()
	ctx := context.Background()
	if err := s.RawExec(ctx, "UPDATE webhook_deliveries SET lease_until = NULL"); err != nil {
		t.Fatal(err)
	}
	due, err := s.ClaimWebhookDeliveries(ctx, time.Now().Add(time.Hour), 10, time.Minute)
	if err != nil {
		return "", err
	}
	for _, d := range due {
		if d.WebhookID == id {
			return d.Secret, nil
		}
	}
	t.Fatalf("no delivery of %s claimed", id)
	return "", nil
}

// A catalog written without a key holds its secrets in the clear; opened
// with a key, Migrate encrypts them, the raw rows hold no plaintext, and
// deliveries and the registry's own keys read the same secrets back.
func TestSecretsSealedAtRest(t *testing.T) {
	forEachDSN(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		plain := openWithKeys(t, dsn)
		if err := plain.CreateWebhook(ctx, catalog.System("test"), catalog.Webhook{ID: "wh_a", URL: "https://hooks.example.com/a",
			EventTypes: []string{"agent.registered"}, CreatedAt: time.Now()}, hookSecret); err != nil {
			t.Fatal(err)
		}
		from, err := plain.WebhookCursor(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := plain.EnqueueWebhookDeliveries(ctx, from, from, []catalog.NewWebhookDelivery{{WebhookID: "wh_a", Seq: 1,
			AgentID: "a", EventType: "agent.registered", Payload: "{}"}}, time.Now()); err != nil {
			t.Fatal(err)
		}
		own, err := plain.Secret(ctx, catalog.SecretARDPageTokens)
		if err != nil {
			t.Fatal(err)
		}
		raw := func(s *catalog.Store) string {
			t.Helper()
			a, err := s.RawStrings(ctx, "SELECT secret FROM webhooks")
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.RawStrings(ctx, "SELECT value_hex FROM registry_secrets")
			if err != nil {
				t.Fatal(err)
			}
			return strings.Join(append(a, b...), "\n")
		}
		if r := raw(plain); !strings.Contains(r, hookSecret) {
			t.Fatalf("without a key the secret is stored as it is; rows: %s", r)
		}

		sealed := openWithKeys(t, dsn, key(1))
		r := raw(sealed)
		for _, secret := range []string{hookSecret, strings.TrimPrefix(hookSecret, "whsec_"), hex.EncodeToString(own)} {
			if strings.Contains(r, secret) {
				t.Errorf("a raw row holds the plaintext %q: %s", secret, r)
			}
		}
		if strings.Count(r, "sealed:v1:") != 2 {
			t.Errorf("rows not sealed: %s", r)
		}
		if got, err := claimedSecret(t, sealed, "wh_a"); err != nil || got != hookSecret {
			t.Errorf("claimed delivery signs with %q, %v; want the created secret", got, err)
		}
		if got, err := sealed.Secret(ctx, catalog.SecretARDPageTokens); err != nil || !bytes.Equal(got, own) {
			t.Errorf("Secret = %x, %v; want the stored key", got, err)
		}
		// A new subscription is sealed when it is written.
		if err := sealed.CreateWebhook(ctx, catalog.System("test"), catalog.Webhook{ID: "wh_b", URL: "https://hooks.example.com/b",
			EventTypes: []string{"agent.registered"}, CreatedAt: time.Now()}, hookSecret+"b"); err != nil {
			t.Fatal(err)
		}
		if r := raw(sealed); strings.Contains(r, hookSecret) || strings.Count(r, "sealed:v1:") != 3 {
			t.Errorf("a new subscription's secret is not sealed: %s", r)
		}
		// A sealed value copied onto another row does not open there.
		if err := sealed.RawExec(ctx, "UPDATE webhooks SET secret = (SELECT secret FROM webhooks WHERE id = 'wh_b') WHERE id = 'wh_a'"); err != nil {
			t.Fatal(err)
		}
		if _, err := claimedSecret(t, sealed, "wh_a"); !errors.Is(err, catalog.ErrSealed) {
			t.Errorf("a secret moved to another row opened: %v", err)
		}
	})
}

// A rotation: the new key first and the old one kept re-seals every
// secret with the new key at Migrate; the old key is then not needed, and
// a store without the right key cannot read them and says so without
// showing any secret.
func TestSecretKeyRotation(t *testing.T) {
	forEachDSN(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		old := openWithKeys(t, dsn, key(1))
		want, err := old.Secret(ctx, catalog.SecretARDPageTokens)
		if err != nil {
			t.Fatal(err)
		}
		openWithKeys(t, dsn, key(2), key(1)) // Migrate re-seals
		rotated := openWithKeys(t, dsn, key(2))
		if got, err := rotated.Secret(ctx, catalog.SecretARDPageTokens); err != nil || !bytes.Equal(got, want) {
			t.Errorf("after rotation Secret = %x, %v; want the same key", got, err)
		}
		s, err := catalog.Open(ctx, catalog.Config{DSN: dsn, SecretKeys: [][]byte{key(1)}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.Secret(ctx, catalog.SecretARDPageTokens)
		if !errors.Is(err, catalog.ErrSealed) || strings.Contains(err.Error(), hex.EncodeToString(want)) {
			t.Errorf("Secret with the retired key: %v; want ErrSealed naming no secret", err)
		}
		if err := s.Migrate(ctx); !errors.Is(err, catalog.ErrSealed) {
			t.Errorf("Migrate with the retired key: %v; want ErrSealed", err)
		}
	})
}
