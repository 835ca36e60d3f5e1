package catalog

import (
	"context"
	"fmt"
	"time"
)

// DeleteAgent removes an agent and everything stored about it, and leaves
// a tombstone so that other replicas' search indexes drop it on their next
// Sync, and a "removed" entry in the change feed. It returns ErrNotFound
// when no agent has that id. The audit log keeps the agent's id and card
// URL.
func (s *Store) DeleteAgent(ctx context.Context, actor Actor, id string) error {
	if err := actor.validate(); err != nil {
		return err
	}
	var pk, seq int64
	err := s.transact(ctx, func(tx *txn) error {
		var recs []agentRecord
		if err := tx.Select("pk", "card_url", "current_version").Where("id = ?", id).Find(&recs).Error; err != nil {
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
		if err := tx.Exec("DELETE FROM agents WHERE pk = ?", pk).Error; err != nil {
			return fmt.Errorf("deleting agent %s: %w", id, err)
		}
		now := time.Now().UTC()
		if err := tx.Exec("INSERT INTO agent_tombstones (pk, agent_id, seq, deleted_at) VALUES (?, ?, ?, ?)",
			pk, id, seq, now).Error; err != nil {
			return fmt.Errorf("recording deletion of agent %s: %w", id, err)
		}
		// Mirrors following the change feed learn of the removal as they
		// learn of a card that answered 410 Gone.
		if err := appendChanges(tx, []changeRow{{AgentPK: pk, AgentID: id, CardURL: recs[0].CardURL, Kind: ChangeRemoved,
			Version: recs[0].CurrentVersion, At: now}}); err != nil {
			return fmt.Errorf("recording deletion of agent %s: %w", id, err)
		}
		return writeAudit(tx.DB, actor, audit{action: ActionRemove, targetKind: TargetAgent, targetID: id,
			detail: map[string]any{"card_url": recs[0].CardURL}})
	})
	if err != nil {
		return err
	}
	// Applied even before the index is built: the tombstone keeps a build
	// that read the agent before the delete from bringing it back.
	s.idx().Remove(uint32(pk), seq)
	return nil
}
