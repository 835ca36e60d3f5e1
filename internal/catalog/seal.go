package catalog

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Secrets the catalog stores (webhook signing secrets, peer registries'
// bearer tokens, the registry's own keys in registry_secrets) are sealed with AES-256-GCM under the keys of
// Config.SecretKeys: the first seals, every one opens, so a key is rotated
// by putting the new one first and keeping the old one until Migrate has
// re-sealed every row (ResealSecrets). A sealed value is
//
//	sealed:v1:<key id>:<base64 of nonce and ciphertext>
//
// the key id being the first 8 hex digits of the key's SHA-256, and the
// additional data naming the row (table, column and key), so a sealed
// value copied onto another row does not open. Without keys values are
// stored as they are (and a warning says so at start-up); a value not
// sealed is read as it is, so a catalog written before keys were given
// opens, and is sealed by the next Migrate.

// SecretKeySize is the length of a key of Config.SecretKeys.
const SecretKeySize = 32

const sealedPrefix = "sealed:v1:"

// ErrSealed is returned for a sealed value none of the configured keys
// opens.
var ErrSealed = errors.New("catalog: stored secret cannot be opened with the configured secret keys")

// sealer holds the keys, the first one current.
type sealer struct {
	keys []sealKey
}

type sealKey struct {
	id   string
	aead cipher.AEAD
}

func newSealer(keys [][]byte) (*sealer, error) {
	s := &sealer{}
	for i, k := range keys {
		if len(k) != SecretKeySize {
			return nil, fmt.Errorf("secret key %d is %d bytes, want %d", i+1, len(k), SecretKeySize)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("secret key %d: %w", i+1, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("secret key %d: %w", i+1, err)
		}
		sum := sha256.Sum256(k)
		s.keys = append(s.keys, sealKey{id: hex.EncodeToString(sum[:4]), aead: aead})
	}
	return s, nil
}

// seal returns plain sealed under the current key for the row named by
// where; plain itself when there is no key.
func (s *sealer) seal(where, plain string) string {
	if len(s.keys) == 0 {
		return plain
	}
	k := s.keys[0]
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24)
	out := k.aead.Seal(nonce, nonce, []byte(plain), []byte(where))
	return sealedPrefix + k.id + ":" + base64.StdEncoding.EncodeToString(out)
}

// open returns the plain value of stored (which is returned as it is
// when it was not sealed) for the row named by where.
func (s *sealer) open(where, stored string) (string, error) {
	rest, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return stored, nil
	}
	id, b64, ok := strings.Cut(rest, ":")
	if !ok {
		return "", fmt.Errorf("%w: %s is malformed", ErrSealed, where)
	}
	for _, k := range s.keys {
		if k.id != id {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(raw) < k.aead.NonceSize() {
			return "", fmt.Errorf("%w: %s is malformed", ErrSealed, where)
		}
		plain, err := k.aead.Open(nil, raw[:k.aead.NonceSize()], raw[k.aead.NonceSize():], []byte(where))
		if err != nil {
			return "", fmt.Errorf("%w: %s does not open with key %s", ErrSealed, where, id)
		}
		return string(plain), nil
	}
	return "", fmt.Errorf("%w: %s is sealed with key %s, which is not configured", ErrSealed, where, id)
}

// current tells whether stored is sealed with the current key (or, with
// no key, is not sealed at all).
func (s *sealer) current(stored string) bool {
	if len(s.keys) == 0 {
		return !strings.HasPrefix(stored, sealedPrefix)
	}
	return strings.HasPrefix(stored, sealedPrefix+s.keys[0].id+":")
}

// webhookSecretAt and registrySecretAt name the rows a sealed value
// belongs to (its additional data).
func webhookSecretAt(id string) string    { return "webhooks.secret:" + id }
func registrySecretAt(name string) string { return "registry_secrets.value_hex:" + name }

// ResealSecrets seals every stored secret that is not sealed with the
// current key: plain ones once keys are configured, ones sealed with an
// older key after a rotation. With no key configured, sealed values are
// left as they are (they open only with their key). Each row is
// re-sealed with a compare-and-set, so replicas resealing at once do not
// lose a value. Migrate calls it.
func (s *Store) ResealSecrets(ctx context.Context) (int, error) {
	if len(s.seal.keys) == 0 {
		return 0, nil
	}
	n := 0
	for _, t := range []struct{ table, key, col, at string }{
		{"webhooks", "id", "secret", "webhooks.secret:"},
		{"registry_secrets", "name", "value_hex", "registry_secrets.value_hex:"},
		{"sources", "id", "token", "sources.token:"},
	} {
		var rows []struct{ K, V string }
		if err := s.db.WithContext(ctx).Raw("SELECT " + t.key + " AS k, " + t.col + " AS v FROM " + t.table).Scan(&rows).Error; err != nil {
			return n, fmt.Errorf("reading %s to re-seal: %w", t.table, err)
		}
		for _, r := range rows {
			if r.V == "" || s.seal.current(r.V) {
				// "" is no secret: a source without a token.
				continue
			}
			plain, err := s.seal.open(t.at+r.K, r.V)
			if err != nil {
				return n, err
			}
			res := s.db.WithContext(ctx).Exec("UPDATE "+t.table+" SET "+t.col+" = ? WHERE "+t.key+" = ? AND "+t.col+" = ?",
				s.seal.seal(t.at+r.K, plain), r.K, r.V)
			if res.Error != nil {
				return n, fmt.Errorf("re-sealing %s: %w", t.table, res.Error)
			}
			n += int(res.RowsAffected)
		}
	}
	return n, nil
}
