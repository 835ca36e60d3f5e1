package catalog

import (
	"context"
	"fmt"
	"time"
)

// Scopes of the security report's history: the report is kept for every
// agent (admins) and for what every signed-in viewer sees, so that a
// caller is never shown a count of agents hidden from them.
const (
	HistoryScopeAll    = "all"
	HistoryScopePublic = "public"
)

// HistoryScopeOf is the history a caller who sees sc may read: all of it
// for a scope that sees everything, the public one for any other (an
// editor's or a group member's extra agents are in no stored history).
func HistoryScopeOf(sc Scope) string {
	if sc.All {
		return HistoryScopeAll
	}
	return HistoryScopePublic
}

// ScopeOfHistory is the scope a history row of scope is computed in.
func ScopeOfHistory(scope string) Scope {
	if scope == HistoryScopeAll {
		return ScopeAll
	}
	return Scope{}
}

// SecurityDay is one day of the fleet security report's history: the
// report's headline numbers in one scope as they stood when taken.
type SecurityDay struct {
	// Day is the UTC date, YYYY-MM-DD.
	Day     string
	Scope   string
	TakenAt time.Time
	Agents  int
	// Agents per signature status of the current card.
	SignatureVerified, SignatureInvalid, Unsigned, KeyUnavailable, Unchecked int
	// Anonymous agents ask for no security; KeyChanges are signed by a
	// key other than their previous version's; PublisherVerified have a
	// verified publisher.
	Anonymous, KeyChanges, PublisherVerified int
	// FindingsError, FindingsWarning and FindingsInfo count agents with
	// findings of that severity (an agent with several counted under
	// each); PlainHTTP agents declaring an interface over plain http;
	// KeyChanges30d the key changes whose card came in the last 30 days.
	// Days recorded before migration 00029 hold 0.
	FindingsError, FindingsWarning, FindingsInfo, PlainHTTP, KeyChanges30d int
}

// DayOf is the history day of t (its UTC date).
func DayOf(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// HasSecurityDay reports whether the history holds day in scope.
func (s *Store) HasSecurityDay(ctx context.Context, day, scope string) (bool, error) {
	var n int64
	if err := s.db.WithContext(ctx).Raw("SELECT COUNT(*) FROM security_history WHERE day = ? AND scope = ?", day, scope).
		Row().Scan(&n); err != nil {
		return false, fmt.Errorf("reading security history: %w", err)
	}
	return n > 0, nil
}

// RecordSecurityDay stores d unless its day is already stored in its
// scope, and says whether it stored it. Replicas race to write a day
// safely: the primary key (day, scope) keeps the first row, and the
// others store nothing.
func (s *Store) RecordSecurityDay(ctx context.Context, d SecurityDay) (bool, error) {
	if _, err := time.Parse(time.DateOnly, d.Day); err != nil {
		return false, fmt.Errorf("%w: history day %q is not YYYY-MM-DD", ErrInvalidQuery, d.Day)
	}
	if d.Scope != HistoryScopeAll && d.Scope != HistoryScopePublic {
		return false, fmt.Errorf("%w: history scope %q", ErrInvalidQuery, d.Scope)
	}
	res := s.db.WithContext(ctx).Exec(`INSERT INTO security_history (day, scope, taken_at, agents, signature_verified,
		signature_invalid, unsigned, key_unavailable, unchecked, anonymous, key_changes, publisher_verified,
		findings_error, findings_warning, findings_info, plain_http, key_changes_30d)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (day, scope) DO NOTHING`,
		d.Day, d.Scope, d.TakenAt.UTC(), d.Agents, d.SignatureVerified, d.SignatureInvalid, d.Unsigned, d.KeyUnavailable,
		d.Unchecked, d.Anonymous, d.KeyChanges, d.PublisherVerified, d.FindingsError, d.FindingsWarning, d.FindingsInfo,
		d.PlainHTTP, d.KeyChanges30d)
	if res.Error != nil {
		return false, fmt.Errorf("recording security history of %s: %w", d.Day, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// SecurityHistory lists the days of scope from from (YYYY-MM-DD) on,
// oldest first.
func (s *Store) SecurityHistory(ctx context.Context, scope, from string) ([]SecurityDay, error) {
	rows, err := s.db.WithContext(ctx).Raw(`SELECT day, scope, taken_at, agents, signature_verified, signature_invalid,
		unsigned, key_unavailable, unchecked, anonymous, key_changes, publisher_verified,
		findings_error, findings_warning, findings_info, plain_http, key_changes_30d
		FROM security_history WHERE scope = ? AND day >= ? ORDER BY day`, scope, from).Rows()
	if err != nil {
		return nil, fmt.Errorf("reading security history: %w", err)
	}
	defer rows.Close()
	var out []SecurityDay
	for rows.Next() {
		var d SecurityDay
		if err := rows.Scan(&d.Day, &d.Scope, &d.TakenAt, &d.Agents, &d.SignatureVerified, &d.SignatureInvalid,
			&d.Unsigned, &d.KeyUnavailable, &d.Unchecked, &d.Anonymous, &d.KeyChanges, &d.PublisherVerified,
			&d.FindingsError, &d.FindingsWarning, &d.FindingsInfo, &d.PlainHTTP, &d.KeyChanges30d); err != nil {
			return nil, fmt.Errorf("reading security history: %w", err)
		}
		d.TakenAt = d.TakenAt.UTC()
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading security history: %w", err)
	}
	return out, nil
}
