package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm/clause"
)

// Source states.
const (
	SourcePending = "pending"
	SourceOK      = "ok"
	SourceFailed  = "failed"
)

// Source is a URL the registry reads many agents from (see
// internal/sources): a manifest, or an origin resolved to one.
type Source struct {
	ID        string
	URL       string
	CreatedAt time.Time
	CreatedBy string
	// ResolvedURL is the manifest (or card) the last successful check
	// read; ResolvedVia how it was found (sources.Via*).
	ResolvedURL string
	ResolvedVia string
	// Status is SourcePending until the first check, then SourceOK or
	// SourceFailed; Problem is a machine-readable cause of a failure and
	// Message says it in words.
	Status, Problem, Message string
	ETag, LastModified       string
	// CheckedAt is the last check, ChangedAt the last one that read a new
	// manifest (not a 304); nil when never.
	CheckedAt, ChangedAt *time.Time
	NextCheckAt          time.Time
	ConsecutiveFailures  int
	// EntryCount counts the entries of the last manifest read.
	EntryCount int
	// Kind is SourceManifest or SourceRegistry (a peer registry the
	// registry federates from).
	Kind string
	// HasToken tells whether a bearer token for the peer is stored; the
	// token itself is read only by SourceToken, never shown.
	HasToken bool
	// Cursor is where a peer's change feed was read up to ("" before the
	// first sync, and for other sources).
	Cursor string
	// ParentID names the manifest source whose registry entry made this
	// source; "" for one added by hand.
	ParentID string
	// PeerID is the registry id the peer advertised at its last sync;
	// PeerURL its ARD search base and PeerName its name.
	PeerID, PeerURL, PeerName string
}

// Entry outcomes: what a check did with an entry of a source's manifest.
const (
	EntryCatalogued = "catalogued"
	EntryUnchanged  = "unchanged"
	EntrySkipped    = "skipped"
)

// SourceEntry is one entry a source's last manifest listed (nested
// catalogs' entries included), with what was done with it.
type SourceEntry struct {
	Position    int
	ManifestURL string
	// Depth is 0 for the source's own manifest, 1 for a catalog it nests…
	Depth                   int
	Identifier, DisplayName string
	Type, URL               string
	// Outcome is Entry*; Reason a machine-readable cause when skipped (or
	// a flag's code), Message the same in words.
	Outcome, Reason, Message string
	AgentID                  string
	// TrustFlag is set when the entry's trustManifest disagrees with its
	// identifier's publisher and the registry only flags it.
	TrustFlag             string
	Tags                  []string
	RepresentativeQueries []string
	// TrustManifest is the entry's trustManifest as JSON, "" when none.
	TrustManifest string
	// ETag and LastModified are the validators a nested catalog (Outcome
	// followed) was read with, for the next check's conditional request.
	ETag, LastModified string
}

// Provenance kinds: how an agent came to the catalog.
const (
	ProvenanceRegistered = "registered"
	ProvenanceSeeded     = "seeded"
	ProvenanceImported   = "imported"
	ProvenanceSource     = "source"
)

// Relations of an agent to the source that brought it (the AWS agent
// registry's words): published from a manifest on the card's own host,
// discovered from one elsewhere, federated from a peer registry.
const (
	RelationPublishedFrom  = "publishedFrom"
	RelationDiscoveredFrom = "discoveredFrom"
	RelationFederatedFrom  = "federatedFrom"
)

// FieldProvenance is the provenance facet: the kinds of an agent's
// current provenance (registered, seeded, imported) and, for sources,
// the relation (publishedFrom, discoveredFrom, federatedFrom).
const FieldProvenance = "provenance"

// ProvenanceValues lists the provenance facet's values.
var ProvenanceValues = []string{ProvenanceRegistered, ProvenanceSeeded, ProvenanceImported,
	RelationPublishedFrom, RelationDiscoveredFrom, RelationFederatedFrom}

// Via is how a card write came, when it is not a person's or an import's
// registration: a seed list (Kind ProvenanceSeeded), or a source's entry
// (Kind ProvenanceSource with the rest).
type Via struct {
	Kind                             string
	SourceID, SourceURL, ManifestURL string
	EntryID, Relation                string
}

// Provenance is one way an agent came to the catalog.
type Provenance struct {
	Kind string
	// By names who registered it (Kind registered); empty for agents
	// catalogued before provenance was recorded.
	By                               string
	SourceID, SourceURL, ManifestURL string
	EntryID, Relation                string
	FirstAt, LastAt                  time.Time
	// EndedAt is set when the source entry no longer names the agent (or
	// the source was deleted); the row is kept as history.
	EndedAt *time.Time
}

// Active tells whether p still vouches for its agent.
func (p Provenance) Active() bool { return p.EndedAt == nil }

type sourceRecord struct {
	ID                  string `gorm:"primaryKey"`
	URL                 string
	CreatedAt           time.Time
	CreatedBy           string
	ResolvedURL         string
	ResolvedVia         string
	Status              string
	Problem             string
	Message             string
	ETag                string `gorm:"column:etag"`
	LastModified        string
	CheckedAt           *time.Time
	ChangedAt           *time.Time
	NextCheckAt         time.Time
	ConsecutiveFailures int
	EntryCount          int
	LeaseOwner          string
	LeaseUntil          *time.Time
	Kind                string
	Token               string
	FeedCursor          string
	ParentID            string
	PeerID              string
	PeerURL             string
	PeerName            string
}

func (sourceRecord) TableName() string { return "sources" }

func (r sourceRecord) source() Source {
	return Source{ID: r.ID, URL: r.URL, CreatedAt: r.CreatedAt.UTC(), CreatedBy: r.CreatedBy, ResolvedURL: r.ResolvedURL,
		ResolvedVia: r.ResolvedVia, Status: r.Status, Problem: r.Problem, Message: r.Message, ETag: r.ETag,
		LastModified: r.LastModified, CheckedAt: utcPtr(r.CheckedAt), ChangedAt: utcPtr(r.ChangedAt),
		NextCheckAt: r.NextCheckAt.UTC(), ConsecutiveFailures: r.ConsecutiveFailures, EntryCount: r.EntryCount,
		Kind: r.Kind, HasToken: r.Token != "", Cursor: r.FeedCursor, ParentID: r.ParentID, PeerID: r.PeerID,
		PeerURL: r.PeerURL, PeerName: r.PeerName}
}

type sourceEntryRecord struct {
	SourceID              string
	Position              int
	ManifestURL           string
	Depth                 int
	Identifier            string
	DisplayName           string
	Type                  string
	URL                   string
	Outcome               string
	Reason                string
	Message               string
	AgentID               string
	TrustFlag             string
	Tags                  string
	RepresentativeQueries string
	TrustManifest         string
	ETag                  string `gorm:"column:etag"`
	LastModified          string
}

func (sourceEntryRecord) TableName() string { return "source_entries" }

type provenanceRecord struct {
	PK          int64 `gorm:"column:pk;primaryKey"`
	AgentPK     int64
	Kind        string
	OriginKey   string
	ByName      string
	SourceID    string
	SourceURL   string
	ManifestURL string
	EntryID     string
	Relation    string
	FirstAt     time.Time
	LastAt      time.Time
	EndedAt     *time.Time
}

func (provenanceRecord) TableName() string { return "agent_provenance" }

func (r provenanceRecord) provenance() Provenance {
	return Provenance{Kind: r.Kind, By: r.ByName, SourceID: r.SourceID, SourceURL: r.SourceURL, ManifestURL: r.ManifestURL,
		EntryID: r.EntryID, Relation: r.Relation, FirstAt: r.FirstAt.UTC(), LastAt: r.LastAt.UTC(), EndedAt: utcPtr(r.EndedAt)}
}

// token is the provenance facet's value of r: its kind, or for a
// source's entry its relation.
func (r provenanceRecord) token() string {
	if r.Kind == ProvenanceSource {
		return r.Relation
	}
	return r.Kind
}

// Audit actions of sources.
const (
	ActionSourceCreate = "source.create"
	ActionSourceDelete = "source.delete"
	ActionWithdraw     = "agent.withdraw"
)

// NewSource is a source to store.
type NewSource struct {
	URL string
	// Kind is SourceManifest ("" too) or SourceRegistry.
	Kind string
	// Token is a bearer token for a peer registry; stored sealed.
	Token string
	// ParentID names the manifest source whose entry names this peer.
	ParentID string
}

// CreateSource stores a new source, due for its first check now.
// ErrConflict when a source has that URL already.
func (s *Store) CreateSource(ctx context.Context, actor Actor, in NewSource) (Source, error) {
	if err := actor.validate(); err != nil {
		return Source{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Source{}, err
	}
	url := in.URL
	kind := in.Kind
	if kind == "" {
		kind = SourceManifest
	}
	if kind != SourceManifest && kind != SourceRegistry {
		return Source{}, fmt.Errorf("source kind %q: %w", kind, ErrInvalidSource)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	rec := sourceRecord{ID: id.String(), URL: url, CreatedAt: now, CreatedBy: removerName(actor), Status: SourcePending, NextCheckAt: now,
		Kind: kind, ParentID: in.ParentID}
	if in.Token != "" {
		rec.Token = s.seal.seal(sourceTokenAt(rec.ID), in.Token)
	}
	err = s.transact(ctx, func(tx *txn) error {
		var n int64
		if err := tx.Model(&sourceRecord{}).Where("url = ?", url).Count(&n).Error; err != nil {
			return fmt.Errorf("looking up source: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("source %s: %w", url, ErrConflict)
		}
		if err := tx.Create(&rec).Error; err != nil {
			return fmt.Errorf("storing source: %w", err)
		}
		return writeAudit(tx.DB, actor, audit{action: ActionSourceCreate, targetKind: "source", targetID: rec.ID,
			detail: map[string]any{"url": url, "kind": kind, "token": rec.Token != ""}})
	})
	if err != nil {
		return Source{}, err
	}
	return rec.source(), nil
}

// Sources lists every source, oldest first.
func (s *Store) Sources(ctx context.Context) ([]Source, error) {
	var recs []sourceRecord
	if err := s.db.WithContext(ctx).Order("created_at, id").Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("listing sources: %w", err)
	}
	out := make([]Source, len(recs))
	for i, r := range recs {
		out[i] = r.source()
	}
	return out, nil
}

// Source reads one source; ErrNotFound when there is none.
func (s *Store) Source(ctx context.Context, id string) (Source, error) {
	var recs []sourceRecord
	if err := s.db.WithContext(ctx).Where("id = ?", id).Limit(1).Find(&recs).Error; err != nil {
		return Source{}, fmt.Errorf("source %s: %w", id, err)
	}
	if len(recs) == 0 {
		return Source{}, fmt.Errorf("source %s: %w", id, ErrNotFound)
	}
	return recs[0].source(), nil
}

// SourceEntries lists the entries of a source's last manifest, in the
// order they were read.
func (s *Store) SourceEntries(ctx context.Context, id string) ([]SourceEntry, error) {
	var recs []sourceEntryRecord
	if err := s.db.WithContext(ctx).Where("source_id = ?", id).Order("position").Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("entries of source %s: %w", id, err)
	}
	out := make([]SourceEntry, len(recs))
	for i, r := range recs {
		out[i] = r.entry()
	}
	return out, nil
}

func (r sourceEntryRecord) entry() SourceEntry {
	tags, _ := decodeStrings(r.Tags) // written by this package as a JSON array
	qs, _ := decodeStrings(r.RepresentativeQueries)
	return SourceEntry{Position: r.Position, ManifestURL: r.ManifestURL, Depth: r.Depth, Identifier: r.Identifier,
		DisplayName: r.DisplayName, Type: r.Type, URL: r.URL, Outcome: r.Outcome, Reason: r.Reason, Message: r.Message,
		AgentID: r.AgentID, TrustFlag: r.TrustFlag, Tags: nonNil(tags), RepresentativeQueries: nonNil(qs),
		TrustManifest: r.TrustManifest, ETag: r.ETag, LastModified: r.LastModified}
}

// AgentSourceEntries lists the entries of every source that name agent
// id: its identifiers, tags, representative queries and trust manifests
// as publishers describe it.
func (s *Store) AgentSourceEntries(ctx context.Context, id string) ([]SourceEntry, error) {
	if id == "" {
		// Entries that became no agent carry no id.
		return nil, nil
	}
	var recs []sourceEntryRecord
	if err := s.db.WithContext(ctx).Where("agent_id = ?", id).Order("source_id, position").Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("source entries of agent %s: %w", id, err)
	}
	out := make([]SourceEntry, len(recs))
	for i, r := range recs {
		out[i] = r.entry()
	}
	return out, nil
}

// EntriesNamingCard lists the entries of every source's last manifest
// that name the card at cardURL: those that catalogued its agent, and
// those that list the URL itself (a card not stored yet, being judged
// before its first write). A publisher's manifest vouches for its agents
// through them (sources.ManifestListings).
func (s *Store) EntriesNamingCard(ctx context.Context, cardURL string) ([]SourceEntry, error) {
	var recs []sourceEntryRecord
	err := s.db.WithContext(ctx).Where("url = ? OR agent_id IN (SELECT id FROM agents WHERE card_url = ? AND removed_at IS NULL)",
		cardURL, cardURL).Order("source_id, position").Find(&recs).Error
	if err != nil {
		return nil, fmt.Errorf("source entries of card %s: %w", cardURL, err)
	}
	out := make([]SourceEntry, len(recs))
	for i, r := range recs {
		out[i] = r.entry()
	}
	return out, nil
}

// AgentProvenance lists how agent id came to the catalog, oldest first,
// ended rows included. The caller has checked that the agent is visible.
func (s *Store) AgentProvenance(ctx context.Context, id string) ([]Provenance, error) {
	var recs []provenanceRecord
	if err := s.db.WithContext(ctx).Where("agent_pk = (SELECT pk FROM agents WHERE id = ?)", id).
		Order("first_at, pk").Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("provenance of agent %s: %w", id, err)
	}
	out := make([]Provenance, len(recs))
	for i, r := range recs {
		out[i] = r.provenance()
	}
	return out, nil
}

// ClaimSource takes the lease of source id for a check by owner, whether
// it is due or not (a refresh); false when another check holds it.
func (s *Store) ClaimSource(ctx context.Context, id, owner string, now time.Time, lease time.Duration) (Source, bool, error) {
	var rec sourceRecord
	claimed := false
	err := s.transact(ctx, func(tx *txn) error {
		var recs []sourceRecord
		if err := tx.locked().Where("id = ?", id).Find(&recs).Error; err != nil {
			return fmt.Errorf("source %s: %w", id, err)
		}
		if len(recs) == 0 {
			return fmt.Errorf("source %s: %w", id, ErrNotFound)
		}
		rec = recs[0]
		if rec.LeaseUntil != nil && rec.LeaseUntil.After(now) && rec.LeaseOwner != owner {
			return nil
		}
		until := now.Add(lease).UTC()
		if err := tx.Exec("UPDATE sources SET lease_owner = ?, lease_until = ? WHERE id = ?", owner, until, id).Error; err != nil {
			return fmt.Errorf("leasing source %s: %w", id, err)
		}
		claimed = true
		return nil
	})
	return rec.source(), claimed, err
}

// ClaimDueSources leases up to limit sources due at now to owner.
func (s *Store) ClaimDueSources(ctx context.Context, now time.Time, limit int, owner string, lease time.Duration) ([]Source, error) {
	var recs []sourceRecord
	err := s.transact(ctx, func(tx *txn) error {
		q := tx.Where("next_check_at <= ? AND (lease_until IS NULL OR lease_until <= ?)", now.UTC(), now.UTC()).
			Order("next_check_at").Limit(limit)
		if tx.d == dialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
		}
		if err := q.Find(&recs).Error; err != nil {
			return fmt.Errorf("claiming due sources: %w", err)
		}
		if len(recs) == 0 {
			return nil
		}
		ids := make([]string, len(recs))
		for i, r := range recs {
			ids[i] = r.ID
		}
		return tx.Exec("UPDATE sources SET lease_owner = ?, lease_until = ? WHERE id IN ?", owner, now.Add(lease).UTC(), ids).Error
	})
	if err != nil {
		return nil, err
	}
	out := make([]Source, len(recs))
	for i, r := range recs {
		out[i] = r.source()
	}
	return out, nil
}

// SourceCheck is the outcome of one check of a source, as the sources
// package decided it.
type SourceCheck struct {
	SourceID string
	Owner    string
	At       time.Time
	// Status is SourceOK or SourceFailed, with Problem and Message.
	Status, Problem, Message string
	ResolvedURL, ResolvedVia string
	ETag, LastModified       string
	NextCheckAt              time.Time
	ConsecutiveFailures      int
	// Changed is set when a new manifest was read: Entries replace the
	// stored ones, and the source's provenance rows whose entry is not in
	// Keep end (their agents withdrawn when nothing else vouches for
	// them). Unset (a 304, a failure) keeps the entries as they are.
	Changed bool
	Entries []SourceEntry
	// Keep are the identifiers of entries that still vouch for their
	// agents.
	Keep []string
	// Incremental (a peer's change feed) stores Entries in place of the
	// stored entries of the same identifiers and drops those of Removed,
	// leaving the others as they are; only the provenance of the
	// identifiers it names and does not Keep ends.
	Incremental bool
	Removed     []string
	// Cursor, when set, is stored as the source's feed cursor; PeerID,
	// PeerURL and PeerName as what the peer advertised.
	Cursor, PeerID, PeerURL, PeerName string
}

// RecordSourceCheck stores a check of a source and releases its lease.
// It returns the ids of the agents it withdrew.
func (s *Store) RecordSourceCheck(ctx context.Context, actor Actor, c SourceCheck) ([]string, error) {
	if err := actor.validate(); err != nil {
		return nil, err
	}
	var withdrawn []string
	var ups []fieldUpdate
	var requeried []int64
	err := s.transact(ctx, func(tx *txn) error {
		var recs []sourceRecord
		if err := tx.locked().Where("id = ?", c.SourceID).Find(&recs).Error; err != nil {
			return fmt.Errorf("source %s: %w", c.SourceID, err)
		}
		if len(recs) == 0 {
			// Deleted while it was checked: nothing to record.
			return fmt.Errorf("source %s: %w", c.SourceID, ErrNotFound)
		}
		at := c.At.UTC()
		set := map[string]any{"status": c.Status, "problem": c.Problem, "message": c.Message, "checked_at": at,
			"next_check_at": c.NextCheckAt.UTC(), "consecutive_failures": c.ConsecutiveFailures,
			"lease_owner": "", "lease_until": nil}
		if c.Status == SourceOK {
			set["resolved_url"], set["resolved_via"], set["etag"], set["last_modified"] = c.ResolvedURL, c.ResolvedVia, c.ETag, c.LastModified
			if c.Cursor != "" {
				set["feed_cursor"] = c.Cursor
			}
			if c.PeerURL != "" {
				set["peer_id"], set["peer_url"], set["peer_name"] = c.PeerID, c.PeerURL, cleanText(c.PeerName)
			}
		}
		if c.Changed {
			set["changed_at"] = at
			set["entry_count"] = len(c.Entries)
		}
		if c.Changed && c.Incremental {
			n, err := applyIncremental(tx, c)
			if err != nil {
				return err
			}
			set["entry_count"] = n
		}
		if err := tx.Model(&sourceRecord{}).Where("id = ?", c.SourceID).Updates(set).Error; err != nil {
			return fmt.Errorf("recording check of source %s: %w", c.SourceID, err)
		}
		if c.Status == SourceFailed && recs[0].Status != SourceFailed {
			// Told once when it starts failing, not at every retry.
			if err := emitEvent(tx, NewEvent{Kind: EventSourceFailed, CardURL: recs[0].URL, At: at,
				Detail: map[string]any{"source_id": c.SourceID, "error": c.Problem + ": " + c.Message}}); err != nil {
				return err
			}
		}
		if !c.Changed {
			return nil
		}
		if c.Incremental {
			var err error
			withdrawn, ups, err = endEntriesProvenance(tx, actor, c.SourceID, append(entryIDs(c.Entries), c.Removed...), c.Keep, at,
				"the peer registry "+recs[0].URL+" no longer lists it")
			return err
		}
		if recs[0].Kind == SourceRegistry {
			// A peer's entries carry no representative queries
			// (federation.go): no agent's queries change.
			if err := replaceEntries(tx, c.SourceID, c.Entries); err != nil {
				return err
			}
			var err error
			withdrawn, ups, err = endSourceProvenance(tx, actor, c.SourceID, c.Keep, at, "the peer registry "+recs[0].URL+" no longer lists it")
			return err
		}
		named := make([]string, 0, len(c.Entries))
		for _, e := range c.Entries {
			named = append(named, e.AgentID)
		}
		var err error
		requeried, err = requery(tx, c.SourceID, named, at, func() error { return replaceEntries(tx, c.SourceID, c.Entries) })
		if err != nil {
			return err
		}
		withdrawn, ups, err = endSourceProvenance(tx, actor, c.SourceID, c.Keep, at, "its entry left the manifest of source "+recs[0].URL)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.afterProvenance(ctx, ups)
	s.afterRequery(ctx, requeried)
	return withdrawn, nil
}

// replaceEntries stores a source's entries in place of the last check's.
func replaceEntries(tx *txn, sourceID string, entries []SourceEntry) error {
	if err := tx.Exec("DELETE FROM source_entries WHERE source_id = ?", sourceID).Error; err != nil {
		return fmt.Errorf("replacing entries of source %s: %w", sourceID, err)
	}
	return insertEntries(tx, sourceID, 0, entries)
}

// insertEntries stores entries of a source at positions from first on.
func insertEntries(tx *txn, sourceID string, first int, entries []SourceEntry) error {
	recs := make([]sourceEntryRecord, len(entries))
	for i, e := range entries {
		tags, _ := json.Marshal(nonNil(e.Tags))
		qs, _ := json.Marshal(nonNil(e.RepresentativeQueries))
		recs[i] = sourceEntryRecord{SourceID: sourceID, Position: first + i, ManifestURL: cleanText(e.ManifestURL), Depth: e.Depth,
			Identifier: cleanText(e.Identifier), DisplayName: cleanText(e.DisplayName), Type: cleanText(e.Type), URL: cleanText(e.URL),
			Outcome: e.Outcome, Reason: e.Reason, Message: cleanText(e.Message), AgentID: e.AgentID, TrustFlag: e.TrustFlag,
			Tags: cleanText(string(tags)), RepresentativeQueries: cleanText(string(qs)), TrustManifest: cleanText(e.TrustManifest),
			ETag: cleanText(e.ETag), LastModified: cleanText(e.LastModified)}
	}
	for chunk := range slices.Chunk(recs, 200) {
		if err := tx.Create(&chunk).Error; err != nil {
			return fmt.Errorf("storing entries of source %s: %w", sourceID, err)
		}
	}
	if tx.d == dialectPostgres && len(recs) >= analyzeAfterRows {
		// The statistics PostgreSQL plans by still count the table as it
		// was (empty, for a first check): reading these entries back by
		// agent in this transaction was planned as a scan of the table per
		// agent, 12 s for 10,000 entries. ANALYZE samples this
		// transaction's own rows too (acquire_sample_rows).
		if err := tx.Exec("ANALYZE source_entries").Error; err != nil {
			return fmt.Errorf("storing entries of source %s: %w", sourceID, err)
		}
	}
	return nil
}

// analyzeAfterRows is how many entries one write stores before it
// brings PostgreSQL's statistics of them up to date.
const analyzeAfterRows = 1000

// DeleteSource deletes a source and its entries; the agents it brought
// keep their history (their provenance rows end) and are withdrawn when
// nothing else vouches for them. It returns the ids of the agents it
// withdrew; ErrNotFound when there is no such source.
func (s *Store) DeleteSource(ctx context.Context, actor Actor, id string) ([]string, error) {
	if err := actor.validate(); err != nil {
		return nil, err
	}
	var withdrawn []string
	var ups []fieldUpdate
	var requeried []int64
	now := time.Now().UTC()
	err := s.transact(ctx, func(tx *txn) error {
		var recs []sourceRecord
		if err := tx.locked().Where("id = ?", id).Find(&recs).Error; err != nil {
			return fmt.Errorf("source %s: %w", id, err)
		}
		if len(recs) == 0 {
			return fmt.Errorf("source %s: %w", id, ErrNotFound)
		}
		var err error
		requeried, err = requery(tx, id, nil, now, func() error {
			if err := tx.Exec("DELETE FROM source_entries WHERE source_id = ?", id).Error; err != nil {
				return fmt.Errorf("deleting entries of source %s: %w", id, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := tx.Exec("DELETE FROM sources WHERE id = ?", id).Error; err != nil {
			return fmt.Errorf("deleting source %s: %w", id, err)
		}
		withdrawn, ups, err = endSourceProvenance(tx, actor, id, nil, now, "source "+recs[0].URL+" was deleted")
		if err != nil {
			return err
		}
		return writeAudit(tx.DB, actor, audit{action: ActionSourceDelete, targetKind: "source", targetID: id,
			detail: map[string]any{"url": recs[0].URL, "withdrawn": len(withdrawn)}})
	})
	if err != nil {
		return nil, err
	}
	s.afterProvenance(ctx, ups)
	s.afterRequery(ctx, requeried)
	return withdrawn, nil
}

// endSourceProvenance ends the source's provenance rows whose entry is
// not in keep, withdraws the agents nothing else vouches for (reason says
// why), and brings the provenance facet of the others up to date.
func endSourceProvenance(tx *txn, actor Actor, sourceID string, keep []string, at time.Time, reason string) ([]string, []fieldUpdate, error) {
	var recs []provenanceRecord
	if err := tx.Where("source_id = ? AND kind = ? AND ended_at IS NULL", sourceID, ProvenanceSource).Find(&recs).Error; err != nil {
		return nil, nil, fmt.Errorf("provenance of source %s: %w", sourceID, err)
	}
	kept := make(map[string]bool, len(keep))
	for _, k := range keep {
		kept[k] = true
	}
	var ended []provenanceRecord
	for _, r := range recs {
		if !kept[r.EntryID] {
			ended = append(ended, r)
		}
	}
	return endProvenanceRows(tx, actor, ended, at, sourceID, reason)
}

// endProvenanceRows ends the provenance rows ended (of source sourceID)
// and settles their agents: those nothing else vouches for are withdrawn
// (reason says why), the others' provenance facet is brought up to date.
func endProvenanceRows(tx *txn, actor Actor, ended []provenanceRecord, at time.Time, sourceID, reason string) ([]string, []fieldUpdate, error) {
	rowPKs := make([]int64, 0, len(ended))
	agents := map[int64]bool{}
	for _, r := range ended {
		rowPKs = append(rowPKs, r.PK)
		agents[r.AgentPK] = true
	}
	for chunk := range slices.Chunk(rowPKs, 500) {
		if err := tx.Exec("UPDATE agent_provenance SET ended_at = ? WHERE pk IN ?", at, chunk).Error; err != nil {
			return nil, nil, fmt.Errorf("ending provenance: %w", err)
		}
	}
	pks := make([]int64, 0, len(agents))
	for pk := range agents {
		pks = append(pks, pk)
	}
	slices.Sort(pks)
	return settleProvenance(tx, actor, pks, at, sourceID, reason)
}

// settleProvenance recomputes the provenance facet of agents pks after
// their provenance rows changed: an agent with no row left that vouches
// for it is withdrawn (unless already removed), the others get their
// facet rewritten under a new seq when it changed.
func settleProvenance(tx *txn, actor Actor, pks []int64, at time.Time, sourceID, reason string) ([]string, []fieldUpdate, error) {
	var withdrawn []string
	var ups []fieldUpdate
	// A withdrawal takes the change feed's lock: every row is locked
	// before the first.
	if err := lockAcross(tx, "pk", pks); err != nil {
		return nil, nil, err
	}
	for chunk := range slices.Chunk(pks, lockChunk) {
		var recs []agentRecord
		if err := tx.locked().Select("pk", "id", "card_url", "seq", "current_version", "provenance", "removed_at").
			Where("pk IN ?", chunk).Order(lockOrder).Find(&recs).Error; err != nil {
			return nil, nil, fmt.Errorf("agents of provenance: %w", err)
		}
		facets, err := provenanceFacetsOf(tx, chunk)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range recs {
			cur := facets[r.PK]
			if cur == "" && r.RemovedAt == nil {
				seq, err := withdraw(tx, actor, r, at, sourceID, reason)
				if err != nil {
					return nil, nil, err
				}
				withdrawn = append(withdrawn, r.ID)
				// No values: afterProvenance takes it out of the index.
				ups = append(ups, fieldUpdate{pk: r.PK, prev: r.Seq, seq: seq})
				continue
			}
			if cur == r.Provenance {
				continue
			}
			seqs, err := allocate(tx, "seq", 1)
			if err != nil {
				return nil, nil, err
			}
			if err := tx.Exec("UPDATE agents SET provenance = ?, seq = ?, updated_at = ? WHERE pk = ?", cur, seqs[0], at, r.PK).Error; err != nil {
				return nil, nil, fmt.Errorf("provenance of agent %s: %w", r.ID, err)
			}
			if r.RemovedAt == nil {
				ups = append(ups, fieldUpdate{pk: r.PK, prev: r.Seq, seq: seqs[0], values: map[string][]string{FieldProvenance: provenanceTokens(cur)}})
			}
		}
	}
	return withdrawn, ups, nil
}

// withdraw removes agent r on the registry's own account: nothing vouches
// for it any more. As a removal: out of search and the crawl, history
// kept, shown to admins with reason; a registration or a source entry
// naming it again restores it.
func withdraw(tx *txn, actor Actor, r agentRecord, at time.Time, sourceID, reason string) (int64, error) {
	seqs, err := allocate(tx, "seq", 1)
	if err != nil {
		return 0, err
	}
	if err := tx.Exec("UPDATE agents SET removed_at = ?, removed_by = ?, withdrawn_reason = ?, provenance = '', seq = ?, updated_at = ? WHERE pk = ?",
		at, "the registry", reason, seqs[0], at, r.PK).Error; err != nil {
		return 0, fmt.Errorf("withdrawing agent %s: %w", r.ID, err)
	}
	if err := tx.Exec("UPDATE crawl_state SET next_check_at = ?, lease_owner = '', lease_until = NULL WHERE agent_pk = ?",
		parkedCheck, r.PK).Error; err != nil {
		return 0, fmt.Errorf("withdrawing agent %s from the crawl: %w", r.ID, err)
	}
	// Mirrors following the feed learn it is gone as of a removal;
	// webhooks hear agent.withdrawn with the reason (an event of its own).
	if err := appendChanges(tx, []changeRow{{AgentPK: r.PK, AgentID: r.ID, CardURL: r.CardURL, Kind: ChangeRemoved,
		Version: r.CurrentVersion, At: at}}); err != nil {
		return 0, fmt.Errorf("recording withdrawal of agent %s: %w", r.ID, err)
	}
	if err := emitEvent(tx, NewEvent{Kind: EventWithdrawn, AgentPK: r.PK, AgentID: r.ID, CardURL: r.CardURL,
		Version: r.CurrentVersion, At: at, Detail: map[string]any{"reason": reason, "source_id": sourceID}}); err != nil {
		return 0, err
	}
	return seqs[0], writeAudit(tx.DB, actor, audit{action: ActionWithdraw, targetKind: TargetAgent, targetID: r.ID,
		detail: map[string]any{"card_url": r.CardURL, "reason": reason}})
}

// afterProvenance applies committed provenance changes to the index:
// withdrawn agents (an update without values) leave it, the others'
// facet changes in place.
func (s *Store) afterProvenance(ctx context.Context, ups []fieldUpdate) {
	var inPlace []fieldUpdate
	for _, u := range ups {
		if u.values == nil {
			// Withdrawn. Applied even before the index is built, as a
			// removal: the index keeps the seq.
			s.idx().Remove(uint32(u.pk), u.seq)
			continue
		}
		inPlace = append(inPlace, u)
	}
	if err := s.publishFields(ctx, inPlace); err != nil {
		s.log.Warn("refreshing search index after a provenance change", "err", err)
	}
}

// provenanceFacetsOf is the provenance column of agents pks as their rows
// not ended make it: sorted distinct tokens, space-separated.
func provenanceFacetsOf(tx *txn, pks []int64) (map[int64]string, error) {
	var rows []provenanceRecord
	if err := tx.Select("agent_pk", "kind", "relation").Where("agent_pk IN ? AND ended_at IS NULL", pks).
		Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("provenance of agents: %w", err)
	}
	tokens := map[int64][]string{}
	for _, r := range rows {
		t := r.token()
		if !slices.Contains(tokens[r.AgentPK], t) {
			tokens[r.AgentPK] = append(tokens[r.AgentPK], t)
		}
	}
	out := make(map[int64]string, len(tokens))
	for pk, ts := range tokens {
		slices.Sort(ts)
		out[pk] = strings.Join(ts, " ")
	}
	return out, nil
}

// addProvenanceFacets adds to the index documents of a card write the
// provenance facet of their agents' rows (recs, found by pk).
func addProvenanceFacets(docs []indexedDoc, recs []agentRecord) {
	of := make(map[int64]string, len(recs))
	for i := range recs {
		of[recs[i].PK] = recs[i].Provenance
	}
	for k := range docs {
		docs[k].facets = append(docs[k].facets, provenanceFacets(of[docs[k].pk])...)
	}
}

// provenanceTokens are the facet values of a provenance column.
func provenanceTokens(col string) []string { return strings.Fields(col) }

// provenanceFacets are the index facets of a provenance column.
func provenanceFacets(col string) []facetRecord {
	var fs []facetRecord
	for _, t := range strings.Fields(col) {
		fs = append(fs, facetRecord{Field: FieldProvenance, Value: t})
	}
	return fs
}

// recordProvenance notes, inside a card write's transaction, how each
// stored card came (ins[i].Via, else an import or a person's
// registration), and brings the provenance facet of the documents the
// write publishes up to date; agents whose facet changed without a new
// document get a new seq and an update in place after commit. A batch
// costs a few statements, not a few per card (a source's first check
// stores thousands).
func recordProvenance(tx *txn, actor Actor, ins []UpsertInput, results []UpsertResult, docs []indexedDoc) ([]fieldUpdate, error) {
	ids := make([]string, 0, len(results))
	for _, r := range results {
		ids = append(ids, r.Agent.ID)
	}
	type agentRow struct {
		pk, seq int64
		prov    string
	}
	byID := map[string]agentRow{}
	for chunk := range slices.Chunk(ids, 500) {
		var recs []agentRecord
		if err := tx.Select("pk", "id", "seq", "provenance").Where("id IN ?", chunk).Find(&recs).Error; err != nil {
			return nil, fmt.Errorf("agents of provenance: %w", err)
		}
		for _, r := range recs {
			byID[r.ID] = agentRow{r.PK, r.Seq, r.Provenance}
		}
	}
	now := time.Now().UTC()
	rows := make([]provenanceRecord, 0, len(ins))
	var pks []int64
	for i, in := range ins {
		a, ok := byID[results[i].Agent.ID]
		if !ok {
			continue
		}
		rows = append(rows, provenanceOf(actor, in, a.pk, now))
		pks = append(pks, a.pk)
	}
	if err := upsertProvenance(tx, rows, pks); err != nil {
		return nil, err
	}
	slices.Sort(pks)
	pks = slices.Compact(pks)
	facets, err := provenanceFacetsOf(tx, pks)
	if err != nil {
		return nil, err
	}
	inDocs := map[int64]int{}
	for i, d := range docs {
		inDocs[d.pk] = i
	}
	var ups []fieldUpdate
	quiet := map[string][]int64{} // new facet column → agents whose document this write publishes
	seen := map[int64]bool{}
	for _, a := range byID {
		if seen[a.pk] {
			continue
		}
		seen[a.pk] = true
		cur := facets[a.pk]
		if i, ok := inDocs[a.pk]; ok {
			docs[i].facets = append(slices.DeleteFunc(docs[i].facets, func(f facetRecord) bool { return f.Field == FieldProvenance }),
				provenanceFacets(cur)...)
			if cur != a.prov {
				quiet[cur] = append(quiet[cur], a.pk)
			}
			continue
		}
		if cur == a.prov {
			continue
		}
		seqs, err := allocate(tx, "seq", 1)
		if err != nil {
			return nil, err
		}
		if err := tx.Exec("UPDATE agents SET provenance = ?, seq = ?, updated_at = ? WHERE pk = ?", cur, seqs[0], now, a.pk).Error; err != nil {
			return nil, fmt.Errorf("provenance of agent %d: %w", a.pk, err)
		}
		ups = append(ups, fieldUpdate{pk: a.pk, prev: a.seq, seq: seqs[0], values: map[string][]string{FieldProvenance: provenanceTokens(cur)}})
	}
	// The write's own documents carry the new seq already: only the
	// column changes, a statement per distinct value.
	for val, list := range quiet {
		for chunk := range slices.Chunk(list, 500) {
			if err := tx.Exec("UPDATE agents SET provenance = ? WHERE pk IN ?", val, chunk).Error; err != nil {
				return nil, fmt.Errorf("provenance of agents: %w", err)
			}
		}
	}
	return ups, nil
}

// provenanceOf is the provenance row a card write by actor of in makes.
func provenanceOf(actor Actor, in UpsertInput, pk int64, now time.Time) provenanceRecord {
	r := provenanceRecord{AgentPK: pk, FirstAt: now, LastAt: now}
	switch v := in.Via; {
	case v != nil && v.Kind == ProvenanceSource:
		r.Kind, r.SourceID, r.SourceURL, r.ManifestURL, r.EntryID, r.Relation = ProvenanceSource, v.SourceID,
			cleanText(v.SourceURL), cleanText(v.ManifestURL), cleanText(v.EntryID), v.Relation
		r.OriginKey = v.SourceID + " " + r.EntryID
	case v != nil:
		r.Kind, r.ByName, r.OriginKey = v.Kind, removerName(actor), ""
	case in.Source == SourceImport:
		r.Kind = ProvenanceImported
	default:
		r.Kind, r.ByName, r.OriginKey = ProvenanceRegistered, removerName(actor), actor.String()
	}
	return r
}

// upsertProvenance inserts rows (agents pks), or for those whose origin
// named the agent before notes that it named it again (last_at, the
// manifest and relation as they are now, and a row that had ended
// starts again).
func upsertProvenance(tx *txn, rows []provenanceRecord, pks []int64) error {
	type key struct {
		pk        int64
		kind, key string
	}
	existing := map[key]int64{}
	for chunk := range slices.Chunk(pks, 500) {
		var recs []provenanceRecord
		if err := tx.Select("pk", "agent_pk", "kind", "origin_key").Where("agent_pk IN ?", chunk).Find(&recs).Error; err != nil {
			return fmt.Errorf("recording provenance: %w", err)
		}
		for _, r := range recs {
			existing[key{r.AgentPK, r.Kind, r.OriginKey}] = r.PK
		}
	}
	var fresh []provenanceRecord
	// Rows named again, grouped by what the update writes.
	type again struct{ manifest, relation string }
	renewed := map[again][]int64{}
	added := map[key]bool{}
	for _, r := range rows {
		k := key{r.AgentPK, r.Kind, r.OriginKey}
		if pk, ok := existing[k]; ok {
			a := again{r.ManifestURL, r.Relation}
			renewed[a] = append(renewed[a], pk)
			continue
		}
		if !added[k] {
			added[k] = true
			fresh = append(fresh, r)
		}
	}
	now := time.Now().UTC()
	for a, list := range renewed {
		for chunk := range slices.Chunk(list, 500) {
			if err := tx.Exec("UPDATE agent_provenance SET last_at = ?, ended_at = NULL, manifest_url = ?, relation = ? WHERE pk IN ?",
				now, a.manifest, a.relation, chunk).Error; err != nil {
				return fmt.Errorf("recording provenance: %w", err)
			}
		}
	}
	for chunk := range slices.Chunk(fresh, 200) {
		if err := tx.Create(&chunk).Error; err != nil {
			return fmt.Errorf("recording provenance: %w", err)
		}
	}
	return nil
}

// AdminRemoved tells which of the card URLs are agents an admin removed
// (not withdrawn by the registry): a source must not bring those back.
func (s *Store) AdminRemoved(ctx context.Context, cardURLs []string) (map[string]bool, error) {
	out := map[string]bool{}
	for chunk := range slices.Chunk(cardURLs, 500) {
		var recs []agentRecord
		if err := s.db.WithContext(ctx).Select("card_url").
			Where("card_url IN ? AND removed_at IS NOT NULL AND withdrawn_reason = ''", chunk).Find(&recs).Error; err != nil {
			return nil, fmt.Errorf("looking up removed agents: %w", err)
		}
		for _, r := range recs {
			out[r.CardURL] = true
		}
	}
	return out, nil
}

// SourceAgent is a listed agent a source's entry names now.
type SourceAgent struct{ ID, CardURL string }

// SourceAgents maps the identifiers of the entries of a source that name
// a listed agent now (provenance not ended) to the agent, for a check to
// tell an unchanged entry from a new one.
func (s *Store) SourceAgents(ctx context.Context, sourceID string) (map[string]SourceAgent, error) {
	type row struct {
		EntryID string
		ID      string
		CardURL string
	}
	var rows []row
	if err := s.db.WithContext(ctx).Raw(`SELECT p.entry_id, a.id, a.card_url FROM agent_provenance p JOIN agents a ON a.pk = p.agent_pk
		WHERE p.source_id = ? AND p.kind = ? AND p.ended_at IS NULL AND a.removed_at IS NULL`, sourceID, ProvenanceSource).
		Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("agents of source %s: %w", sourceID, err)
	}
	out := make(map[string]SourceAgent, len(rows))
	for _, r := range rows {
		out[r.EntryID] = SourceAgent{ID: r.ID, CardURL: r.CardURL}
	}
	return out, nil
}
