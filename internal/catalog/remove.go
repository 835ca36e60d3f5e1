package catalog

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// RemoveAgent takes an agent out of the catalog's listings: it leaves
// search (this replica's index at once, the others' on their next Sync,
// which sees the row's new seq), the crawl and the verification runner,
// and the change feed records a "removed" entry. Everything stored about
// it stays (versions, reports, fetch log, runs, audit rows), readable by
// admins; registering its card URL again restores it (see storeRun). It
// returns ErrNotFound for an unknown or already removed agent.
func (s *Store) RemoveAgent(ctx context.Context, actor Actor, id string) error {
	if err := actor.validate(); err != nil {
		return err
	}
	var pk, seq int64
	err := s.transact(ctx, func(tx *txn) error {
		var recs []agentRecord
		if err := tx.locked().Select("pk", "card_url", "current_version").Where("id = ? AND removed_at IS NULL", id).
			Find(&recs).Error; err != nil {
			return fmt.Errorf("looking up agent %s: %w", id, err)
		}
		if len(recs) == 0 {
			return ErrNotFound
		}
		pk = recs[0].PK
		seqs, err := allocate(tx, "seq", 1)
		if err != nil {
			return err
		}
		seq = seqs[0]
		now := time.Now().UTC()
		// A new seq and updated_at are what other replicas' Sync reads.
		if err := tx.Exec("UPDATE agents SET removed_at = ?, removed_by = ?, seq = ?, updated_at = ? WHERE pk = ?",
			now, removerName(actor), seq, now, pk).Error; err != nil {
			return fmt.Errorf("removing agent %s: %w", id, err)
		}
		// The schedule is parked past any claim, so the crawl's due index
		// never walks removed agents (a restore makes it due again); a
		// lease held by a check under way is dropped, and the check's
		// outcome skipped (RecordFetches ignores removed agents).
		if err := tx.Exec("UPDATE crawl_state SET next_check_at = ?, lease_owner = '', lease_until = NULL WHERE agent_pk = ?",
			parkedCheck, pk).Error; err != nil {
			return fmt.Errorf("removing agent %s from the crawl: %w", id, err)
		}
		// Mirrors following the change feed learn of the removal as they
		// learn of a card that answered 410 Gone.
		if err := appendChanges(tx, []changeRow{{AgentPK: pk, AgentID: id, CardURL: recs[0].CardURL, Kind: ChangeRemoved,
			Version: recs[0].CurrentVersion, At: now}}); err != nil {
			return fmt.Errorf("recording removal of agent %s: %w", id, err)
		}
		return writeAudit(tx.DB, actor, audit{action: ActionRemove, targetKind: TargetAgent, targetID: id,
			detail: map[string]any{"card_url": recs[0].CardURL}})
	})
	if err != nil {
		return err
	}
	// Applied even before the index is built: the index keeps the seq, so
	// a build that read the agent before the removal cannot bring it back.
	s.idx().Remove(uint32(pk), seq)
	return nil
}

// locked is tx for a read of agents rows the transaction then writes: on
// PostgreSQL it locks them (FOR UPDATE), so a removal and a card write of
// one agent happen one after the other and each sees the other's result
// (a card stored by a check that read the agent before its removal would
// otherwise list it again). SQLite's write transactions are serialized
// already.
//
// A read that locks several agents rows orders them by lockOrder: on
// PostgreSQL rows are locked in the order the read returns them, and two
// transactions that lock overlapping rows in different orders can wait on
// each other in a cycle (deadlock detected, SQLSTATE 40P01). Without an
// ORDER BY the order is the plan's (index key or physical order, which
// updates change). The change feed's advisory lock comes after the rows
// (appendChanges).
func (tx *txn) locked() *gorm.DB {
	if tx.d == dialectPostgres {
		return tx.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	return tx.DB
}

// lockOrder is the order in which writers lock agents rows (see locked).
const lockOrder = "pk"

// lockChunk is how many keys one locking read of agents rows names.
const lockChunk = 500

// lockAcross locks, on PostgreSQL, the agents rows whose column col holds
// one of keys, in lockOrder, when keys take more than one locking read:
// each read is ordered, but a later chunk may hold a lower pk than an
// earlier one. The pks are read first, unlocked, then locked in order, so
// the chunked reads that follow find their rows held already. A row whose
// key changes between the two reads is locked by the chunked read, out of
// order: keys change only by re-keying (rare, and done alone).
func lockAcross[K any](tx *txn, col string, keys []K) error {
	if tx.d != dialectPostgres || len(keys) <= lockChunk {
		return nil
	}
	var pks []int64
	for chunk := range slices.Chunk(keys, lockChunk) {
		var got []int64
		if err := tx.Table("agents").Where(col+" IN ?", chunk).Pluck("pk", &got).Error; err != nil {
			return fmt.Errorf("finding agents to lock: %w", err)
		}
		pks = append(pks, got...)
	}
	slices.Sort(pks)
	for chunk := range slices.Chunk(slices.Compact(pks), lockChunk) {
		var got []int64
		if err := tx.locked().Table("agents").Where("pk IN ?", chunk).Order(lockOrder).Pluck("pk", &got).Error; err != nil {
			return fmt.Errorf("locking agents: %w", err)
		}
	}
	return nil
}

// parkedCheck is the next check of a removed agent: never.
var parkedCheck = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// removerName is how the banner of a removed agent names actor.
func removerName(a Actor) string {
	if r := a.Request; r != nil {
		switch {
		case strings.TrimSpace(r.DisplayName) != "":
			return r.DisplayName
		case strings.TrimSpace(r.Email) != "":
			return r.Email
		}
	}
	return a.Name
}

// AgentRemoval tells whether an admin removed agent id: nil when it is
// listed, ErrNotFound when no agent has that id. Handlers call it to
// answer 404 to callers who may not see removed agents.
func (s *Store) AgentRemoval(ctx context.Context, id string) (*Removal, error) {
	var recs []agentRecord
	if err := s.db.WithContext(ctx).Select("removed_at", "removed_by", "withdrawn_reason").Where("id = ?", id).Limit(1).
		Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("agent %s: %w", id, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("agent %s: %w", id, ErrNotFound)
	}
	if recs[0].RemovedAt == nil {
		return nil, nil
	}
	return &Removal{At: recs[0].RemovedAt.UTC(), By: recs[0].RemovedBy, Withdrawn: recs[0].WithdrawnReason}, nil
}

// maxRemovedPage bounds one page of removed agents.
const maxRemovedPage = 500

// RemovedAgents lists removed agents, most recently removed first: limit
// of them (at most 500) after cursor, "" for the first page. A cursor
// this method did not return is ErrInvalidQuery.
func (s *Store) RemovedAgents(ctx context.Context, cursor string, limit int) (RemovedPage, error) {
	if limit <= 0 || limit > maxRemovedPage {
		limit = maxRemovedPage
	}
	q := s.db.WithContext(ctx).Model(&agentRecord{}).
		Select("pk", "id", "card_url", "name", "current_version", "removed_at", "removed_by", "withdrawn_reason").
		Where("removed_at IS NOT NULL")
	if cursor != "" {
		at, pk, err := decodeRemovedCursor(cursor)
		if err != nil {
			return RemovedPage{}, err
		}
		q = q.Where("removed_at < ? OR (removed_at = ? AND pk < ?)", at, at, pk)
	}
	var recs []agentRecord
	if err := q.Order("removed_at DESC, pk DESC").Limit(limit + 1).Find(&recs).Error; err != nil {
		return RemovedPage{}, fmt.Errorf("listing removed agents: %w", err)
	}
	var page RemovedPage
	for i, r := range recs {
		if i == limit {
			last := recs[limit-1]
			page.Next = strconv.FormatInt(last.RemovedAt.UnixMicro(), 10) + "." + strconv.FormatInt(last.PK, 10)
			break
		}
		page.Agents = append(page.Agents, RemovedAgent{ID: r.ID, CardURL: r.CardURL, Name: r.Name,
			CurrentVersion: r.CurrentVersion, Removal: Removal{At: r.RemovedAt.UTC(), By: r.RemovedBy, Withdrawn: r.WithdrawnReason}})
	}
	return page, nil
}

// decodeRemovedCursor reads "<removed_at in µs>.<pk>".
func decodeRemovedCursor(c string) (time.Time, int64, error) {
	us, pkText, ok := strings.Cut(c, ".")
	at, err1 := strconv.ParseInt(us, 10, 64)
	pk, err2 := strconv.ParseInt(pkText, 10, 64)
	if !ok || err1 != nil || err2 != nil || pk <= 0 {
		return time.Time{}, 0, fmt.Errorf("%w: removed agents cursor %q", ErrInvalidQuery, c)
	}
	return time.UnixMicro(at).UTC(), pk, nil
}

// restoreRemoved brings back the removed agents among recs (registered
// again by a person or an import, never by the crawler): their row is
// listed again with a new seq and due for a check, the change feed says
// "restored", and the audit log records the restore.
func restoreRemoved(tx *txn, actor Actor, recs []agentRecord, now time.Time) error {
	var pks []int64
	var changes []changeRow
	var audits []audit
	for _, r := range recs {
		if r.RemovedAt == nil {
			continue
		}
		pks = append(pks, r.PK)
		changes = append(changes, changeRow{AgentPK: r.PK, AgentID: r.ID, CardURL: r.CardURL, Kind: ChangeRestored,
			Version: r.CurrentVersion, At: now})
		audits = append(audits, audit{action: ActionRestore, targetKind: TargetAgent, targetID: r.ID,
			detail: map[string]any{"card_url": r.CardURL, "removed_at": r.RemovedAt.UTC(), "removed_by": r.RemovedBy}})
	}
	if len(pks) == 0 {
		return nil
	}
	if err := tx.Exec("UPDATE agents SET removed_at = NULL, removed_by = '', withdrawn_reason = '' WHERE pk IN ?", pks).Error; err != nil {
		return fmt.Errorf("restoring removed agents: %w", err)
	}
	// Due at once; a registration's own check then schedules the next by
	// the card's cache headers.
	if err := tx.Exec("UPDATE crawl_state SET next_check_at = ? WHERE agent_pk IN ?", now, pks).Error; err != nil {
		return fmt.Errorf("restoring removed agents to the crawl: %w", err)
	}
	if err := appendChanges(tx, changes); err != nil {
		return fmt.Errorf("restoring removed agents: %w", err)
	}
	return writeAudit(tx.DB, actor, audits...)
}
