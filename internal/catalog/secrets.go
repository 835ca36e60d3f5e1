package catalog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// SecretARDPageTokens names the key that authenticates ARD page tokens.
const SecretARDPageTokens = "ard_page_tokens"

// secretBytes is the length of a secret the registry makes for itself.
const secretBytes = 32

// Secret returns the registry's own random key called name, making it on
// first use. Every replica of one database gets the same key, before and
// after restarts: the first to ask stores it, and a replica that races it
// reads the stored one back (ON CONFLICT DO NOTHING, then a read). It is
// stored sealed (seal.go) when secret keys are configured.
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	fresh := make([]byte, secretBytes)
	_, _ = rand.Read(fresh) // crypto/rand.Read never fails (Go 1.24)
	db := s.db.WithContext(ctx)
	if err := db.Exec(`INSERT INTO registry_secrets (name, value_hex, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO NOTHING`, name, s.seal.seal(registrySecretAt(name), hex.EncodeToString(fresh)), time.Now().UTC()).Error; err != nil {
		return nil, fmt.Errorf("making secret %s: %w", name, err)
	}
	var stored []string
	if err := db.Raw("SELECT value_hex FROM registry_secrets WHERE name = ?", name).Scan(&stored).Error; err != nil {
		return nil, fmt.Errorf("reading secret %s: %w", name, err)
	}
	if len(stored) != 1 {
		return nil, fmt.Errorf("reading secret %s: %w", name, ErrNotFound)
	}
	plain, err := s.seal.open(registrySecretAt(name), stored[0])
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(plain)
	if err != nil || len(key) != secretBytes {
		return nil, fmt.Errorf("secret %s is not %d hex-encoded bytes", name, secretBytes)
	}
	return key, nil
}
