package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// VerifyTarget is a card version due for verification.
type VerifyTarget struct {
	AgentID string
	CardURL string
	Version int
	// Raw is the card exactly as received: signatures are checked over it.
	Raw []byte
}

// VerificationInput is a verifier's report on one card version.
type VerificationInput struct {
	AgentID string
	Version int
	// Status is one of the Signature* values other than SignatureUnchecked.
	Status string
	// Report is the full report as JSON (verify.Report).
	Report     json.RawMessage
	VerifiedAt time.Time
	// KeysExpireAt is when the earliest key the report relied on expires
	// (a JWKS cache entry, a pinned key's not-after); zero when none.
	KeysExpireAt time.Time
	// RecheckAt is when the report is due again.
	RecheckAt time.Time
	// TrustGeneration is Store.TrustGeneration as read before verifying.
	TrustGeneration int64
	// KIDs are the kids the card's signatures name.
	KIDs []string
	// AuditCodes are the security-audit and content-scan finding codes
	// (the audit facet).
	AuditCodes []string
	// Severities are the severities those findings have (card.Severity
	// values; the severity facet). Unknown values are dropped.
	Severities []string
	// Trust is the signature_trust facet value; empty when no signature
	// verified.
	Trust string
	// PublisherVerified is the publisher_verified facet: the publisher
	// proved it holds the key that signs the card.
	PublisherVerified bool
	// NameKeys are the confusable keys of the card's name and provider
	// (AgentsByNameKey), stored when the version is the current one.
	NameKeys []NameKey
}

// Verification is a stored report.
type Verification struct {
	Version      int
	Status       string
	Report       json.RawMessage
	VerifiedAt   time.Time
	KeysExpireAt time.Time // zero when none
	RecheckAt    time.Time
	// Stale is true when a trusted key the report may depend on changed
	// since; a new report is on its way.
	Stale bool
}

// DueVerifications lists up to limit agents whose current card version has
// no report, or a report that is stale or past its recheck time as of now;
// never-verified versions first. Agents whose card is gone, and agents an
// admin removed, are skipped.
//
// Each kind has its own indexed query: one query with an OR and a sort
// over every agent took 260 ms per call at 100,000 agents. A version
// without a report is one whose agent is still "unchecked" (a new version
// resets the status; a report sets it).
func (s *Store) DueVerifications(ctx context.Context, now time.Time, limit int) ([]VerifyTarget, error) {
	if limit <= 0 {
		return nil, nil
	}
	// Literal, so the planners use the partial index on stale reports.
	stale := "r.stale = 1"
	if s.dialect == dialectPostgres {
		stale = "r.stale"
	}
	const sel = `SELECT a.id, a.card_url, a.current_version, v.raw FROM agents a
		JOIN card_versions v ON v.agent_pk = a.pk AND v.number = a.current_version `
	queries := []struct {
		q    string
		args []any
	}{
		{sel + `WHERE a.signature_status = ? AND a.health <> ? AND a.removed_at IS NULL ORDER BY a.signature_status, a.pk LIMIT ?`,
			[]any{SignatureUnchecked, HealthRemoved}},
		{sel + `JOIN verifications r ON r.agent_pk = a.pk AND r.version = a.current_version
			WHERE ` + stale + ` AND a.health <> ? AND a.removed_at IS NULL LIMIT ?`, []any{HealthRemoved}},
		{sel + `JOIN verifications r ON r.agent_pk = a.pk AND r.version = a.current_version
			WHERE r.recheck_at <= ? AND a.health <> ? AND a.removed_at IS NULL ORDER BY r.recheck_at LIMIT ?`, []any{now.UTC(), HealthRemoved}},
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx = s.stmtCtx(ctx)
	var out []VerifyTarget
	seen := make(map[string]bool)
	for _, q := range queries {
		if len(out) >= limit {
			break
		}
		rows, err := s.db.WithContext(ctx).Raw(q.q, append(q.args, limit-len(out))...).Rows()
		if err != nil {
			return nil, fmt.Errorf("listing due verifications: %w", err)
		}
		for rows.Next() {
			var t VerifyTarget
			if err := rows.Scan(&t.AgentID, &t.CardURL, &t.Version, &t.Raw); err != nil {
				rows.Close()
				return nil, fmt.Errorf("listing due verifications: %w", err)
			}
			if !seen[t.AgentID] {
				seen[t.AgentID] = true
				out = append(out, t)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("listing due verifications: %w", err)
		}
	}
	return out, nil
}

// RecordVerifications stores reports in one transaction. A report on the
// current version also sets the agent's signature status and audit facet
// (and its search index entry); one on an older version is kept for that
// version only. Reports on unknown agents are skipped.
func (s *Store) RecordVerifications(ctx context.Context, actor Actor, ins []VerificationInput) error {
	if err := actor.validate(); err != nil {
		return err
	}
	for _, in := range ins {
		switch in.Status {
		case SignatureVerified, SignatureInvalid, SignatureUnsigned, SignatureKeyUnavailable:
		default:
			return fmt.Errorf("%w: verification status %q", ErrInvalidQuery, in.Status)
		}
		if !json.Valid(in.Report) {
			return fmt.Errorf("%w: report of agent %s is not JSON", ErrInvalidQuery, in.AgentID)
		}
	}
	var changed []fieldUpdate
	store := func(tx *txn) error {
		var err error
		changed, err = recordReports(tx, actor, ins)
		return err
	}
	if err := s.transact(ctx, store); err != nil {
		return fmt.Errorf("recording verifications: %w", err)
	}
	// The verdict is three status facets: changed in place in the index.
	if err := s.publishFields(ctx, changed); err != nil {
		s.log.Warn("refreshing search index after verification", "err", err)
	}
	return nil
}

// recordReports stores reports inside tx and returns the index changes of
// the agents whose signature status, trust or audit codes changed. The actor is the audit
// log's (a later change records it here).
func recordReports(tx *txn, actor Actor, ins []VerificationInput) ([]fieldUpdate, error) {
	var changed []fieldUpdate
	// On PostgreSQL the share lock orders this transaction against
	// key changes (which update the row); see migration 00003.
	genQ := "SELECT generation FROM trust_store WHERE id = 1"
	if tx.d == dialectPostgres {
		genQ += " FOR SHARE"
	}
	var gen int64
	if err := tx.Raw(genQ).Row().Scan(&gen); err != nil {
		return nil, fmt.Errorf("reading trust generation: %w", err)
	}
	// The agent row lock serializes reports on one agent from several
	// replicas, and with card upserts, so two writers never both decide
	// on the verdict columns from the same stored values.
	agentQ := "SELECT pk, seq, current_version, card_url, signature_status, audit_codes, finding_severities, signature_trust, publisher_verified FROM agents WHERE id = ?"
	if tx.d == dialectPostgres {
		agentQ += " FOR UPDATE"
	}
	now := time.Now().UTC()
	for _, in := range ins {
		var (
			pk, seq              int64
			current              int
			status, audit, trust string
			severities           string
			pubVerified, cardURL string
		)
		err := tx.Raw(agentQ, in.AgentID).Row().Scan(&pk, &seq, &current, &cardURL, &status, &audit, &severities, &trust, &pubVerified)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("looking up agent %s: %w", in.AgentID, err)
		}
		var keysExpire any
		if !in.KeysExpireAt.IsZero() {
			keysExpire = in.KeysExpireAt.UTC()
		}
		if err := tx.Exec("DELETE FROM verifications WHERE agent_pk = ? AND version = ?", pk, in.Version).Error; err != nil {
			return nil, fmt.Errorf("replacing report of agent %s: %w", in.AgentID, err)
		}
		if err := tx.Exec(`INSERT INTO verifications (agent_pk, version, status, report, verified_at, keys_expire_at,
			recheck_at, trust_generation, stale) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			pk, in.Version, in.Status, cleanText(string(in.Report)), in.VerifiedAt.UTC(), keysExpire,
			in.RecheckAt.UTC(), in.TrustGeneration, in.TrustGeneration != gen).Error; err != nil {
			return nil, fmt.Errorf("storing report of agent %s: %w", in.AgentID, err)
		}
		if in.Version != current {
			continue
		}
		if err := tx.Exec("DELETE FROM verification_kids WHERE agent_pk = ?", pk).Error; err != nil {
			return nil, fmt.Errorf("storing kids of agent %s: %w", in.AgentID, err)
		}
		var kidRows []verificationKidRow
		for _, kid := range dedupe(in.KIDs, func(s string) string { return s }) {
			kidRows = append(kidRows, verificationKidRow{KID: kid, AgentPK: pk})
		}
		if err := insertRows(tx, verificationKidsTable, kidRows); err != nil {
			return nil, fmt.Errorf("storing kids of agent %s: %w", in.AgentID, err)
		}
		if err := replaceNameKeys(tx, in.AgentID, pk, in.NameKeys); err != nil {
			return nil, err
		}
		up, err := setVerdict(tx, pk, seq, storedVerdict{status, audit, severities, trust, pubVerified}, in, now)
		if err != nil {
			return nil, err
		}
		if up != nil {
			changed = append(changed, *up)
		}
		rec := agentRecord{PK: pk, ID: in.AgentID, CardURL: cardURL, CurrentVersion: current}
		if status != in.Status {
			if err := appendChanges(tx, []changeRow{transition(EventSignature, rec, status, in.Status, now)}); err != nil {
				return nil, fmt.Errorf("recording signature event of agent %s: %w", in.AgentID, err)
			}
		}
		if err := emitContentFindings(tx, rec, audit, in.AuditCodes, now); err != nil {
			return nil, err
		}
		if err := emitKeyChange(tx, rec, audit, in, now); err != nil {
			return nil, err
		}
	}
	// A new verdict is judged again by the admission policy, in this
	// transaction: the signature fields are what most rules read.
	pks := make([]int64, len(changed))
	for i, u := range changed {
		pks[i] = u.pk
	}
	vals, err := rejudge(tx, actor, pks, now)
	if err != nil {
		return nil, err
	}
	for _, u := range changed {
		maps.Copy(u.values, vals[u.pk])
	}
	return changed, nil
}

// storedVerdict is what the agents row holds of the current verdict.
type storedVerdict struct {
	status, audit, severities, trust, publisherVerified string
}

// setVerdict writes the signature status, audit codes and their
// severities, signature trust
// and publisher verification of one agent when they differ from the
// stored ones, bumping its seq and updated_at so that the index (and other
// replicas' Sync) pick it up. It returns the index change, nil when
// nothing changed.
func setVerdict(tx *txn, pk, prev int64, was storedVerdict, in VerificationInput, now time.Time) (*fieldUpdate, error) {
	codes := dedupe(in.AuditCodes, func(s string) string { return cleanText(s) })
	slices.Sort(codes)
	stored, err := decodeAuditCodes(was.audit)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", in.AgentID, err)
	}
	sevs := findingSeverities(in.Severities)
	storedSevs, err := decodeStrings(was.severities)
	if err != nil {
		return nil, fmt.Errorf("agent %s: decoding finding severities: %w", in.AgentID, err)
	}
	trust := cleanText(in.Trust)
	pubVerified := publisherVerifiedFalse
	if in.PublisherVerified {
		pubVerified = publisherVerifiedTrue
	}
	if was.status == in.Status && slices.Equal(stored, codes) && slices.Equal(storedSevs, sevs) && was.trust == trust && publisherVerifiedValue(was.publisherVerified) == pubVerified {
		return nil, nil
	}
	seqs, err := allocate(tx, "seq", 1)
	if err != nil {
		return nil, err
	}
	if err := tx.Exec("UPDATE agents SET signature_status = ?, audit_codes = ?, finding_severities = ?, signature_trust = ?, publisher_verified = ?, seq = ?, updated_at = ? WHERE pk = ?",
		in.Status, jsonArray(codes), jsonArray(sevs), trust, pubVerified, seqs[0], now, pk).Error; err != nil {
		return nil, fmt.Errorf("updating verdict of agent %s: %w", in.AgentID, err)
	}
	values := map[string][]string{FieldSignature: {in.Status}, FieldSignatureTrust: {trust},
		FieldPublisherVerified: {pubVerified}, FieldAudit: codes, FieldSeverity: sevs, FilterKeyChangedDay: nil}
	if slices.Contains(codes, auditSigningKeyChanged) {
		var received time.Time
		if err := tx.Raw("SELECT received_at FROM card_versions WHERE agent_pk = ? AND number = ?", pk, in.Version).Row().Scan(&received); err != nil {
			return nil, fmt.Errorf("reading when agent %s's card came: %w", in.AgentID, err)
		}
		values[FilterKeyChangedDay] = []string{keyChangedDay(codes, received)}
	}
	return &fieldUpdate{pk: pk, prev: prev, seq: seqs[0], values: values}, nil
}

// Verification returns the report on the agent's current card version;
// nil when it has none yet. An unknown agent is ErrNotFound.
func (s *Store) Verification(ctx context.Context, agentID string) (*Verification, error) {
	return verificationOf(s.db.WithContext(ctx), agentID)
}

func verificationOf(db *gorm.DB, agentID string) (*Verification, error) {
	var (
		current                         int
		version                         sql.NullInt64
		status, report                  sql.NullString
		verifiedAt, keysExpire, recheck sql.NullTime
		stale                           sql.NullBool
	)
	err := db.Raw(`SELECT a.current_version, r.version, r.status, r.report, r.verified_at,
		r.keys_expire_at, r.recheck_at, r.stale
		FROM agents a LEFT JOIN verifications r ON r.agent_pk = a.pk AND r.version = a.current_version
		WHERE a.id = ?`, agentID).Row().Scan(&current, &version, &status, &report, &verifiedAt, &keysExpire, &recheck, &stale)
	if err != nil {
		return nil, fmt.Errorf("verification of agent %s: %w", agentID, translateRow(err))
	}
	if !version.Valid {
		return nil, nil
	}
	v := &Verification{
		Version:    int(version.Int64),
		Status:     status.String,
		Report:     json.RawMessage(report.String),
		VerifiedAt: verifiedAt.Time.UTC(),
		RecheckAt:  recheck.Time.UTC(),
		Stale:      stale.Bool,
	}
	if keysExpire.Valid {
		v.KeysExpireAt = keysExpire.Time.UTC()
	}
	return v, nil
}

// VersionReport returns the stored report on one version of an agent's
// card (verify.Report as JSON); nil when that version has none. Reports
// on older versions are kept, so a new version's report can be compared
// with its predecessor's.
func (s *Store) VersionReport(ctx context.Context, agentID string, version int) (json.RawMessage, error) {
	var report sql.NullString
	err := s.db.WithContext(ctx).Raw(`SELECT r.report FROM verifications r JOIN agents a ON a.pk = r.agent_pk
		WHERE a.id = ? AND r.version = ?`, agentID, version).Row().Scan(&report)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("report on version %d of agent %s: %w", version, agentID, err)
	}
	return json.RawMessage(report.String), nil
}

// contentCodePrefix begins the audit codes of content-scan findings
// (contentscan.Code*).
const contentCodePrefix = "content_"

// emitContentFindings records an EventContentFinding for the content-scan
// codes of the agent's report that its stored audit codes (audit, a JSON
// array) did not have: a finding is reported once, when it appears.
func emitContentFindings(tx *txn, rec agentRecord, audit string, codes []string, now time.Time) error {
	stored, err := decodeAuditCodes(audit)
	if err != nil {
		return fmt.Errorf("agent %s: %w", rec.ID, err)
	}
	var added []string
	for _, c := range dedupe(codes, func(s string) string { return cleanText(s) }) {
		if strings.HasPrefix(c, contentCodePrefix) && !slices.Contains(stored, c) {
			added = append(added, c)
		}
	}
	if len(added) == 0 {
		return nil
	}
	slices.Sort(added)
	return emitEvent(tx, NewEvent{Kind: EventContentFinding, AgentPK: rec.PK, AgentID: rec.ID, CardURL: rec.CardURL,
		Version: rec.CurrentVersion, At: now, Detail: map[string]any{"codes": added}})
}
