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
		// Never-verified agents, in pk order. The status is a literal so
		// the planners use the partial index agents_unchecked (migration
		// 00031), and the agents are picked in a limited subquery before
		// their versions are joined: PostgreSQL, with statistics taken
		// while every agent was unchecked, otherwise walks both tables
		// from their start past every verified agent. Every agent has its
		// current version, so the join drops none of those picked.
		{`SELECT a.id, a.card_url, a.current_version, v.raw FROM (
			SELECT pk, id, card_url, current_version FROM agents
			WHERE signature_status = '` + SignatureUnchecked + `' AND health <> ? AND removed_at IS NULL
			ORDER BY pk LIMIT ?) a
		JOIN card_versions v ON v.agent_pk = a.pk AND v.number = a.current_version ORDER BY a.pk`,
			[]any{HealthRemoved}},
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
	if err := s.transactRetrying(ctx, store); err != nil {
		return fmt.Errorf("recording verifications: %w", err)
	}
	// The verdict is three status facets: changed in place in the index.
	if err := s.publishFields(ctx, changed); err != nil {
		s.log.Warn("refreshing search index after verification", "err", err)
	}
	return nil
}

// recordReports stores reports inside tx and returns the index changes of
// the agents whose signature status, trust or audit codes changed. The
// actor is the audit log's (a later change records it here).
//
// The work is per batch, not per report: one locking read of the agents,
// then one statement per table. A dozen statements per report made
// PostgreSQL, where each is a round trip, store a quarter of the reports
// SQLite did. A batch that names an agent more than once is stored in
// rounds, each naming an agent once, so its reports land in their order.
func recordReports(tx *txn, actor Actor, ins []VerificationInput) ([]fieldUpdate, error) {
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
	now := time.Now().UTC()
	var changed []fieldUpdate
	for _, round := range reportRounds(ins) {
		ups, err := recordRound(tx, round, gen, now)
		if err != nil {
			return nil, err
		}
		changed = append(changed, ups...)
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

// reportRounds cuts ins into rounds that name each agent once, keeping
// the order of each agent's reports.
func reportRounds(ins []VerificationInput) [][]VerificationInput {
	var rounds [][]VerificationInput
	for len(ins) > 0 {
		seen := make(map[string]bool, len(ins))
		var round, rest []VerificationInput
		for _, in := range ins {
			if seen[in.AgentID] {
				rest = append(rest, in)
				continue
			}
			seen[in.AgentID] = true
			round = append(round, in)
		}
		rounds = append(rounds, round)
		ins = rest
	}
	return rounds
}

// recordRound stores reports on distinct agents: lookup, plan, apply.
func recordRound(tx *txn, ins []VerificationInput, gen int64, now time.Time) ([]fieldUpdate, error) {
	ids := make([]string, len(ins))
	for i, in := range ins {
		ids[i] = in.AgentID
	}
	// The agent row lock serializes reports on one agent from several
	// replicas, and with card upserts, so two writers never both decide
	// on the verdict columns from the same stored values. Rows are
	// locked in pk order, so two batches never wait on each other in a
	// cycle.
	byID := make(map[string]agentRecord, len(ins))
	if err := lockAcross(tx, "id", ids); err != nil {
		return nil, err
	}
	for chunk := range slices.Chunk(ids, lockChunk) {
		var recs []agentRecord
		if err := tx.locked().Select("pk", "id", "seq", "current_version", "card_url", "signature_status", "audit_codes",
			"finding_severities", "signature_trust", "publisher_verified").
			Where("id IN ?", chunk).Order(lockOrder).Find(&recs).Error; err != nil {
			return nil, fmt.Errorf("looking up agents: %w", err)
		}
		for _, r := range recs {
			byID[r.ID] = r
		}
	}
	received, err := keyChangeReceipts(tx, ins, byID)
	if err != nil {
		return nil, err
	}
	p, err := planReports(ins, byID, received, gen, now)
	if err != nil {
		return nil, err
	}
	return p.apply(tx)
}

// keyChangeReceipts reads when the current card came of each agent whose
// report on it holds the signing-key-change finding: the day is a
// search field (FilterKeyChangedDay).
func keyChangeReceipts(tx *txn, ins []VerificationInput, byID map[string]agentRecord) (map[int64]time.Time, error) {
	var pks []int64
	for _, in := range ins {
		if rec, ok := byID[in.AgentID]; ok && in.Version == rec.CurrentVersion && slices.Contains(in.AuditCodes, auditSigningKeyChanged) {
			pks = append(pks, rec.PK)
		}
	}
	out := make(map[int64]time.Time, len(pks))
	for chunk := range slices.Chunk(pks, 500) {
		where, args := inList("a.pk", chunk)
		rows, err := tx.Raw(`SELECT v.agent_pk, v.received_at FROM card_versions v
			JOIN agents a ON a.pk = v.agent_pk AND v.number = a.current_version WHERE `+where, args...).Rows()
		if err != nil {
			return nil, fmt.Errorf("reading when cards came: %w", err)
		}
		for rows.Next() {
			var pk int64
			var at time.Time
			if err := rows.Scan(&pk, &at); err != nil {
				rows.Close()
				return nil, fmt.Errorf("reading when cards came: %w", err)
			}
			out[pk] = at
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("reading when cards came: %w", err)
		}
	}
	return out, nil
}

// reportPlan is what a round of reports writes.
type reportPlan struct {
	reports []verificationRow
	// current are the agents whose current version is reported on: their
	// kids and name keys are replaced by kids and names.
	current  []int64
	kids     []verificationKidRow
	names    []nameKeyRow
	verdicts []verdictRow
	changes  []changeRow
}

// planReports decides what reports on distinct agents write, from the
// agents' locked rows (byID; reports on agents missing there are
// skipped) and when the cards with a key-change finding came (received).
func planReports(ins []VerificationInput, byID map[string]agentRecord, received map[int64]time.Time, gen int64, now time.Time) (reportPlan, error) {
	var p reportPlan
	for _, in := range ins {
		rec, ok := byID[in.AgentID]
		if !ok {
			continue
		}
		var keysExpire any
		if !in.KeysExpireAt.IsZero() {
			keysExpire = in.KeysExpireAt.UTC()
		}
		p.reports = append(p.reports, verificationRow{AgentPK: rec.PK, Version: in.Version, Status: in.Status,
			Report: string(in.Report), VerifiedAt: in.VerifiedAt.UTC(), KeysExpireAt: keysExpire,
			RecheckAt: in.RecheckAt.UTC(), TrustGeneration: in.TrustGeneration, Stale: in.TrustGeneration != gen})
		if in.Version != rec.CurrentVersion {
			continue
		}
		p.current = append(p.current, rec.PK)
		for _, kid := range dedupe(in.KIDs, func(s string) string { return s }) {
			p.kids = append(p.kids, verificationKidRow{KID: kid, AgentPK: rec.PK})
		}
		p.names = append(p.names, nameKeyRows(rec.PK, in.NameKeys)...)
		v, err := verdictOf(rec, in, received[rec.PK], now)
		if err != nil {
			return p, err
		}
		if v != nil {
			p.verdicts = append(p.verdicts, *v)
		}
		if rec.SignatureStatus != in.Status {
			p.changes = append(p.changes, transition(EventSignature, rec, rec.SignatureStatus, in.Status, now))
		}
		for _, event := range []func(agentRecord, VerificationInput, time.Time) (*changeRow, error){contentFindingEvent, keyChangeEvent} {
			row, err := event(rec, in, now)
			if err != nil {
				return p, err
			}
			if row != nil {
				p.changes = append(p.changes, *row)
			}
		}
	}
	return p, nil
}

// apply writes p inside tx and returns the index changes of its verdicts.
func (p reportPlan) apply(tx *txn) ([]fieldUpdate, error) {
	if err := insertRows(tx, verificationsTable, p.reports); err != nil {
		return nil, fmt.Errorf("storing reports: %w", err)
	}
	for chunk := range slices.Chunk(p.current, 500) {
		where, args := inList("agent_pk", chunk)
		if err := tx.Exec("DELETE FROM verification_kids WHERE "+where, args...).Error; err != nil {
			return nil, fmt.Errorf("replacing kids: %w", err)
		}
		if err := tx.Exec("DELETE FROM agent_name_keys WHERE "+where, args...).Error; err != nil {
			return nil, fmt.Errorf("replacing name keys: %w", err)
		}
	}
	if err := insertRows(tx, verificationKidsTable, p.kids); err != nil {
		return nil, fmt.Errorf("storing kids: %w", err)
	}
	if err := insertRows(tx, nameKeysTable, p.names); err != nil {
		return nil, fmt.Errorf("storing name keys: %w", err)
	}
	seqs, err := allocate(tx, "seq", len(p.verdicts))
	if err != nil {
		return nil, err
	}
	ups := make([]fieldUpdate, len(p.verdicts))
	for i := range p.verdicts {
		p.verdicts[i].Seq = seqs[i]
		ups[i] = fieldUpdate{pk: p.verdicts[i].PK, prev: p.verdicts[i].prev, seq: seqs[i], values: p.verdicts[i].values}
	}
	if err := updateRows(tx, verdictUpdate, p.verdicts); err != nil {
		return nil, fmt.Errorf("updating verdicts: %w", err)
	}
	if err := appendChanges(tx, p.changes); err != nil {
		return nil, fmt.Errorf("recording verification events: %w", err)
	}
	return ups, nil
}

// verificationRow is a stored report; a report on a version that has one
// replaces it.
type verificationRow struct {
	AgentPK         int64
	Version         int
	Status, Report  string
	VerifiedAt      time.Time
	KeysExpireAt    any // NULL when the report relied on no expiring key
	RecheckAt       time.Time
	TrustGeneration int64
	Stale           bool
}

var verificationsTable = bulkTable[verificationRow]{
	name: "verifications",
	cols: []bulkCol{{"agent_pk", pgBigint}, {"version", pgInteger}, {"status", pgText}, {"report", pgText},
		{"verified_at", pgTimestamp}, {"keys_expire_at", pgTimestamp}, {"recheck_at", pgTimestamp},
		{"trust_generation", pgBigint}, {"stale", pgBoolean}},
	conflict: `ON CONFLICT (agent_pk, version) DO UPDATE SET status = excluded.status, report = excluded.report,
		verified_at = excluded.verified_at, keys_expire_at = excluded.keys_expire_at, recheck_at = excluded.recheck_at,
		trust_generation = excluded.trust_generation, stale = excluded.stale`,
	args: func(a []any, r verificationRow) []any {
		return append(a, r.AgentPK, r.Version, r.Status, r.Report, r.VerifiedAt, r.KeysExpireAt, r.RecheckAt,
			r.TrustGeneration, r.Stale)
	},
}

// verdictRow is what a report on an agent's current version changes in
// its agents row.
type verdictRow struct {
	PK                                                       int64
	Status, AuditCodes, Severities, Trust, PublisherVerified string
	Seq                                                      int64
	UpdatedAt                                                time.Time
	// prev is the seq the agent had before and values the index fields
	// of the verdict (not written; see fieldUpdate).
	prev   int64
	values map[string][]string
}

var verdictUpdate = bulkUpdate[verdictRow]{
	table: "agents", key: "pk",
	cols: []bulkCol{{"pk", pgBigint}, {"signature_status", pgText}, {"audit_codes", pgText},
		{"finding_severities", pgText}, {"signature_trust", pgText}, {"publisher_verified", pgText},
		{"seq", pgBigint}, {"updated_at", pgTimestamp}},
	args: func(a []any, r verdictRow) []any {
		return append(a, r.PK, r.Status, r.AuditCodes, r.Severities, r.Trust, r.PublisherVerified, r.Seq, r.UpdatedAt)
	},
}

// verdictOf is the change of the signature status, audit codes and their
// severities, signature trust and publisher verification that in makes to
// the agent's stored ones (rec), nil when none: a change gives the agent a
// new seq and updated_at, so that the index (and other replicas' Sync)
// pick it up. received is when the current card came, read when in holds
// the signing-key-change finding.
func verdictOf(rec agentRecord, in VerificationInput, received, now time.Time) (*verdictRow, error) {
	codes := dedupe(in.AuditCodes, func(s string) string { return cleanText(s) })
	slices.Sort(codes)
	stored, err := decodeAuditCodes(rec.AuditCodes)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", in.AgentID, err)
	}
	sevs := findingSeverities(in.Severities)
	storedSevs, err := decodeStrings(rec.FindingSeverities)
	if err != nil {
		return nil, fmt.Errorf("agent %s: decoding finding severities: %w", in.AgentID, err)
	}
	trust := cleanText(in.Trust)
	pubVerified := publisherVerifiedFalse
	if in.PublisherVerified {
		pubVerified = publisherVerifiedTrue
	}
	if rec.SignatureStatus == in.Status && slices.Equal(stored, codes) && slices.Equal(storedSevs, sevs) &&
		rec.SignatureTrust == trust && publisherVerifiedValue(rec.PublisherVerified) == pubVerified {
		return nil, nil
	}
	values := map[string][]string{FieldSignature: {in.Status}, FieldSignatureTrust: {trust},
		FieldPublisherVerified: {pubVerified}, FieldAudit: codes, FieldSeverity: sevs, FilterKeyChangedDay: nil}
	if slices.Contains(codes, auditSigningKeyChanged) {
		values[FilterKeyChangedDay] = []string{keyChangedDay(codes, received)}
	}
	return &verdictRow{PK: rec.PK, Status: in.Status, AuditCodes: jsonArray(codes), Severities: jsonArray(sevs),
		Trust: trust, PublisherVerified: pubVerified, UpdatedAt: now, prev: rec.Seq, values: values}, nil
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

// contentFindingEvent is the EventContentFinding of the content-scan
// codes of the agent's report that its stored audit codes (rec) did not
// have, nil when none: a finding is reported once, when it appears.
func contentFindingEvent(rec agentRecord, in VerificationInput, now time.Time) (*changeRow, error) {
	stored, err := decodeAuditCodes(rec.AuditCodes)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", rec.ID, err)
	}
	var added []string
	for _, c := range dedupe(in.AuditCodes, func(s string) string { return cleanText(s) }) {
		if strings.HasPrefix(c, contentCodePrefix) && !slices.Contains(stored, c) {
			added = append(added, c)
		}
	}
	if len(added) == 0 {
		return nil, nil
	}
	slices.Sort(added)
	row, err := NewEvent{Kind: EventContentFinding, AgentPK: rec.PK, AgentID: rec.ID, CardURL: rec.CardURL,
		Version: rec.CurrentVersion, At: now, Detail: map[string]any{"codes": added}}.row()
	return &row, err
}
