package catalog

import (
	"context"
	"database/sql"
	"database/sql/driver"
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
// versions, its health and its verification report, read in one
// transaction so that the parts agree (the report is of the version
// shown, the health of the agent as listed).
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

// AgentView reads an agent with its versions, health (uptimes as of now)
// and verification report in one read transaction. An unknown id, or one
// the scope does not see, is ErrNotFound.
func (s *Store) AgentView(ctx context.Context, sc Scope, id string, now time.Time) (AgentView, error) {
	var v AgentView
	err := s.read(ctx, func(db *gorm.DB) error {
		var (
			pk  int64
			err error
		)
		if v.Agent, pk, err = agentWhere(db, s.limits, sc, "id = ?", id); err != nil {
			return err
		}
		if v.Versions, err = versionsOf(db, id, pk); err != nil {
			return err
		}
		if v.Health, err = agentHealth(db, id, now); err != nil {
			return err
		}
		if v.Verification, err = verificationOf(db, id); err != nil {
			return err
		}
		v.Annotations, err = annotationOfURL(db, v.Agent.CardURL)
		return err
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
	cond, args := sc.visibleSQL()
	if !sc.All {
		cond = "a.removed_at IS NULL AND " + cond
	}
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
		removed = &Removal{At: rec.RemovedAt.UTC(), By: rec.RemovedBy}
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
// with the byte cap raised to the card's own size. The cap guards what
// comes in; a card accepted when --max-card-bytes was larger must still
// read after the operator lowers it, or its agent would answer 500 on
// every read while search still lists it.
func StoredCardLimits(lim card.Limits, raw []byte) card.Limits {
	lim.MaxBytes = max(lim.MaxBytes, len(raw))
	return lim
}
