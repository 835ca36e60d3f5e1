package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"
)

// Audited actions. They are stable names: the API returns them and
// operators search logs and exports for them.
const (
	ActionRegister  = "agent.register"
	ActionRefresh   = "agent.refresh"
	ActionPause     = "agent.pause"
	ActionResume    = "agent.resume"
	ActionRemove    = "agent.remove"
	ActionAnnotate  = "agent.annotate"
	ActionRestore   = "agent.restore"
	ActionRun       = "agent.run"
	ActionKeyAdd    = "key.add"
	ActionKeyRevoke = "key.revoke"
	// ActionSignIn and ActionSignOut begin and end a console session;
	// ActionSignInRefused is a user the provider vouched for but no role
	// maps to.
	ActionSignIn        = "user.sign_in"
	ActionSignOut       = "user.sign_out"
	ActionSignInRefused = "user.sign_in_refused"
	TargetAgent         = "agent"
	TargetTrustedKey    = "key"
	// TargetUser is a user, by subject.
	TargetUser = "user"
)

// AuditEntry is one audited write.
type AuditEntry struct {
	ID        int64
	At        time.Time
	ActorKind ActorKind
	// Subject is the user's stable subject, or the registry component.
	Subject     string
	DisplayName string
	Email       string
	Role        string
	Action      string
	TargetKind  string
	TargetID    string
	// Detail is what the action changed, a JSON object.
	Detail json.RawMessage
	// RequestID is the registry's own id of the request behind the write;
	// ClientRequestID the X-Request-Id the client sent, if any (length
	// capped), which the registry never uses as its own.
	RequestID       string
	ClientRequestID string
	ClientAddr      string
}

// AuditPage is a page of the audit log, newest first.
type AuditPage struct {
	Entries []AuditEntry
	// Next is the cursor of the following (older) page, "" at the end.
	Next string
}

// audit is one row to record: action on a target with its detail.
type audit struct {
	action, targetKind, targetID string
	detail                       any
}

// writeAudit records what actor did inside tx, the write's own
// transaction: a write that rolls back leaves no row, and a row whose
// insert fails rolls the write back. Actors that are not audited (the
// crawler's and verifier's background writes) record nothing.
func writeAudit(tx *gorm.DB, actor Actor, rows ...audit) error {
	if !actor.audited() {
		return nil
	}
	return insertAudit(tx, actor, rows...)
}

// insertAudit records rows whoever the actor is: for the catalog's own
// transitions that the audit log must hold even when no person asked for
// them (a send-back to review on a card change).
func insertAudit(tx *gorm.DB, actor Actor, rows ...audit) error {
	if len(rows) == 0 {
		return nil
	}
	var req Request
	if actor.Request != nil {
		req = *actor.Request
	}
	now := time.Now().UTC()
	for _, r := range rows {
		detail := []byte("{}")
		if r.detail != nil {
			var err error
			if detail, err = json.Marshal(r.detail); err != nil {
				return fmt.Errorf("encoding audit detail of %s: %w", r.action, err)
			}
		}
		err := tx.Exec(`INSERT INTO audit_log (at, actor_kind, subject, name, email, role, action, target_kind, target_id,
			detail_json, request_id, client_request_id, client_addr) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			now, string(actor.Kind), actor.Name, req.DisplayName, req.Email, req.Role, r.action, r.targetKind, r.targetID,
			string(detail), req.ID, req.ClientID, req.ClientAddr).Error
		if err != nil {
			return fmt.Errorf("writing audit log (%s %s): %w", r.action, r.targetID, err)
		}
	}
	return nil
}

// maxAuditPage bounds one page of the audit log.
const maxAuditPage = 500

// AuditLog reads the audit log newest first: limit entries (at most 500)
// older than cursor, "" for the newest. A cursor this method did not
// return is ErrInvalidQuery.
func (s *Store) AuditLog(ctx context.Context, cursor string, limit int) (AuditPage, error) {
	if limit <= 0 || limit > maxAuditPage {
		limit = maxAuditPage
	}
	q := s.db.WithContext(ctx).Table("audit_log").Select(auditColumns)
	if cursor != "" {
		before, err := strconv.ParseInt(cursor, 10, 64)
		if err != nil || before <= 0 {
			return AuditPage{}, fmt.Errorf("%w: audit log cursor %q", ErrInvalidQuery, cursor)
		}
		q = q.Where("id < ?", before)
	}
	entries, err := readAudit(q.Order("id DESC").Limit(limit + 1))
	if err != nil {
		return AuditPage{}, err
	}
	page := AuditPage{Entries: entries}
	if len(page.Entries) > limit {
		page.Entries = page.Entries[:limit]
		page.Next = strconv.FormatInt(page.Entries[limit-1].ID, 10)
	}
	return page, nil
}

// AgentAudit returns the newest limit (at most 500) audit entries about
// one agent, newest first: what the agent page shows admins, removed
// agents included.
func (s *Store) AgentAudit(ctx context.Context, agentID string, limit int) ([]AuditEntry, error) {
	if limit <= 0 || limit > maxAuditPage {
		limit = maxAuditPage
	}
	q := s.db.WithContext(ctx).Table("audit_log").Select(auditColumns).
		Where("target_kind = ? AND target_id = ?", TargetAgent, agentID)
	return readAudit(q.Order("id DESC").Limit(limit))
}

// auditColumns are the columns readAudit scans, in its order.
const auditColumns = "id, at, actor_kind, subject, name, email, role, action, target_kind, target_id, detail_json, " +
	"request_id, client_request_id, client_addr"

// readAudit runs q, a SELECT of auditColumns.
func readAudit(q *gorm.DB) ([]AuditEntry, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, fmt.Errorf("reading audit log: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var (
			e      AuditEntry
			kind   string
			detail string
		)
		if err := rows.Scan(&e.ID, &e.At, &kind, &e.Subject, &e.DisplayName, &e.Email, &e.Role, &e.Action,
			&e.TargetKind, &e.TargetID, &detail, &e.RequestID, &e.ClientRequestID, &e.ClientAddr); err != nil {
			return nil, fmt.Errorf("reading audit log: %w", err)
		}
		e.ActorKind, e.Detail, e.At = ActorKind(kind), json.RawMessage(detail), e.At.UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading audit log: %w", err)
	}
	return out, nil
}
