package catalog

import (
	"context"
	"fmt"
	"time"
)

// syncOverlap re-reads rows changed shortly before the last sync: a
// transaction that stamped updated_at before the previous sync ran but
// committed after it is still picked up, as long as it took less than this
// (and replicas' clocks agree that closely).
const syncOverlap = time.Minute

// Sync brings the in-memory search index up to date with what other
// writers (replicas sharing a PostgreSQL database) changed: agents written,
// removed or restored (all of which change the row's seq and updated_at),
// and agents deleted before removal kept their rows (tombstones). Writes made through this Store are indexed when they
// commit; Sync reads only the (pk, seq) of recent rows to find the ones
// the index lacks, and loads just those. It does nothing before the index
// is built.
func (s *Store) Sync(ctx context.Context) error {
	// Collections another replica changed are read again on next use.
	s.restricted.Store(nil)
	idx := s.idx()
	if !idx.State().Ready {
		return nil
	}
	s.syncMu.Lock()
	since := s.syncedAt.Add(-syncOverlap).UTC()
	s.syncMu.Unlock()
	start := time.Now()

	stale, removed, err := s.staleDocs(ctx, since)
	if err != nil {
		return fmt.Errorf("syncing search index: %w", err)
	}
	for _, r := range removed {
		idx.Remove(uint32(r.pk), r.seq)
	}
	if err := s.refreshDocs(ctx, stale); err != nil {
		return fmt.Errorf("syncing search index: %w", err)
	}
	rows, err := s.queryRows(ctx, "SELECT pk, seq FROM agent_tombstones WHERE deleted_at >= ?", since)
	if err != nil {
		return fmt.Errorf("syncing search index: reading tombstones: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var pk, seq int64
		if err := rows.Scan(&pk, &seq); err != nil {
			return fmt.Errorf("syncing search index: reading tombstones: %w", err)
		}
		idx.Remove(uint32(pk), seq)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("syncing search index: reading tombstones: %w", err)
	}
	s.syncMu.Lock()
	s.syncedAt = start
	s.syncMu.Unlock()
	return nil
}

// staleDocs returns the pks of agents changed since the given time whose
// stored seq is newer than the index's: other writers' changes, not ours.
// Agents an admin removed come apart, with the seq of their removal.
func (s *Store) staleDocs(ctx context.Context, since time.Time) (stale []int64, removed []pkSeq, err error) {
	rows, err := s.queryRows(ctx,
		"SELECT pk, seq, CASE WHEN removed_at IS NULL THEN 0 ELSE 1 END FROM agents WHERE updated_at >= ?", since)
	if err != nil {
		return nil, nil, fmt.Errorf("reading changed agents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var pk, seq, isRemoved int64
		if err := rows.Scan(&pk, &seq, &isRemoved); err != nil {
			return nil, nil, fmt.Errorf("reading changed agents: %w", err)
		}
		if have, ok := s.idx().Seq(uint32(pk)); ok && have >= seq {
			continue
		}
		if isRemoved == 1 {
			removed = append(removed, pkSeq{pk, seq})
		} else {
			stale = append(stale, pk)
		}
	}
	return stale, removed, rows.Err()
}

type pkSeq struct{ pk, seq int64 }
