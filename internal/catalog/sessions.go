package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Session is a signed-in browser's session. The catalog stores what it
// is given: making the token, hashing it and judging expiry are the auth
// package's job, so the catalog never sees a token that signs anyone in.
type Session struct {
	// IDHash is the hash of the session token (the cookie's value); the
	// token itself is never stored.
	IDHash string
	// The principal at sign-in.
	Subject string
	Email   string
	Name    string
	Role    string
	Groups  []string

	CreatedAt  time.Time
	LastSeenAt time.Time
	// IdleExpiresAt is when the session ends unless it is used again
	// (TouchSession moves it); never after ExpiresAt.
	IdleExpiresAt time.Time
	// ExpiresAt is when the session ends however much it is used.
	ExpiresAt time.Time
}

const sessionColumns = "id_hash, subject, email, name, role, groups_json, created_at, last_seen_at, idle_expires_at, expires_at"

// sessionAudit is the detail of a sign-in's audit row: never the session's
// hash, which is as good as the token to whoever can read the database.
type sessionAudit struct {
	Role   string `json:"role,omitempty"`
	Groups int    `json:"groups,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// CreateSession stores a new session, and audits the sign-in as actor's
// in the same transaction. A session with the same IDHash is ErrConflict
// (a token drawn twice, which 256 random bits rule out).
func (s *Store) CreateSession(ctx context.Context, actor Actor, ss Session) error {
	if ss.IDHash == "" || ss.Subject == "" || ss.Role == "" {
		return fmt.Errorf("%w: session without id hash, subject or role", ErrInvalidQuery)
	}
	groups := ss.Groups
	if groups == nil {
		groups = []string{}
	}
	gj, err := json.Marshal(groups)
	if err != nil {
		return fmt.Errorf("creating session: %w", err)
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("INSERT INTO sessions ("+sessionColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			ss.IDHash, ss.Subject, ss.Email, ss.Name, ss.Role, string(gj),
			ss.CreatedAt.UTC(), ss.LastSeenAt.UTC(), ss.IdleExpiresAt.UTC(), ss.ExpiresAt.UTC()).Error; err != nil {
			return err
		}
		return writeAudit(tx, actor, audit{action: ActionSignIn, targetKind: TargetUser, targetID: ss.Subject,
			detail: sessionAudit{Role: ss.Role, Groups: len(ss.Groups)}})
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		err = ErrConflict
	}
	if err != nil {
		return fmt.Errorf("creating session: %w", err)
	}
	return nil
}

// Session returns the session whose token hashes to idHash, expired or
// not, or ErrNotFound.
func (s *Store) Session(ctx context.Context, idHash string) (Session, error) {
	rows, err := s.db.WithContext(ctx).Raw("SELECT "+sessionColumns+" FROM sessions WHERE id_hash = ?", idHash).Rows()
	if err != nil {
		return Session{}, fmt.Errorf("reading session: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return Session{}, fmt.Errorf("reading session: %w", err)
		}
		return Session{}, fmt.Errorf("session: %w", ErrNotFound)
	}
	var (
		ss Session
		gj string
	)
	if err := rows.Scan(&ss.IDHash, &ss.Subject, &ss.Email, &ss.Name, &ss.Role, &gj,
		&ss.CreatedAt, &ss.LastSeenAt, &ss.IdleExpiresAt, &ss.ExpiresAt); err != nil {
		return Session{}, fmt.Errorf("reading session: %w", err)
	}
	if err := json.Unmarshal([]byte(gj), &ss.Groups); err != nil {
		return Session{}, fmt.Errorf("reading session groups: %w", err)
	}
	ss.CreatedAt, ss.LastSeenAt = ss.CreatedAt.UTC(), ss.LastSeenAt.UTC()
	ss.IdleExpiresAt, ss.ExpiresAt = ss.IdleExpiresAt.UTC(), ss.ExpiresAt.UTC()
	return ss, nil
}

// TouchSession records that the session was used at seen and moves its
// idle expiry to idleExpires, but never past its absolute expiry. A
// session that is gone (signed out, pruned) is ErrNotFound.
func (s *Store) TouchSession(ctx context.Context, idHash string, seen, idleExpires time.Time) error {
	res := s.db.WithContext(ctx).Exec(`UPDATE sessions SET last_seen_at = ?,
		idle_expires_at = CASE WHEN ? < expires_at THEN ? ELSE expires_at END
		WHERE id_hash = ?`, seen.UTC(), idleExpires.UTC(), idleExpires.UTC(), idHash)
	if res.Error != nil {
		return fmt.Errorf("touching session: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("session: %w", ErrNotFound)
	}
	return nil
}

// DeleteSession removes a session: a sign-out when actor is audited (the
// row names the session's user), an expired or replaced session when
// it is the registry's own. Removing one that is gone already is not an
// error, and audits nothing: the outcome is the same.
func (s *Store) DeleteSession(ctx context.Context, actor Actor, idHash string) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var subjects []string
		if err := tx.Raw("SELECT subject FROM sessions WHERE id_hash = ?", idHash).Scan(&subjects).Error; err != nil {
			return err
		}
		if len(subjects) == 0 {
			return nil
		}
		if err := tx.Exec("DELETE FROM sessions WHERE id_hash = ?", idHash).Error; err != nil {
			return err
		}
		return writeAudit(tx, actor, audit{action: ActionSignOut, targetKind: TargetUser, targetID: subjects[0]})
	})
	if err != nil {
		return fmt.Errorf("deleting session: %w", err)
	}
	return nil
}

// RecordRefusedSignIn audits a sign-in the registry refused after the
// provider vouched for the user (no role maps to them): security teams
// look for these. Nothing else is written.
func (s *Store) RecordRefusedSignIn(ctx context.Context, actor Actor, subject, reason string) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return insertAudit(tx, actor, audit{action: ActionSignInRefused, targetKind: TargetUser, targetID: subject,
			detail: sessionAudit{Reason: reason}})
	})
	if err != nil {
		return fmt.Errorf("recording a refused sign-in: %w", err)
	}
	return nil
}

// PruneSessions removes the sessions dead at now (idle or absolute expiry
// passed) and returns how many.
func (s *Store) PruneSessions(ctx context.Context, now time.Time) (int64, error) {
	now = now.UTC()
	res := s.db.WithContext(ctx).Exec("DELETE FROM sessions WHERE idle_expires_at <= ? OR expires_at <= ?", now, now)
	if res.Error != nil {
		return 0, fmt.Errorf("pruning sessions: %w", res.Error)
	}
	return res.RowsAffected, nil
}
