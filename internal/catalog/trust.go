package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// TrustedKey is a public key an administrator pinned for cards of some
// origins. The catalog stores it as given; parsing and checking the JWK
// (public, asymmetric, thumbprint) is the verify package's job.
type TrustedKey struct {
	ID  string
	KID string
	// JWK is the public key (RFC 7517) as JSON.
	JWK json.RawMessage
	// Thumbprint is the RFC 7638 SHA-256 thumbprint, base64url.
	Thumbprint string
	// Origins are the card origins the key may sign for; "*" is any.
	Origins   []string
	NotAfter  *time.Time
	RevokedAt *time.Time
	CreatedAt time.Time
}

// Trusted key states, as of a given time.
const (
	KeyActive  = "active"
	KeyExpired = "expired"
	KeyRevoked = "revoked"
)

// State is KeyRevoked once the key is revoked, else KeyExpired from its
// NotAfter on, else KeyActive.
func (k TrustedKey) State(now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return KeyRevoked
	case k.NotAfter != nil && !now.Before(*k.NotAfter):
		return KeyExpired
	}
	return KeyActive
}

const trustedKeyColumns = "id, kid, jwk, thumbprint, origins, not_after, revoked_at, created_at"

// AddTrustedKey stores a new trusted key and returns it with its id and
// creation time. An active (unrevoked) key with the same thumbprint is
// ErrConflict. Reports of agents whose signatures name the kid become due.
func (s *Store) AddTrustedKey(ctx context.Context, actor Actor, k TrustedKey) (TrustedKey, error) {
	if err := actor.validate(); err != nil {
		return TrustedKey{}, err
	}
	switch {
	case strings.TrimSpace(k.KID) == "":
		return TrustedKey{}, fmt.Errorf("%w: trusted key without kid", ErrInvalidQuery)
	case k.Thumbprint == "" || len(k.JWK) == 0:
		return TrustedKey{}, fmt.Errorf("%w: trusted key without JWK or thumbprint", ErrInvalidQuery)
	case len(k.Origins) == 0:
		return TrustedKey{}, fmt.Errorf("%w: trusted key without origins", ErrInvalidQuery)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return TrustedKey{}, err
	}
	k.ID, k.CreatedAt, k.RevokedAt = id.String(), time.Now().UTC(), nil
	origins, err := json.Marshal(k.Origins)
	if err != nil {
		return TrustedKey{}, err
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Raw("SELECT COUNT(*) FROM trusted_keys WHERE thumbprint = ? AND revoked_at IS NULL", k.Thumbprint).
			Scan(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: an active trusted key has thumbprint %s", ErrConflict, k.Thumbprint)
		}
		if err := tx.Exec("INSERT INTO trusted_keys ("+trustedKeyColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			k.ID, k.KID, string(k.JWK), k.Thumbprint, string(origins), utcPtr(k.NotAfter), nil, k.CreatedAt).Error; err != nil {
			return err
		}
		if err := writeAudit(tx, actor, audit{action: ActionKeyAdd, targetKind: TargetTrustedKey, targetID: k.ID,
			detail: map[string]any{"kid": k.KID, "thumbprint": k.Thumbprint, "origins": k.Origins}}); err != nil {
			return err
		}
		return trustChanged(tx, k.KID)
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		// A concurrent add of the same key won the unique index.
		err = fmt.Errorf("%w: an active trusted key has thumbprint %s", ErrConflict, k.Thumbprint)
	}
	if err != nil {
		return TrustedKey{}, fmt.Errorf("adding trusted key %s: %w", k.KID, err)
	}
	k.NotAfter = utcPtr(k.NotAfter)
	return k, nil
}

// RevokeTrustedKey revokes a key from at on. Revoking a revoked key
// changes nothing and returns it as it is. Reports of agents whose
// signatures name its kid become due.
func (s *Store) RevokeTrustedKey(ctx context.Context, actor Actor, id string, at time.Time) (TrustedKey, error) {
	if err := actor.validate(); err != nil {
		return TrustedKey{}, err
	}
	var out TrustedKey
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		keys, err := queryTrustedKeys(tx, "id = ?", id)
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			return fmt.Errorf("trusted key %s: %w", id, ErrNotFound)
		}
		out = keys[0]
		if out.RevokedAt != nil {
			return nil
		}
		at = at.UTC()
		if err := tx.Exec("UPDATE trusted_keys SET revoked_at = ? WHERE id = ?", at, id).Error; err != nil {
			return err
		}
		out.RevokedAt = &at
		if err := writeAudit(tx, actor, audit{action: ActionKeyRevoke, targetKind: TargetTrustedKey, targetID: id,
			detail: map[string]any{"kid": out.KID, "thumbprint": out.Thumbprint}}); err != nil {
			return err
		}
		return trustChanged(tx, out.KID)
	})
	if err != nil {
		return TrustedKey{}, fmt.Errorf("revoking trusted key %s: %w", id, err)
	}
	return out, nil
}

// TrustedKeys lists every trusted key, revoked ones included, oldest first.
func (s *Store) TrustedKeys(ctx context.Context) ([]TrustedKey, error) {
	keys, err := queryTrustedKeys(s.db.WithContext(ctx), "", nil)
	if err != nil {
		return nil, fmt.Errorf("listing trusted keys: %w", err)
	}
	return keys, nil
}

// TrustedKeysByKID lists the trusted keys pinned under kid, revoked and
// expired ones included: the verifier reports those as such.
func (s *Store) TrustedKeysByKID(ctx context.Context, kid string) ([]TrustedKey, error) {
	keys, err := queryTrustedKeys(s.db.WithContext(ctx), "kid = ?", kid)
	if err != nil {
		return nil, fmt.Errorf("trusted keys of kid %q: %w", kid, err)
	}
	return keys, nil
}

// TrustGeneration is a counter every trusted-key change increments.
// Verification runners read it before verifying and hand it back with
// their reports (VerificationInput.TrustGeneration).
func (s *Store) TrustGeneration(ctx context.Context) (int64, error) {
	var g int64
	if err := s.db.WithContext(ctx).Raw("SELECT generation FROM trust_store WHERE id = 1").Row().Scan(&g); err != nil {
		return 0, fmt.Errorf("reading trust store generation: %w", err)
	}
	return g, nil
}

// trustChanged bumps the trust generation and marks stale the reports of
// the agents whose signatures name kid.
func trustChanged(tx *gorm.DB, kid string) error {
	if err := tx.Exec("UPDATE trust_store SET generation = generation + 1 WHERE id = 1").Error; err != nil {
		return fmt.Errorf("bumping trust generation: %w", err)
	}
	if err := tx.Exec(`UPDATE verifications SET stale = ? WHERE agent_pk IN (
		SELECT agent_pk FROM verification_kids WHERE kid = ?)`, true, kid).Error; err != nil {
		return fmt.Errorf("marking reports of kid %q stale: %w", kid, err)
	}
	return nil
}

func queryTrustedKeys(db *gorm.DB, cond string, arg any) ([]TrustedKey, error) {
	q := "SELECT " + trustedKeyColumns + " FROM trusted_keys"
	var args []any
	if cond != "" {
		q += " WHERE " + cond
		args = append(args, arg)
	}
	rows, err := db.Raw(q+" ORDER BY created_at, id", args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []TrustedKey{}
	for rows.Next() {
		var (
			k                 TrustedKey
			jwk, origins      string
			notAfter, revoked sql.NullTime
		)
		if err := rows.Scan(&k.ID, &k.KID, &jwk, &k.Thumbprint, &origins, &notAfter, &revoked, &k.CreatedAt); err != nil {
			return nil, err
		}
		k.JWK = json.RawMessage(jwk)
		if err := json.Unmarshal([]byte(origins), &k.Origins); err != nil {
			return nil, fmt.Errorf("origins of trusted key %s: %w", k.ID, err)
		}
		k.NotAfter, k.RevokedAt = nullTimePtr(notAfter), nullTimePtr(revoked)
		k.CreatedAt = k.CreatedAt.UTC()
		out = append(out, k)
	}
	return out, rows.Err()
}

func nullTimePtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
