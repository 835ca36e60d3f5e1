package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"
)

// Collections group agents (issue 13, part 2). A collection without groups
// is visible to everyone who may browse; one with groups only to callers
// holding one of them (Scope.Groups). An agent in no collection is
// visible to everyone; an agent only in restricted collections to the
// members of any of their groups; an agent in any unrestricted collection
// to everyone. What an agent's memberships give it is stored on its row
// (agents.collections, agents.visibility) and in its index document, and
// recomputed whenever a membership or a collection's groups change.

// Audited collection actions.
const (
	ActionCollectionSave   = "collection.save"
	ActionCollectionAdd    = "collection.add_agent"
	ActionCollectionRemove = "collection.remove_agent"
	TargetCollection       = "collection"
)

// ErrInvalidCollection: a collection's name, description or groups are not
// acceptable; the wrapped message says why.
var ErrInvalidCollection = errors.New("catalog: invalid collection")

// Bounds of a collection's fields.
const (
	maxCollectionName        = 100
	maxCollectionDescription = 1000
	maxCollectionGroups      = 50
	maxGroupLen              = 200
)

// Collection is a named group of agents.
type Collection struct {
	Name        string
	Description string
	// Groups restrict who sees the collection; none means everyone.
	Groups []string
	// Agents counts the members the reading scope sees.
	Agents    int
	CreatedAt time.Time
}

type collectionRecord struct {
	PK          int64 `gorm:"column:pk;primaryKey"`
	Name        string
	NameKey     string
	Description string
	GroupsJSON  string `gorm:"column:groups_json"`
	CreatedAt   time.Time
}

func (collectionRecord) TableName() string { return "collections" }

func collectionKey(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

func (c *Collection) validate() error {
	c.Name = strings.TrimSpace(c.Name)
	c.Description = strings.TrimSpace(c.Description)
	n := utf8.RuneCountInString(c.Name)
	switch {
	case n == 0 || n > maxCollectionName || !utf8.ValidString(c.Name):
		return fmt.Errorf("%w: name must be 1 to %d characters", ErrInvalidCollection, maxCollectionName)
	case strings.ContainsFunc(c.Name, func(r rune) bool { return unicode.IsControl(r) || r == '/' }):
		return fmt.Errorf("%w: name must not hold control characters or '/'", ErrInvalidCollection)
	case utf8.RuneCountInString(c.Description) > maxCollectionDescription || !utf8.ValidString(c.Description):
		return fmt.Errorf("%w: description must be at most %d characters", ErrInvalidCollection, maxCollectionDescription)
	case len(c.Groups) > maxCollectionGroups:
		return fmt.Errorf("%w: at most %d groups", ErrInvalidCollection, maxCollectionGroups)
	}
	groups := make([]string, 0, len(c.Groups))
	for _, g := range c.Groups {
		g = strings.TrimSpace(g)
		if g == "" || len(g) > maxGroupLen || !utf8.ValidString(g) || strings.ContainsFunc(g, unicode.IsControl) {
			return fmt.Errorf("%w: each group must be 1 to %d bytes of text", ErrInvalidCollection, maxGroupLen)
		}
		if !slices.ContainsFunc(groups, func(h string) bool { return strings.EqualFold(g, h) }) {
			groups = append(groups, g)
		}
	}
	c.Groups = groups
	c.Description = cleanText(c.Description)
	return nil
}

func collectionOf(r collectionRecord) (Collection, error) {
	groups, err := decodeStrings(r.GroupsJSON)
	if err != nil {
		return Collection{}, fmt.Errorf("groups of collection %s: %w", r.Name, err)
	}
	return Collection{Name: r.Name, Description: r.Description, Groups: nonNil(groups), CreatedAt: r.CreatedAt.UTC()}, nil
}

// SaveCollection creates a collection, or updates the description and
// groups of the one with that name (names match ignoring case). Changing
// the groups re-marks every member, in the index too. It reports whether
// the collection was created.
func (s *Store) SaveCollection(ctx context.Context, actor Actor, c Collection) (Collection, bool, error) {
	if err := actor.validate(); err != nil {
		return Collection{}, false, err
	}
	if err := c.validate(); err != nil {
		return Collection{}, false, err
	}
	groups, _ := json.Marshal(nonNil(c.Groups)) // strings always marshal
	var (
		created bool
		ups     []fieldUpdate
		out     Collection
	)
	err := s.transact(ctx, func(tx *txn) error {
		var recs []collectionRecord
		if err := tx.Where("name_key = ?", collectionKey(c.Name)).Find(&recs).Error; err != nil {
			return fmt.Errorf("looking up collection %s: %w", c.Name, err)
		}
		now := time.Now().UTC()
		var rec collectionRecord
		if len(recs) == 0 {
			created = true
			rec = collectionRecord{Name: c.Name, NameKey: collectionKey(c.Name), Description: c.Description,
				GroupsJSON: string(groups), CreatedAt: now}
			if err := tx.Create(&rec).Error; err != nil {
				return fmt.Errorf("creating collection %s: %w", c.Name, translate(err))
			}
		} else {
			rec = recs[0]
			regroup := rec.GroupsJSON != string(groups)
			rec.Description, rec.GroupsJSON = c.Description, string(groups)
			if err := tx.Exec("UPDATE collections SET description = ?, groups_json = ? WHERE pk = ?",
				rec.Description, rec.GroupsJSON, rec.PK).Error; err != nil {
				return fmt.Errorf("updating collection %s: %w", c.Name, err)
			}
			if regroup {
				var pks []int64
				if err := tx.Raw("SELECT agent_pk FROM collection_members WHERE collection_pk = ? ORDER BY agent_pk",
					rec.PK).Scan(&pks).Error; err != nil {
					return fmt.Errorf("members of collection %s: %w", c.Name, err)
				}
				var err error
				if ups, err = remark(tx, pks, now); err != nil {
					return err
				}
			}
		}
		var err error
		if out, err = collectionOf(rec); err != nil {
			return err
		}
		return writeAudit(tx.DB, actor, audit{action: ActionCollectionSave, targetKind: TargetCollection, targetID: rec.Name,
			detail: map[string]any{"description": rec.Description, "groups": out.Groups, "created": created}})
	})
	s.restricted.Store(nil)
	if err != nil {
		return Collection{}, false, err
	}
	if err := s.publishFields(ctx, ups); err != nil {
		return Collection{}, false, fmt.Errorf("indexing members of collection %s: %w", c.Name, err)
	}
	return out, created, nil
}

// Collections lists the collections the scope sees, by name, each with
// the number of its members the scope sees.
func (s *Store) Collections(ctx context.Context, sc Scope) ([]Collection, error) {
	var recs []collectionRecord
	if err := s.db.WithContext(ctx).Order("name_key").Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("listing collections: %w", err)
	}
	cond, args := sc.visibleSQL()
	if cond != "" {
		cond = " AND " + cond
	}
	out := make([]Collection, 0, len(recs))
	for _, r := range recs {
		c, err := collectionOf(r)
		if err != nil {
			return nil, err
		}
		if !sc.seesGroups(c.Groups) {
			continue
		}
		var n int64
		if err := s.db.WithContext(ctx).Raw("SELECT COUNT(*) FROM collection_members m JOIN agents a ON a.pk = m.agent_pk "+
			"WHERE m.collection_pk = ?"+cond, append([]any{r.PK}, args...)...).Scan(&n).Error; err != nil {
			return nil, fmt.Errorf("counting members of collection %s: %w", r.Name, err)
		}
		c.Agents = int(n)
		out = append(out, c)
	}
	return out, nil
}

// hiddenCollections are the keys of the collections a scope does not see.
type hiddenCollections map[string]bool

func (h hiddenCollections) has(name string) bool { return h[collectionKey(name)] }

func (s *Store) hiddenCollections(ctx context.Context, sc Scope) (hiddenCollections, error) {
	restricted, err := s.restrictedCollections(ctx)
	if err != nil {
		return nil, err
	}
	var h hiddenCollections
	for key, groups := range restricted {
		if !sc.seesGroups(groups) {
			if h == nil {
				h = hiddenCollections{}
			}
			h[key] = true
		}
	}
	return h, nil
}

// restrictedCollections maps the key of each collection with groups to
// its groups. Searches need it to hide the names of collections from
// callers outside them, so it is kept in memory: read on first use,
// dropped by this Store's collection writes and by every Sync, so a
// change made on another replica shows within one sync interval, as the
// index's changes do.
func (s *Store) restrictedCollections(ctx context.Context) (map[string][]string, error) {
	if m := s.restricted.Load(); m != nil {
		return *m, nil
	}
	var recs []collectionRecord
	if err := s.db.WithContext(ctx).Select("name_key", "groups_json").Where("groups_json <> ?", "[]").
		Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("reading collections: %w", err)
	}
	m := make(map[string][]string, len(recs))
	for _, r := range recs {
		groups, err := decodeStrings(r.GroupsJSON)
		if err != nil {
			return nil, fmt.Errorf("groups of collection %s: %w", r.NameKey, err)
		}
		m[r.NameKey] = groups
	}
	s.restricted.CompareAndSwap(nil, &m)
	return m, nil
}

// AddToCollection puts agents in a collection, in one transaction with
// one audit row per agent added (nothing changes for one there already).
func (s *Store) AddToCollection(ctx context.Context, actor Actor, name string, agentIDs ...string) error {
	return s.setMembers(ctx, actor, name, agentIDs, true)
}

// RemoveFromCollection takes agents out of a collection (nothing changes
// for one not in it).
func (s *Store) RemoveFromCollection(ctx context.Context, actor Actor, name string, agentIDs ...string) error {
	return s.setMembers(ctx, actor, name, agentIDs, false)
}

// setMembers adds or removes memberships and re-marks the agents, with
// the audit rows in the same transaction. An unknown collection or agent
// is ErrNotFound, and nothing changes.
func (s *Store) setMembers(ctx context.Context, actor Actor, name string, agentIDs []string, in bool) error {
	if err := actor.validate(); err != nil {
		return err
	}
	var ups []fieldUpdate
	err := s.transact(ctx, func(tx *txn) error {
		var cols []collectionRecord
		if err := tx.Where("name_key = ?", collectionKey(name)).Find(&cols).Error; err != nil {
			return fmt.Errorf("looking up collection %s: %w", name, err)
		}
		if len(cols) == 0 {
			return fmt.Errorf("collection %s: %w", name, ErrNotFound)
		}
		now := time.Now().UTC()
		action := ActionCollectionRemove
		if in {
			action = ActionCollectionAdd
		}
		var (
			changed []int64
			audits  []audit
		)
		for _, id := range agentIDs {
			var pks []int64
			if err := tx.Raw("SELECT pk FROM agents WHERE id = ?", id).Scan(&pks).Error; err != nil {
				return fmt.Errorf("looking up agent %s: %w", id, err)
			}
			if len(pks) == 0 {
				return fmt.Errorf("agent %s: %w", id, ErrNotFound)
			}
			var res *gorm.DB
			if in {
				res = tx.Exec(`INSERT INTO collection_members (collection_pk, agent_pk, added_at) VALUES (?, ?, ?)
					ON CONFLICT DO NOTHING`, cols[0].PK, pks[0], now)
			} else {
				res = tx.Exec("DELETE FROM collection_members WHERE collection_pk = ? AND agent_pk = ?", cols[0].PK, pks[0])
			}
			if res.Error != nil {
				return fmt.Errorf("changing members of collection %s: %w", name, res.Error)
			}
			if res.RowsAffected > 0 {
				changed = append(changed, pks[0])
				audits = append(audits, audit{action: action, targetKind: TargetCollection, targetID: cols[0].Name,
					detail: map[string]any{"agent_id": id}})
			}
		}
		var err error
		if ups, err = remark(tx, changed, now); err != nil {
			return err
		}
		return writeAudit(tx.DB, actor, audits...)
	})
	if err != nil {
		return err
	}
	return s.publishFields(ctx, ups)
}

// remark recomputes the placement (collections, visibility) of agents
// from their memberships, stores it with a new seq so that other replicas'
// Sync picks it up, adds an "updated" change-feed entry (callers who now
// see the agent learn of it), and returns the index changes.
func remark(tx *txn, pks []int64, now time.Time) ([]fieldUpdate, error) {
	ups := make([]fieldUpdate, 0, len(pks))
	changes := make([]changeRow, 0, len(pks))
	for _, pk := range pks {
		var rec agentRecord
		if err := tx.Select("pk", "id", "card_url", "current_version", "seq", "listing", "collections", "visibility").Where("pk = ?", pk).Take(&rec).Error; err != nil {
			return nil, fmt.Errorf("reading agent %d: %w", pk, translate(err))
		}
		pl, err := placementOf(tx, pk, rec.Listing)
		if err != nil {
			return nil, err
		}
		seqs, err := allocate(tx, "seq", 1)
		if err != nil {
			return nil, err
		}
		if err := writePlacement(tx, pk, pl, seqs[0], &now); err != nil {
			return nil, err
		}
		ups = append(ups, fieldUpdate{pk: pk, prev: rec.Seq, seq: seqs[0], values: pl.values()})
		changes = append(changes, changeRow{AgentPK: pk, AgentID: rec.ID, CardURL: rec.CardURL, Kind: ChangeUpdated,
			Version: rec.CurrentVersion, At: now})
		cj, _ := json.Marshal(pl.collections) // strings always marshal
		vj, _ := json.Marshal(pl.visibility)
		if string(cj) != rec.Collections || string(vj) != rec.Visibility {
			event, err := NewEvent{Kind: EventListing, AgentPK: pk, AgentID: rec.ID, CardURL: rec.CardURL,
				Version: rec.CurrentVersion, At: now, Detail: map[string]any{"listing": rec.Listing,
					"collections": pl.collections, "visibility": pl.visibility}}.row()
			if err != nil {
				return nil, err
			}
			changes = append(changes, event)
		}
	}
	if err := appendChanges(tx, changes); err != nil {
		return nil, fmt.Errorf("recording re-marked agents: %w", err)
	}
	return ups, nil
}

// placementOf computes an agent's placement (collections, visibility)
// from its memberships.
func placementOf(tx *txn, pk int64, listing string) (placement, error) {
	var cols []collectionRecord
	if err := tx.Raw(`SELECT c.name, c.groups_json FROM collections c JOIN collection_members m ON m.collection_pk = c.pk
		WHERE m.agent_pk = ? ORDER BY c.name_key`, pk).Scan(&cols).Error; err != nil {
		return placement{}, fmt.Errorf("collections of agent %d: %w", pk, err)
	}
	pl := placement{listing: listing, collections: []string{}}
	public := len(cols) == 0
	var groups []string
	for _, c := range cols {
		pl.collections = append(pl.collections, c.Name)
		gs, err := decodeStrings(c.GroupsJSON)
		if err != nil {
			return placement{}, fmt.Errorf("groups of collection %s: %w", c.Name, err)
		}
		if len(gs) == 0 {
			public = true
		}
		for _, g := range gs {
			groups = append(groups, groupToken(g))
		}
	}
	if public {
		pl.visibility = []string{visibilityPublic}
	} else {
		slices.Sort(groups)
		pl.visibility = slices.Compact(groups)
	}
	return pl, nil
}

// writePlacement stores a placement on the agents row with seq, and moves
// updated_at to *updated when given (a restore keeps the exported one).
func writePlacement(tx *txn, pk int64, pl placement, seq int64, updated *time.Time) error {
	cj, _ := json.Marshal(pl.collections) // strings always marshal
	vj, _ := json.Marshal(pl.visibility)
	q, args := "UPDATE agents SET collections = ?, visibility = ?, seq = ?", []any{string(cj), string(vj), seq}
	if updated != nil {
		q, args = q+", updated_at = ?", append(args, *updated)
	}
	if err := tx.Exec(q+" WHERE pk = ?", append(args, pk)...).Error; err != nil {
		return fmt.Errorf("re-marking agent %d: %w", pk, err)
	}
	return nil
}

// visibleCollections keeps the names of the collections the scope sees.
func visibleCollections(db *gorm.DB, sc Scope, names []string) ([]string, error) {
	var recs []collectionRecord
	if err := db.Select("name", "groups_json").Where("name IN ?", names).Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("reading collections: %w", err)
	}
	out := make([]string, 0, len(names))
	for _, r := range recs {
		groups, err := decodeStrings(r.GroupsJSON)
		if err != nil {
			return nil, fmt.Errorf("groups of collection %s: %w", r.Name, err)
		}
		if sc.seesGroups(groups) {
			out = append(out, r.Name)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(collectionKey(a), collectionKey(b)) })
	return out, nil
}
