package catalog

import (
	"context"
	"fmt"
	"time"
)

// syncOverlap re-reads rows changed shortly before the last sync: a
// transaction that stamped updated_at before the previous sync ran but
// committed after it is still picked up, as long as it took less than this.
const syncOverlap = time.Minute

// Sync brings the in-memory search index up to date with rows that other
// writers (other replicas sharing a PostgreSQL database) changed. Writes made
// through this Store are indexed at once and need no Sync. It does nothing
// before the index is first built.
func (s *Store) Sync(ctx context.Context) error {
	idx := s.loadedIndex()
	if idx == nil {
		return nil
	}
	s.syncMu.Lock()
	since := s.syncedAt.Add(-syncOverlap)
	s.syncMu.Unlock()
	start := time.Now()

	err := s.loadDocs(ctx, "updated_at >= ?", []any{since.UTC()}, idx.set)
	if err != nil {
		return fmt.Errorf("syncing search index: %w", err)
	}
	s.syncMu.Lock()
	s.syncedAt = start
	s.syncMu.Unlock()
	return nil
}

// RunSync calls Sync every interval until ctx ends, logging failures.
func (s *Store) RunSync(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.Sync(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("search index sync failed", "err", err)
			}
		}
	}
}
