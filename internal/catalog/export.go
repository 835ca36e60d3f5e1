package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/a2aregistry/registry/internal/card"
)

// ExportedAgent is one agent as an export carries it: what the catalog
// cannot derive again. Derived rows (skills, facets, lint findings, the
// summary) are rebuilt from the raw versions on import; verification
// reports are redone by the verification runner; the fetch log and the
// change feed stay with the catalog they describe.
type ExportedAgent struct {
	ID, CardURL string
	Health      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	FetchedAt   time.Time
	// Versions are every stored version, oldest first, bytes verbatim.
	Versions []ExportedVersion
	Crawl    ExportedCrawl
	// Annotations are the operator's; nil when the agent has none.
	Annotations *Annotations
	// Removed is set for an agent an admin removed; an import keeps it
	// removed (and restorable).
	Removed *Removal
	// Listing is the agent's place in the listing lifecycle, as it was.
	// Nil in exports made before the lifecycle existed: the agent is then
	// approved at its last version, as migration 00011 approved every
	// agent it found.
	Listing *Listing
	// Provenance is how the agent came, ended rows included, oldest
	// first. Nil in exports made before provenance travelled: the import
	// then credits the agent as its versions' sources say.
	Provenance []ExportedProvenance
}

// ExportedVersion is one stored version of a card.
type ExportedVersion struct {
	Number     int
	Source     string
	ReceivedAt time.Time
	Raw        []byte
}

// ExportedCrawl is an agent's crawl schedule and last outcome; leases are
// not exported (they belong to the replicas of the old catalog).
type ExportedCrawl struct {
	NextCheckAt         time.Time
	Paused              bool
	ETag, LastModified  string
	ServedURL           string
	LegacyPath          bool
	ConsecutiveFailures int
	LastCheckAt         *time.Time
	LastSuccessAt       *time.Time
	LastErrorClass      string
	LastErrorMessage    string
	LastErrorStatus     int
	LastErrorAt         *time.Time
}

// exportPage is how many agents one export query reads.
const exportPage = 200

type exportRow struct {
	PK                  int64
	ID                  string
	CardURL             string
	Health              string
	CreatedAt           time.Time
	UpdatedAt           time.Time
	FetchedAt           time.Time
	NextCheckAt         *time.Time
	Paused              *bool
	ETag                *string
	LastModified        *string
	ServedURL           *string
	LegacyPath          *bool
	ConsecutiveFailures *int
	LastCheckAt         *time.Time
	LastSuccessAt       *time.Time
	LastErrorClass      *string
	LastErrorMessage    *string
	LastErrorStatus     *int
	LastErrorAt         *time.Time
	RemovedAt           *time.Time
	RemovedBy           string
	WithdrawnReason     string
	Listing             string
	ListingReason       string
	ListingReplacement  string
	ListingBy           string
	ListingAt           *time.Time
	ApprovedVersion     int
}

type exportVersionRow struct {
	AgentPK    int64
	Number     int
	Source     string
	ReceivedAt time.Time
	Raw        []byte
}

// ExportAgents calls fn with every agent in creation order. Each page is
// read in its own transaction: an export of a live catalog is consistent
// per agent, not across agents (use the database's own backup for a
// snapshot).
func (s *Store) ExportAgents(ctx context.Context, fn func(ExportedAgent) error) error {
	var after int64
	for {
		var rows []exportRow
		err := s.db.WithContext(ctx).Raw(`SELECT a.pk, a.id, a.card_url, a.health, a.created_at, a.updated_at, a.fetched_at,
			c.next_check_at, c.paused, c.etag, c.last_modified, c.served_url, c.legacy_path, c.consecutive_failures,
			c.last_check_at, c.last_success_at, c.last_error_class, c.last_error_message, c.last_error_status, c.last_error_at,
			a.removed_at, a.removed_by, a.withdrawn_reason, a.listing, a.listing_reason, a.listing_replacement, a.listing_by, a.listing_at,
			a.approved_version
			FROM agents a LEFT JOIN crawl_state c ON c.agent_pk = a.pk
			WHERE a.pk > ? ORDER BY a.pk LIMIT ?`, after, exportPage).Scan(&rows).Error
		if err != nil {
			return fmt.Errorf("exporting agents: %w", err)
		}
		if len(rows) == 0 {
			return nil
		}
		pks := make([]int64, len(rows))
		for i, r := range rows {
			pks[i] = r.PK
		}
		var vrows []exportVersionRow
		if err := s.db.WithContext(ctx).Raw(`SELECT agent_pk, number, source, received_at, raw FROM card_versions
			WHERE agent_pk IN ? ORDER BY agent_pk, number`, pks).Scan(&vrows).Error; err != nil {
			return fmt.Errorf("exporting card versions: %w", err)
		}
		versions := make(map[int64][]ExportedVersion, len(rows))
		for _, v := range vrows {
			versions[v.AgentPK] = append(versions[v.AgentPK], ExportedVersion{Number: v.Number, Source: v.Source,
				ReceivedAt: exportTime(v.ReceivedAt), Raw: v.Raw})
		}
		urls := make([]string, len(rows))
		for i, r := range rows {
			urls[i] = r.CardURL
		}
		anns, err := annotationsOf(s.db.WithContext(ctx), urls)
		if err != nil {
			return fmt.Errorf("exporting annotations: %w", err)
		}
		provs, err := exportProvenance(s.db.WithContext(ctx), pks)
		if err != nil {
			return err
		}
		for _, r := range rows {
			a := exportedAgent(r, versions[r.PK])
			a.Provenance = provs[r.PK]
			if ann, ok := anns[r.CardURL]; ok {
				ann.ChangedAt = exportTime(ann.ChangedAt)
				a.Annotations = &ann
			}
			if err := fn(a); err != nil {
				return err
			}
		}
		after = rows[len(rows)-1].PK
	}
}

func exportedAgent(r exportRow, versions []ExportedVersion) ExportedAgent {
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	a := ExportedAgent{ID: r.ID, CardURL: r.CardURL, Health: r.Health, CreatedAt: exportTime(r.CreatedAt),
		UpdatedAt: exportTime(r.UpdatedAt), FetchedAt: exportTime(r.FetchedAt), Versions: versions}
	if r.RemovedAt != nil {
		a.Removed = &Removal{At: exportTime(*r.RemovedAt), By: r.RemovedBy, Withdrawn: r.WithdrawnReason}
	}
	a.Listing = &Listing{State: r.Listing, Reason: r.ListingReason, Replacement: r.ListingReplacement, By: r.ListingBy,
		At: ExportTimePtr(r.ListingAt), ApprovedVersion: r.ApprovedVersion}
	c := &a.Crawl
	if r.NextCheckAt != nil {
		c.NextCheckAt = exportTime(*r.NextCheckAt)
	}
	c.Paused = r.Paused != nil && *r.Paused
	c.ETag, c.LastModified, c.ServedURL = deref(r.ETag), deref(r.LastModified), deref(r.ServedURL)
	c.LegacyPath = r.LegacyPath != nil && *r.LegacyPath
	if r.ConsecutiveFailures != nil {
		c.ConsecutiveFailures = *r.ConsecutiveFailures
	}
	if r.LastErrorStatus != nil {
		c.LastErrorStatus = *r.LastErrorStatus
	}
	c.LastCheckAt, c.LastSuccessAt, c.LastErrorAt = ExportTimePtr(r.LastCheckAt), ExportTimePtr(r.LastSuccessAt), ExportTimePtr(r.LastErrorAt)
	c.LastErrorClass, c.LastErrorMessage = deref(r.LastErrorClass), deref(r.LastErrorMessage)
	return a
}

// exportTime is a time as exports carry it: UTC, in microseconds, which
// both databases keep (SQLite would keep nanoseconds, PostgreSQL does
// not), so an export of a copy equals the export of the original.
func exportTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// ExportTimePtr is exportTime of an optional time.
func ExportTimePtr(t *time.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	u := exportTime(*t)
	return &u
}

// ErrNotEmpty is returned by imports into a catalog that holds agents or
// trusted keys already: an export restores a catalog, it does not merge.
var ErrNotEmpty = errors.New("catalog: not empty")

// CheckEmpty returns ErrNotEmpty unless the catalog has no agent and no
// trusted key.
func (s *Store) CheckEmpty(ctx context.Context) error {
	var n int64
	if err := s.db.WithContext(ctx).Raw(`SELECT (SELECT COUNT(*) FROM agents) + (SELECT COUNT(*) FROM trusted_keys)`).
		Scan(&n).Error; err != nil {
		return fmt.Errorf("checking the catalog is empty: %w", err)
	}
	if n > 0 {
		return ErrNotEmpty
	}
	return nil
}

// ImportAgent restores one exported agent: its versions are stored in
// order through Upsert (so every derived row is rebuilt from the raw
// bytes, as the running registry would), then its id, timestamps, health,
// removal, listing, crawl state and annotations are set to the exported
// ones (whatever the Store's listing policy made of the versions), and
// the agent is indexed again if this Store's search index is built (a
// removed one is taken out of it).
func (s *Store) ImportAgent(ctx context.Context, actor Actor, a ExportedAgent, lim card.Limits) error {
	if len(a.Versions) == 0 {
		return fmt.Errorf("%w: agent %s has no versions", ErrInvalidQuery, a.ID)
	}
	var pk int64
	for i, v := range a.Versions {
		if v.Number != i+1 {
			return fmt.Errorf("%w: agent %s: version %d where %d was expected", ErrInvalidQuery, a.ID, v.Number, i+1)
		}
		// Exported versions were stored: read as stored ones are.
		c, err := card.Parse(v.Raw, StoredCardLimits(lim, v.Raw))
		if err != nil {
			return fmt.Errorf("agent %s version %d: %w", a.ID, v.Number, err)
		}
		// Without a listing policy: a restore is no registration and no
		// card change (nothing is sent back to review); the exported
		// listing is set below.
		rs, err := s.upsertBatch(ctx, actor, []UpsertInput{{CardURL: a.CardURL, Card: c, Source: v.Source, ReceivedAt: v.ReceivedAt,
			NextCheckAt: a.Crawl.NextCheckAt, Paused: a.Crawl.Paused}}, ListingPolicy{})
		if err != nil {
			return fmt.Errorf("agent %s version %d: %w", a.ID, v.Number, err)
		}
		res := rs[0]
		if !res.NewVersion || (i == 0) != res.Created {
			// Two consecutive versions with the same bytes, or an agent
			// the catalog had already: not an export of one catalog.
			return fmt.Errorf("%w: agent %s version %d did not become a version of its own", ErrConflict, a.ID, v.Number)
		}
		if i == 0 {
			if err := s.db.WithContext(ctx).Raw("SELECT pk FROM agents WHERE id = ?", res.Agent.ID).Scan(&pk).Error; err != nil {
				return fmt.Errorf("agent %s: %w", a.ID, err)
			}
		}
	}
	listing, err := importedListing(a)
	if err != nil {
		return err
	}
	var ann Annotations
	if a.Annotations != nil {
		var err error
		if ann, err = NormalizeAnnotations(*a.Annotations); err != nil {
			return fmt.Errorf("agent %s: %w", a.ID, err)
		}
	}
	c := a.Crawl
	var seq int64
	err = s.transact(ctx, func(tx *txn) error {
		if err := writeAnnotations(tx.DB, a.CardURL, ann); err != nil {
			return err
		}
		// A new seq, so that a search index built meanwhile takes the
		// restored state over the one Upsert published.
		seqs, err := allocate(tx, "seq", 1)
		if err != nil {
			return err
		}
		seq = seqs[0]
		var removedAt *time.Time
		var removedBy, withdrawn string
		if a.Removed != nil {
			at := a.Removed.At.UTC()
			removedAt, removedBy, withdrawn = &at, a.Removed.By, a.Removed.Withdrawn
		}
		if err := tx.Exec(`UPDATE agents SET id = ?, created_at = ?, updated_at = ?, fetched_at = ?, health = ?, seq = ?,
			removed_at = ?, removed_by = ?, withdrawn_reason = ?, listing = ?, listing_reason = ?, listing_replacement = ?, listing_by = ?,
			listing_at = ?, approved_version = ? WHERE pk = ?`,
			a.ID, a.CreatedAt.UTC(), a.UpdatedAt.UTC(), a.FetchedAt.UTC(), a.Health, seq, removedAt, removedBy, withdrawn,
			listing.State, listing.Reason, listing.Replacement, listing.By, utcPtr(listing.At), listing.ApprovedVersion, pk).Error; err != nil {
			return err
		}
		if a.Provenance != nil {
			if err := restoreProvenance(tx, pk, a.Provenance, a.Removed != nil); err != nil {
				return fmt.Errorf("agent %s: %w", a.ID, err)
			}
		}
		if err := tx.Exec(`UPDATE changes SET agent_id = ? WHERE agent_pk = ?`, a.ID, pk).Error; err != nil {
			return err
		}
		return tx.Exec(`UPDATE crawl_state SET next_check_at = ?, paused = ?, etag = ?, last_modified = ?, served_url = ?,
			legacy_path = ?, consecutive_failures = ?, last_check_at = ?, last_success_at = ?, last_error_class = ?,
			last_error_message = ?, last_error_status = ?, last_error_at = ?, lease_owner = '', lease_until = NULL
			WHERE agent_pk = ?`, c.NextCheckAt.UTC(), c.Paused, c.ETag, c.LastModified, c.ServedURL, c.LegacyPath,
			c.ConsecutiveFailures, utcPtr(c.LastCheckAt), utcPtr(c.LastSuccessAt), c.LastErrorClass, c.LastErrorMessage,
			c.LastErrorStatus, utcPtr(c.LastErrorAt), pk).Error
	})
	if err != nil {
		return fmt.Errorf("restoring agent %s: %w", a.ID, err)
	}
	if a.Removed != nil {
		s.idx().Remove(uint32(pk), seq)
		return nil
	}
	if err := s.refreshDocs(ctx, []int64{pk}); err != nil {
		return fmt.Errorf("indexing restored agent %s: %w", a.ID, err)
	}
	return nil
}

// importedListing is the listing an imported agent gets: the exported
// one, checked, or for an export without one approved at its last
// version.
func importedListing(a ExportedAgent) (Listing, error) {
	if a.Listing == nil {
		return Listing{State: ListingApproved, ApprovedVersion: len(a.Versions)}, nil
	}
	l := *a.Listing
	switch {
	case !slices.Contains(ListingStates, l.State):
		return Listing{}, fmt.Errorf("%w: agent %s: listing state %q", ErrInvalidQuery, a.ID, l.State)
	case l.ApprovedVersion < 0 || l.ApprovedVersion > len(a.Versions):
		return Listing{}, fmt.Errorf("%w: agent %s: approved version %d of %d", ErrInvalidQuery, a.ID, l.ApprovedVersion, len(a.Versions))
	case utf8.RuneCountInString(l.Reason) > maxListingReason || !utf8.ValidString(l.Reason):
		return Listing{}, fmt.Errorf("%w: agent %s: listing reason", ErrInvalidQuery, a.ID)
	}
	return l, nil
}

// ExportedCollection is a collection as an export carries it, with its
// members by agent id.
type ExportedCollection struct {
	Name        string
	Description string
	Groups      []string
	CreatedAt   time.Time
	// Members are in agent id order.
	Members []ExportedMember
}

// ExportedMember is one agent of a collection and when it was put there.
type ExportedMember struct {
	AgentID string
	AddedAt time.Time
}

// ExportCollections calls fn with every collection, by name, members
// included (removed agents too: they are exported, and restorable). Both
// orders are byte orders, sorted here: the databases' collations differ.
func (s *Store) ExportCollections(ctx context.Context, fn func(ExportedCollection) error) error {
	var recs []collectionRecord
	if err := s.db.WithContext(ctx).Find(&recs).Error; err != nil {
		return fmt.Errorf("exporting collections: %w", err)
	}
	slices.SortFunc(recs, func(a, b collectionRecord) int { return strings.Compare(a.NameKey, b.NameKey) })
	for _, r := range recs {
		c, err := collectionOf(r)
		if err != nil {
			return fmt.Errorf("exporting collections: %w", err)
		}
		e := ExportedCollection{Name: c.Name, Description: c.Description, Groups: c.Groups, CreatedAt: exportTime(c.CreatedAt),
			Members: []ExportedMember{}}
		var members []struct {
			ID      string
			AddedAt time.Time
		}
		if err := s.db.WithContext(ctx).Raw(`SELECT a.id, m.added_at FROM collection_members m JOIN agents a ON a.pk = m.agent_pk
			WHERE m.collection_pk = ?`, r.PK).Scan(&members).Error; err != nil {
			return fmt.Errorf("exporting members of collection %s: %w", r.Name, err)
		}
		for _, m := range members {
			e.Members = append(e.Members, ExportedMember{AgentID: m.ID, AddedAt: exportTime(m.AddedAt)})
		}
		slices.SortFunc(e.Members, func(a, b ExportedMember) int { return strings.Compare(a.AgentID, b.AgentID) })
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// RestoreCollection stores an exported collection as it was (creation
// and membership times included) after its agents were imported, and
// re-marks the members' visibility; their updated_at stays the exported
// one. A collection of that name already there is ErrConflict, a member
// not imported ErrNotFound.
func (s *Store) RestoreCollection(ctx context.Context, actor Actor, e ExportedCollection) error {
	if err := actor.validate(); err != nil {
		return err
	}
	c := Collection{Name: e.Name, Description: e.Description, Groups: e.Groups}
	if err := c.validate(); err != nil {
		return err
	}
	groups, _ := json.Marshal(nonNil(c.Groups)) // strings always marshal
	var ups []fieldUpdate
	err := s.transact(ctx, func(tx *txn) error {
		var n int64
		if err := tx.Raw("SELECT COUNT(*) FROM collections WHERE name_key = ?", collectionKey(c.Name)).Scan(&n).Error; err != nil {
			return fmt.Errorf("looking up collection %s: %w", c.Name, err)
		}
		if n > 0 {
			return fmt.Errorf("collection %s: %w", c.Name, ErrConflict)
		}
		rec := collectionRecord{Name: c.Name, NameKey: collectionKey(c.Name), Description: c.Description,
			GroupsJSON: string(groups), CreatedAt: e.CreatedAt.UTC()}
		if err := tx.Create(&rec).Error; err != nil {
			return fmt.Errorf("creating collection %s: %w", c.Name, translate(err))
		}
		pks := make([]int64, 0, len(e.Members))
		for _, m := range e.Members {
			var found []int64
			if err := tx.Raw("SELECT pk FROM agents WHERE id = ?", m.AgentID).Scan(&found).Error; err != nil {
				return fmt.Errorf("looking up agent %s: %w", m.AgentID, err)
			}
			if len(found) == 0 {
				return fmt.Errorf("member %s of collection %s: %w", m.AgentID, c.Name, ErrNotFound)
			}
			if err := tx.Exec(`INSERT INTO collection_members (collection_pk, agent_pk, added_at) VALUES (?, ?, ?)
				ON CONFLICT DO NOTHING`, rec.PK, found[0], m.AddedAt.UTC()).Error; err != nil {
				return fmt.Errorf("restoring members of collection %s: %w", c.Name, err)
			}
			pks = append(pks, found[0])
		}
		for _, pk := range pks {
			var rec agentRecord
			if err := tx.Select("pk", "seq", "listing").Where("pk = ?", pk).Take(&rec).Error; err != nil {
				return fmt.Errorf("reading agent %d: %w", pk, translate(err))
			}
			pl, err := placementOf(tx, pk, rec.Listing)
			if err != nil {
				return err
			}
			seqs, err := allocate(tx, "seq", 1)
			if err != nil {
				return err
			}
			if err := writePlacement(tx, pk, pl, seqs[0], nil); err != nil {
				return err
			}
			ups = append(ups, fieldUpdate{pk: pk, prev: rec.Seq, seq: seqs[0], values: pl.values()})
		}
		return writeAudit(tx.DB, actor, audit{action: ActionCollectionSave, targetKind: TargetCollection, targetID: c.Name,
			detail: map[string]any{"description": c.Description, "groups": nonNil(c.Groups), "restored": true, "members": len(pks)}})
	})
	s.restricted.Store(nil)
	if err != nil {
		return fmt.Errorf("restoring collection %s: %w", e.Name, err)
	}
	return s.publishFields(ctx, ups)
}

// RestoreTrustedKey stores an exported trusted key as it was: id,
// creation and revocation times included.
func (s *Store) RestoreTrustedKey(ctx context.Context, k TrustedKey) error {
	origins, err := json.Marshal(k.Origins)
	if err != nil {
		return err
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("INSERT INTO trusted_keys ("+trustedKeyColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			k.ID, k.KID, string(k.JWK), k.Thumbprint, string(origins), utcPtr(k.NotAfter), utcPtr(k.RevokedAt),
			k.CreatedAt.UTC()).Error; err != nil {
			return err
		}
		return trustChanged(tx, k.KID)
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		err = fmt.Errorf("%w: trusted key %s", ErrConflict, k.ID)
	}
	if err != nil {
		return fmt.Errorf("restoring trusted key %s: %w", k.ID, err)
	}
	return nil
}
