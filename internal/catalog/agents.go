package catalog

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/a2aregistry/registry/internal/card"
)

// Agent returns one agent with the normalized view of its current card;
// ErrNotFound when no agent has that id or the scope does not see it.
func (s *Store) Agent(ctx context.Context, sc Scope, id string) (Agent, error) {
	return s.agentWhere(ctx, sc, "id = ?", id)
}

// AgentByURL returns the agent registered under a card URL.
func (s *Store) AgentByURL(ctx context.Context, cardURL string) (Agent, error) {
	return s.agentWhere(ctx, ScopeAll, "card_url = ?", cardURL)
}

func (s *Store) agentWhere(ctx context.Context, sc Scope, cond string, arg string) (Agent, error) {
	a, _, err := agentWhere(s.db.WithContext(ctx), s.limits, sc, cond, arg)
	return a, err
}

// agentWhere reads one agent with its current card (one query) and parses
// the card; it returns the agent's pk beside it. An agent the scope does
// not see is ErrNotFound, as a missing one.
func agentWhere(db *gorm.DB, lim card.Limits, sc Scope, cond string, arg string) (Agent, int64, error) {
	var row struct {
		Agent agentRecord `gorm:"embedded"`
		Raw   []byte
	}
	res := db.Raw(`SELECT a.*, v.raw FROM agents a
		JOIN card_versions v ON v.agent_pk = a.pk AND v.number = a.current_version WHERE a.`+cond, arg).Scan(&row)
	if res.Error != nil {
		return Agent{}, 0, fmt.Errorf("agent %s: %w", arg, res.Error)
	}
	if res.RowsAffected == 0 {
		return Agent{}, 0, fmt.Errorf("agent %s: %w", arg, ErrNotFound)
	}
	if ok, err := sc.sees(row.Agent.Listing, row.Agent.Visibility, row.Agent.RemovedAt != nil); err != nil || !ok {
		return Agent{}, 0, errors.Join(fmt.Errorf("agent %s: %w", arg, ErrNotFound), err)
	}
	// The normalized view is derived, so it is rebuilt from the stored
	// bytes: a parser fix shows up without a data migration.
	c, err := card.Parse(row.Raw, StoredCardLimits(lim, row.Raw))
	if err != nil {
		return Agent{}, 0, fmt.Errorf("re-parsing stored card of agent %s: %w", row.Agent.ID, err)
	}
	a := agentOf(row.Agent, c)
	if r := a.Listing.Replacement; r != "" && !sc.All {
		// A replacement the caller cannot see is not named to them.
		var (
			rl, rv string
			gone   bool
		)
		err := db.Raw("SELECT listing, visibility, removed_at IS NOT NULL FROM agents WHERE id = ?", r).Row().Scan(&rl, &rv, &gone)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return Agent{}, 0, fmt.Errorf("replacement of agent %s: %w", row.Agent.ID, err)
		}
		if ok, _ := sc.sees(rl, rv, gone); err != nil || !ok {
			a.Listing.Replacement = ""
		}
	}
	if !sc.All && len(a.Collections) > 0 {
		if a.Collections, err = visibleCollections(db, sc, a.Collections); err != nil {
			return Agent{}, 0, fmt.Errorf("agent %s: %w", row.Agent.ID, err)
		}
	}
	return a, row.Agent.PK, nil
}

// AgentView is what a page about one agent shows: the agent, its stored
// versions, its health and its verification report, read from one
// snapshot so that the parts agree (the report is of the version shown,
// the health of the agent as listed).
type AgentView struct {
	Agent Agent
	// Versions are the stored versions, newest first.
	Versions []VersionSummary
	// Health is as of the now given to AgentView.
	Health HealthReport
	// Verification is the report on the current version; nil until the
	// verifier has made one.
	Verification *Verification
	// Annotations are the operator's, notes included: callers decide who
	// sees those.
	Annotations Annotations
}

// AgentView reads an agent with its versions, health (uptimes as of now),
// verification report and annotations. An unknown id, or one the scope does
// not see, is ErrNotFound.
//
// It is one statement (see agentView), so the parts agree without a
// transaction: on PostgreSQL a transaction would add two round trips
// (BEGIN, COMMIT) to the one that reads. The one case that needs a second
// query, filtering the agent's collections for a scope that does not see
// everything, reads both in one read transaction, so that the scope check
// still sees one snapshot.
func (s *Store) AgentView(ctx context.Context, sc Scope, id string, now time.Time) (AgentView, error) {
	v, err := agentView(s.db.WithContext(ctx), s.limits, sc, id, now)
	if err != nil {
		return AgentView{}, err
	}
	if sc.All || len(v.Agent.Collections) == 0 {
		return v, nil
	}
	err = s.read(ctx, func(db *gorm.DB) error {
		if v, err = agentView(db, s.limits, sc, id, now); err != nil {
			return err
		}
		if len(v.Agent.Collections) == 0 {
			return nil
		}
		if v.Agent.Collections, err = visibleCollections(db, sc, v.Agent.Collections); err != nil {
			return fmt.Errorf("agent %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return AgentView{}, err
	}
	return v, nil
}

// maxVisibleBatch bounds the ids of one VisibleAgents query (SQLite's and
// PostgreSQL's bound-parameter limits are far above it).
const maxVisibleBatch = 500

// VisibleAgents reports which of ids the scope sees, in a query per
// maxVisibleBatch ids: the set holds an id when its agent exists and the
// scope sees it. A removed agent is seen by ScopeAll only (admins, as on
// its page); for everyone else it is as missing as an unknown id. It is
// how a page that names other agents (a content finding's related agents)
// keeps to the caller's scope.
func (s *Store) VisibleAgents(ctx context.Context, sc Scope, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	cond, args := sc.visibleSQL() // removed agents out unless ScopeAll
	for batch := range slices.Chunk(ids, maxVisibleBatch) {
		q := s.db.WithContext(ctx).Table("agents AS a").Where("a.id IN ?", batch)
		if cond != "" {
			q = q.Where(cond, args...)
		}
		var seen []string
		if err := q.Pluck("a.id", &seen).Error; err != nil {
			return nil, fmt.Errorf("checking visibility of %d agents: %w", len(batch), err)
		}
		for _, id := range seen {
			out[id] = true
		}
	}
	return out, nil
}

// agentViewRow is one row of agentViewQuery: the agent, its crawl state,
// uptime counts, verification of the current version, annotations and the
// listing of its replacement repeat on every row; each row adds one stored
// version, and the row of the current version carries its raw bytes.
type agentViewRow struct {
	Agent agentRecord `gorm:"embedded"`

	HPaused              bool
	HConsecutiveFailures int
	HNextCheckAt         sql.NullTime
	HLastCheckAt         sql.NullTime
	HLastSuccessAt       sql.NullTime
	HLastErrorClass      string
	HLastErrorMessage    string
	HLastErrorStatus     int
	HLastErrorAt         sql.NullTime

	UTotal7, UOk7, UTotal24, UOk24 sql.NullInt64

	RVersion      sql.NullInt64
	RStatus       sql.NullString
	RReport       sql.NullString
	RVerifiedAt   sql.NullTime
	RKeysExpireAt sql.NullTime
	RRecheckAt    sql.NullTime
	RStale        sql.NullBool

	NCardURL        sql.NullString `gorm:"column:n_card_url"`
	NOwnerTeam      sql.NullString
	NContact        sql.NullString
	NClassification sql.NullString
	NLabels         sql.NullString
	NNotes          sql.NullString
	NChangedAt      sql.NullTime
	NChangedBy      sql.NullString

	RaListing    sql.NullString
	RaVisibility sql.NullString
	RaRemoved    sql.NullBool

	VsNumber     int
	VsSHA256     string `gorm:"column:vs_sha256"`
	VsSize       int
	VsSource     string
	VsReceivedAt time.Time
	VsRaw        []byte
}

// agentViewQuery reads everything AgentView shows in one statement, one row
// per stored version (newest first). The uptime counts are a derived table
// of one row; the agent is found by id there too, as SQLite has no LATERAL.
// Parameters: day, day, id, week, id.
const agentViewQuery = `SELECT a.*,
	c.paused AS h_paused, c.consecutive_failures AS h_consecutive_failures, c.next_check_at AS h_next_check_at,
	c.last_check_at AS h_last_check_at, c.last_success_at AS h_last_success_at,
	c.last_error_class AS h_last_error_class, c.last_error_message AS h_last_error_message,
	c.last_error_status AS h_last_error_status, c.last_error_at AS h_last_error_at,
	u.total7 AS u_total7, u.ok7 AS u_ok7, u.total24 AS u_total24, u.ok24 AS u_ok24,
	r.version AS r_version, r.status AS r_status, r.report AS r_report, r.verified_at AS r_verified_at,
	r.keys_expire_at AS r_keys_expire_at, r.recheck_at AS r_recheck_at, r.stale AS r_stale,
	n.card_url AS n_card_url, n.owner_team AS n_owner_team, n.contact AS n_contact,
	n.classification AS n_classification, n.labels AS n_labels, n.notes AS n_notes,
	n.changed_at AS n_changed_at, n.changed_by AS n_changed_by,
	ra.listing AS ra_listing, ra.visibility AS ra_visibility, ra.removed_at IS NOT NULL AS ra_removed,
	vs.number AS vs_number, vs.sha256 AS vs_sha256, vs.size AS vs_size, vs.source AS vs_source,
	vs.received_at AS vs_received_at, CASE WHEN vs.number = a.current_version THEN vs.raw END AS vs_raw
FROM agents a
JOIN crawl_state c ON c.agent_pk = a.pk
CROSS JOIN (SELECT COUNT(*) AS total7, SUM(CASE WHEN ok THEN 1 ELSE 0 END) AS ok7,
	SUM(CASE WHEN at >= ? THEN 1 ELSE 0 END) AS total24, SUM(CASE WHEN ok AND at >= ? THEN 1 ELSE 0 END) AS ok24
	FROM fetch_log WHERE agent_pk = (SELECT pk FROM agents WHERE id = ?) AND at >= ?) u
LEFT JOIN verifications r ON r.agent_pk = a.pk AND r.version = a.current_version
LEFT JOIN annotations n ON n.card_url = a.card_url
LEFT JOIN agents ra ON a.listing_replacement <> '' AND ra.id = a.listing_replacement
JOIN card_versions vs ON vs.agent_pk = a.pk
WHERE a.id = ?
ORDER BY vs.number DESC`

// agentView runs agentViewQuery and assembles its rows as agentWhere,
// versionsOf, agentHealth, verificationOf and annotationOfURL would; the
// agent's collections are left unfiltered (AgentView filters them).
func agentView(db *gorm.DB, lim card.Limits, sc Scope, id string, now time.Time) (AgentView, error) {
	day, week := now.UTC().Add(-24*time.Hour), now.UTC().Add(-7*24*time.Hour)
	var rows []agentViewRow
	if err := db.Raw(agentViewQuery, day, day, id, week, id).Scan(&rows).Error; err != nil {
		return AgentView{}, fmt.Errorf("agent %s: %w", id, err)
	}
	if len(rows) == 0 {
		return AgentView{}, fmt.Errorf("agent %s: %w", id, ErrNotFound)
	}
	first := rows[0]
	if ok, err := sc.sees(first.Agent.Listing, first.Agent.Visibility, first.Agent.RemovedAt != nil); err != nil || !ok {
		return AgentView{}, errors.Join(fmt.Errorf("agent %s: %w", id, ErrNotFound), err)
	}
	var (
		v   AgentView
		raw []byte
	)
	v.Versions = make([]VersionSummary, len(rows))
	for i, r := range rows {
		v.Versions[i] = VersionSummary{Number: r.VsNumber, SHA256: r.VsSHA256, Size: r.VsSize, Source: r.VsSource,
			ReceivedAt: r.VsReceivedAt.UTC()}
		if r.VsNumber == first.Agent.CurrentVersion {
			raw = r.VsRaw
		}
	}
	if raw == nil {
		return AgentView{}, fmt.Errorf("agent %s: %w", id, ErrNotFound)
	}
	// The normalized view is derived, so it is rebuilt from the stored
	// bytes: a parser fix shows up without a data migration.
	c, err := card.Parse(raw, StoredCardLimits(lim, raw))
	if err != nil {
		return AgentView{}, fmt.Errorf("re-parsing stored card of agent %s: %w", id, err)
	}
	v.Agent = agentOf(first.Agent, c)
	if v.Agent.Listing.Replacement != "" && !sc.All {
		if ok, err := sc.sees(first.RaListing.String, first.RaVisibility.String, first.RaRemoved.Bool); err != nil || !ok || !first.RaListing.Valid {
			v.Agent.Listing.Replacement = ""
		}
	}
	v.Health = first.health(now)
	v.Verification = first.verification()
	if v.Annotations, err = first.annotations(); err != nil {
		return AgentView{}, fmt.Errorf("agent %s: %w", id, err)
	}
	return v, nil
}

func (r agentViewRow) health(now time.Time) HealthReport {
	h := HealthReport{State: r.Agent.Health, Paused: r.HPaused, ConsecutiveFailures: r.HConsecutiveFailures,
		LastCheckAt: utcNull(r.HLastCheckAt), LastSuccessAt: utcNull(r.HLastSuccessAt)}
	if !h.Paused && r.Agent.RemovedAt == nil {
		h.NextCheckAt = utcNull(r.HNextCheckAt)
	}
	if r.HLastErrorClass != "" && r.HLastErrorAt.Valid {
		h.LastError = &FetchError{Class: r.HLastErrorClass, Message: r.HLastErrorMessage, Status: r.HLastErrorStatus,
			At: r.HLastErrorAt.Time.UTC()}
	}
	h.Uptime24h, h.Uptime7d = uptimeShare(r.UOk24, r.UTotal24), uptimeShare(r.UOk7, r.UTotal7)
	return h
}

func (r agentViewRow) verification() *Verification {
	if !r.RVersion.Valid {
		return nil
	}
	v := &Verification{
		Version:    int(r.RVersion.Int64),
		Status:     r.RStatus.String,
		Report:     json.RawMessage(r.RReport.String),
		VerifiedAt: r.RVerifiedAt.Time.UTC(),
		RecheckAt:  r.RRecheckAt.Time.UTC(),
		Stale:      r.RStale.Bool,
	}
	if r.RKeysExpireAt.Valid {
		v.KeysExpireAt = r.RKeysExpireAt.Time.UTC()
	}
	return v
}

func (r agentViewRow) annotations() (Annotations, error) {
	if !r.NCardURL.Valid {
		return Annotations{}, nil
	}
	return annotationRow{CardURL: r.NCardURL.String, OwnerTeam: r.NOwnerTeam.String, Contact: r.NContact.String,
		Classification: r.NClassification.String, Labels: r.NLabels.String, Notes: r.NNotes.String,
		ChangedAt: r.NChangedAt.Time, ChangedBy: r.NChangedBy.String}.annotations()
}

func utcNull(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

// uptimeShare is the share of successful checks; nil without checks.
func uptimeShare(ok, total sql.NullInt64) *float64 {
	if total.Int64 == 0 {
		return nil
	}
	v := float64(ok.Int64) / float64(total.Int64)
	return &v
}

// read runs fn in one read-only transaction, so that its queries see one
// snapshot of the database.
func (s *Store) read(ctx context.Context, fn func(db *gorm.DB) error) error {
	if s.dialect == dialectPostgres {
		return s.db.WithContext(ctx).Transaction(fn, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	}
	// The pool's SQLite transactions begin IMMEDIATE (see parseDSN), taking
	// the write lock: a read would queue behind the crawler's writes. A
	// DEFERRED transaction on one connection reads one WAL snapshot from its
	// first SELECT on, beside any writer.
	conn, err := s.sqlDB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("reading: %w", err)
	}
	defer conn.Close()
	db := s.db.Session(&gorm.Session{Context: ctx, NewDB: true})
	db.Statement.ConnPool = conn
	if err := db.Exec("BEGIN DEFERRED").Error; err != nil {
		return fmt.Errorf("reading: %w", err)
	}
	err = fn(db)
	// Ended even when ctx is: the connection goes back to the pool.
	if rerr := db.WithContext(context.WithoutCancel(ctx)).Exec("ROLLBACK").Error; rerr != nil {
		// A connection left inside a transaction must not be reused.
		conn.Raw(func(any) error { return driver.ErrBadConn })
		err = errors.Join(err, fmt.Errorf("ending read: %w", rerr))
	}
	return err
}

func agentOf(rec agentRecord, c *card.Card) Agent {
	var removed *Removal
	if rec.RemovedAt != nil {
		removed = &Removal{At: rec.RemovedAt.UTC(), By: rec.RemovedBy, Withdrawn: rec.WithdrawnReason}
	}
	cols, _ := decodeStrings(rec.Collections) // written by this package as a JSON array
	return Agent{
		Removed: removed,
		Listing: Listing{State: rec.Listing, Reason: rec.ListingReason, Replacement: rec.ListingReplacement,
			By: rec.ListingBy, At: utcPtr(rec.ListingAt), ApprovedVersion: rec.ApprovedVersion},
		Collections:     nonNil(cols),
		ID:              rec.ID,
		CardURL:         rec.CardURL,
		Card:            c,
		SignatureStatus: rec.SignatureStatus,
		Health:          rec.Health,
		CurrentVersion:  rec.CurrentVersion,
		CreatedAt:       rec.CreatedAt.UTC(),
		UpdatedAt:       rec.UpdatedAt.UTC(),
		FetchedAt:       rec.FetchedAt.UTC(),
	}
}

// RawCard returns the current card of an agent exactly as it was received.
func (s *Store) RawCard(ctx context.Context, sc Scope, id string) ([]byte, error) {
	pk, err := s.pkOf(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	var raw []byte
	err = s.db.WithContext(ctx).Raw(
		`SELECT v.raw FROM card_versions v JOIN agents a ON a.pk = v.agent_pk AND a.current_version = v.number
		 WHERE a.pk = ?`, pk).Row().Scan(&raw)
	if err != nil {
		return nil, fmt.Errorf("raw card of agent %s: %w", id, translateRow(err))
	}
	return raw, nil
}

// Versions lists the stored versions of an agent's card, newest first.
func (s *Store) Versions(ctx context.Context, sc Scope, id string) ([]VersionSummary, error) {
	pk, err := s.pkOf(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	return versionsOf(s.db.WithContext(ctx), id, pk)
}

func versionsOf(db *gorm.DB, id string, pk int64) ([]VersionSummary, error) {
	var recs []cardVersionRecord
	if err := db.Select("number", "sha256", "size", "source", "received_at").
		Where("agent_pk = ?", pk).Order("number DESC").Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("versions of agent %s: %w", id, err)
	}
	out := make([]VersionSummary, len(recs))
	for i, r := range recs {
		out[i] = versionSummary(r)
	}
	return out, nil
}

// Version returns version n (1-based) of an agent's card with its raw bytes.
func (s *Store) Version(ctx context.Context, sc Scope, id string, n int) (Version, error) {
	pk, err := s.pkOf(ctx, sc, id)
	if err != nil {
		return Version{}, err
	}
	var r cardVersionRecord
	if err := s.db.WithContext(ctx).Where("agent_pk = ? AND number = ?", pk, n).Take(&r).Error; err != nil {
		return Version{}, fmt.Errorf("version %d of agent %s: %w", n, id, translate(err))
	}
	return Version{VersionSummary: versionSummary(r), Raw: r.Raw}, nil
}

func versionSummary(r cardVersionRecord) VersionSummary {
	return VersionSummary{Number: r.Number, SHA256: r.SHA256, Size: r.Size, Source: r.Source, ReceivedAt: r.ReceivedAt.UTC()}
}

// pkOf returns the pk of agent id; ErrNotFound when there is none or the
// scope does not see it.
func (s *Store) pkOf(ctx context.Context, sc Scope, id string) (int64, error) {
	var (
		pk                  int64
		listing, visibility string
		removed             bool
	)
	err := s.db.WithContext(ctx).Raw("SELECT pk, listing, visibility, removed_at IS NOT NULL FROM agents WHERE id = ?", id).Row().
		Scan(&pk, &listing, &visibility, &removed)
	if err != nil {
		return 0, fmt.Errorf("agent %s: %w", id, translateRow(err))
	}
	if ok, err := sc.sees(listing, visibility, removed); err != nil || !ok {
		return 0, errors.Join(fmt.Errorf("agent %s: %w", id, ErrNotFound), err)
	}
	return pk, nil
}

// StoredCardLimits are the limits a stored card is read back under: lim,
// with the byte cap raised to the card's own size and the parser's
// admission rules off (card.Limits.Stored). The cap and the rules guard
// what comes in; a card accepted when --max-card-bytes was larger, or
// before a release refused nameless cards, must still read, or its agent
// would answer 500 on every read while search still lists it.
func StoredCardLimits(lim card.Limits, raw []byte) card.Limits {
	lim.MaxBytes = max(lim.MaxBytes, len(raw))
	lim.Stored = true
	return lim
}
