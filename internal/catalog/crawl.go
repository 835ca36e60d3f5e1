package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// ClaimDue leases up to limit agents whose next check is due (not paused,
// lease free or expired) to owner for lease, soonest due first. On
// PostgreSQL, FOR UPDATE SKIP LOCKED lets replicas claim concurrently
// without waiting on or double-claiming each other's rows.
func (s *Store) ClaimDue(ctx context.Context, now time.Time, limit int, owner string, lease time.Duration) ([]CrawlTarget, error) {
	if limit <= 0 {
		return nil, nil
	}
	now = now.UTC()
	until := now.Add(lease)
	var pks []int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := `UPDATE crawl_state SET lease_owner = ?, lease_until = ? WHERE agent_pk IN (
			SELECT agent_pk FROM crawl_state
			WHERE paused = ? AND next_check_at <= ? AND (lease_until IS NULL OR lease_until < ?)
			ORDER BY next_check_at LIMIT ?) RETURNING agent_pk`
		if s.dialect == dialectPostgres {
			q = `UPDATE crawl_state c SET lease_owner = ?, lease_until = ? FROM (
				SELECT agent_pk FROM crawl_state
				WHERE paused = ? AND next_check_at <= ? AND (lease_until IS NULL OR lease_until < ?)
				ORDER BY next_check_at LIMIT ? FOR UPDATE SKIP LOCKED) d
				WHERE c.agent_pk = d.agent_pk RETURNING c.agent_pk`
		}
		return tx.Raw(q, owner, until, false, now, now, limit).Scan(&pks).Error
	})
	if err != nil {
		return nil, fmt.Errorf("claiming due agents: %w", err)
	}
	if len(pks) == 0 {
		return nil, nil
	}
	targets, err := s.crawlTargets(ctx, "a.pk IN ?", pks)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(targets, func(a, b CrawlTarget) int { return a.NextCheckAt.Compare(b.NextCheckAt) })
	return targets, nil
}

// CrawlTarget returns the crawl state of one agent, for a check on demand.
func (s *Store) CrawlTarget(ctx context.Context, agentID string) (CrawlTarget, error) {
	ts, err := s.crawlTargets(ctx, "a.id = ?", agentID)
	if err != nil {
		return CrawlTarget{}, err
	}
	if len(ts) == 0 {
		return CrawlTarget{}, fmt.Errorf("agent %s: %w", agentID, ErrNotFound)
	}
	return ts[0], nil
}

func (s *Store) crawlTargets(ctx context.Context, cond string, arg any) ([]CrawlTarget, error) {
	rows, err := s.db.WithContext(ctx).Raw(`SELECT a.id, a.card_url, a.health, c.etag, c.last_modified,
		c.consecutive_failures, c.next_check_at, c.last_success_at, c.served_url, c.last_check_at
		FROM crawl_state c JOIN agents a ON a.pk = c.agent_pk WHERE `+cond, arg).Rows()
	if err != nil {
		return nil, fmt.Errorf("loading crawl targets: %w", err)
	}
	defer rows.Close()
	var out []CrawlTarget
	for rows.Next() {
		var (
			t         CrawlTarget
			lastOK    sql.NullTime
			lastCheck sql.NullTime
			servedURL string
		)
		if err := rows.Scan(&t.AgentID, &t.CardURL, &t.Health, &t.ETag, &t.LastModified,
			&t.ConsecutiveFailures, &t.NextCheckAt, &lastOK, &servedURL, &lastCheck); err != nil {
			return nil, fmt.Errorf("loading crawl targets: %w", err)
		}
		t.NextCheckAt = t.NextCheckAt.UTC()
		if lastOK.Valid {
			t.LastSuccessAt = lastOK.Time.UTC()
		}
		if lastCheck.Valid {
			t.LastCheckAt = lastCheck.Time.UTC()
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RecordFetches stores the outcomes of checks in one transaction: new card
// versions, crawl state and schedule, the fetch log, health changes and the
// change feed. It releases the outcomes' leases. Outcomes for agents that
// no longer exist are skipped.
func (s *Store) RecordFetches(ctx context.Context, outs []FetchOutcome) ([]UpsertResult, error) {
	if len(outs) == 0 {
		return nil, nil
	}
	results := make([]UpsertResult, len(outs))
	var (
		docs       []indexedDoc
		healthPKs  []int64
		knownAgent []bool
	)
	store := func(tx *gorm.DB) error {
		docs, healthPKs = docs[:0], healthPKs[:0]
		ids := make([]string, len(outs))
		for i, o := range outs {
			ids[i] = o.AgentID
		}
		var recs []agentRecord
		if err := tx.Where("id IN ?", ids).Find(&recs).Error; err != nil {
			return fmt.Errorf("looking up agents: %w", err)
		}
		byID := make(map[string]agentRecord, len(recs))
		for _, r := range recs {
			byID[r.ID] = r
		}
		knownAgent = make([]bool, len(outs))
		now := time.Now().UTC()
		var logRows, changeRows [][]any
		for i, o := range outs {
			rec, ok := byID[o.AgentID]
			if !ok {
				continue
			}
			knownAgent[i] = true
			at := o.At.UTC()
			if o.At.IsZero() {
				at = now
			}
			health := o.Health
			if o.Removed {
				health = HealthRemoved
			}
			if health != "" && health != rec.Health {
				seqs, err := s.allocate(tx, "seq", 1)
				if err != nil {
					return err
				}
				if err := tx.Exec("UPDATE agents SET health = ?, seq = ?, updated_at = ? WHERE pk = ?",
					health, seqs[0], now, rec.PK).Error; err != nil {
					return fmt.Errorf("updating health of %s: %w", rec.ID, err)
				}
				if err := tx.Exec("UPDATE agent_facets SET value = ? WHERE agent_pk = ? AND field = ?",
					health, rec.PK, FieldHealth).Error; err != nil {
					return fmt.Errorf("updating health of %s: %w", rec.ID, err)
				}
				if health == HealthRemoved {
					changeRows = append(changeRows, []any{rec.PK, rec.ID, rec.CardURL, ChangeRemoved, rec.CurrentVersion, now})
				}
				healthPKs = append(healthPKs, rec.PK)
				byID[o.AgentID] = rec
			}
			success := o.Class == ""
			fields := map[string]any{
				"next_check_at":        o.NextCheckAt.UTC(),
				"consecutive_failures": o.ConsecutiveFailures,
				"last_check_at":        at,
				"lease_owner":          "",
				"lease_until":          nil,
			}
			if o.URL != "" {
				fields["served_url"] = o.URL
				fields["legacy_path"] = o.LegacyPath
			}
			if success {
				fields["last_success_at"] = at
				if o.ETag != "" || o.LastModified != "" || !o.NotModified {
					// A 304 without validators keeps the stored ones; a 200
					// replaces them, even with none.
					fields["etag"], fields["last_modified"] = cleanText(o.ETag), cleanText(o.LastModified)
				}
			} else {
				fields["last_error_class"] = o.Class
				fields["last_error_message"] = cleanText(truncateRunes(o.Message, 1000))
				fields["last_error_status"] = o.Status
				fields["last_error_at"] = at
			}
			if err := tx.Table("crawl_state").Where("agent_pk = ?", rec.PK).Updates(fields).Error; err != nil {
				return fmt.Errorf("updating crawl state of %s: %w", rec.ID, err)
			}
			logRows = append(logRows, []any{rec.PK, at, success, o.NotModified, o.Status,
				o.Latency.Milliseconds(), o.Class, cleanText(truncateRunes(o.Message, 1000))})
		}
		if err := insertRows(tx, "fetch_log", "agent_pk, at, ok, not_modified, status, latency_ms, class, message", logRows); err != nil {
			return fmt.Errorf("writing fetch_log: %w", err)
		}
		if err := s.appendChanges(tx, changeRows); err != nil {
			return err
		}
		// New card bytes go through the same path as registrations; the
		// health written above is already in the rows it reads.
		var ins []UpsertInput
		var at []int
		for i, o := range outs {
			if o.Card != nil && knownAgent[i] {
				rec := byID[o.AgentID]
				ins = append(ins, UpsertInput{CardURL: rec.CardURL, Card: o.Card, Source: SourceCrawl, ReceivedAt: o.At})
				at = append(at, i)
			}
		}
		for i := range ins {
			if err := validateInput(&ins[i]); err != nil {
				return err
			}
		}
		res := make([]UpsertResult, len(ins))
		d, err := s.upsertAll(tx, ins, res)
		if err != nil {
			return err
		}
		docs = append(docs, d...)
		for j, i := range at {
			results[i] = res[j]
		}
		return nil
	}
	if err := s.db.WithContext(ctx).Transaction(store); err != nil {
		return nil, fmt.Errorf("recording fetches: %w", err)
	}
	s.publish(docs)
	// A health change alters one facet; reload those agents' docs.
	if err := s.refreshDocs(ctx, healthPKs); err != nil {
		s.log.Warn("refreshing search index after health change", "err", err)
	}
	return results, nil
}

// Changes lists the change feed after seq since, oldest first.
func (s *Store) Changes(ctx context.Context, since int64, limit int) ([]Change, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	rows, err := s.db.WithContext(ctx).Raw(`SELECT seq, kind, agent_id, card_url, version, at FROM changes
		WHERE seq > ? ORDER BY seq LIMIT ?`, since, limit).Rows()
	if err != nil {
		return nil, fmt.Errorf("reading change feed: %w", err)
	}
	defer rows.Close()
	out := []Change{}
	for rows.Next() {
		var c Change
		if err := rows.Scan(&c.Seq, &c.Kind, &c.AgentID, &c.CardURL, &c.Version, &c.At); err != nil {
			return nil, fmt.Errorf("reading change feed: %w", err)
		}
		c.At = c.At.UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}

// AgentHealth reports an agent's crawl state and its uptime over the last
// 24 hours and 7 days (shares of successful checks), as of now.
func (s *Store) AgentHealth(ctx context.Context, agentID string, now time.Time) (HealthReport, error) {
	var (
		r                                    HealthReport
		pk                                   int64
		lastCheck, lastOK, lastErrAt, nextAt sql.NullTime
		errClass, errMsg                     string
		errStatus                            int
	)
	err := s.db.WithContext(ctx).Raw(`SELECT a.pk, a.health, c.paused, c.consecutive_failures, c.next_check_at,
		c.last_check_at, c.last_success_at, c.last_error_class, c.last_error_message, c.last_error_status, c.last_error_at
		FROM agents a JOIN crawl_state c ON c.agent_pk = a.pk WHERE a.id = ?`, agentID).Row().
		Scan(&pk, &r.State, &r.Paused, &r.ConsecutiveFailures, &nextAt, &lastCheck, &lastOK, &errClass, &errMsg, &errStatus, &lastErrAt)
	if err != nil {
		return HealthReport{}, fmt.Errorf("health of agent %s: %w", agentID, translateRow(err))
	}
	ptr := func(t sql.NullTime) *time.Time {
		if !t.Valid {
			return nil
		}
		u := t.Time.UTC()
		return &u
	}
	r.LastCheckAt, r.LastSuccessAt = ptr(lastCheck), ptr(lastOK)
	if !r.Paused {
		r.NextCheckAt = ptr(nextAt)
	}
	if errClass != "" && lastErrAt.Valid {
		r.LastError = &FetchError{Class: errClass, Message: errMsg, Status: errStatus, At: lastErrAt.Time.UTC()}
	}
	for _, w := range []struct {
		d   time.Duration
		out **float64
	}{{24 * time.Hour, &r.Uptime24h}, {7 * 24 * time.Hour, &r.Uptime7d}} {
		var total, ok sql.NullInt64
		if err := s.db.WithContext(ctx).Raw(`SELECT COUNT(*), SUM(CASE WHEN ok THEN 1 ELSE 0 END) FROM fetch_log
			WHERE agent_pk = ? AND at >= ?`, pk, now.UTC().Add(-w.d)).Row().Scan(&total, &ok); err != nil {
			return HealthReport{}, fmt.Errorf("uptime of agent %s: %w", agentID, err)
		}
		if total.Int64 > 0 {
			v := float64(ok.Int64) / float64(total.Int64)
			*w.out = &v
		}
	}
	return r, nil
}

// SetPaused stops or resumes crawling one agent.
func (s *Store) SetPaused(ctx context.Context, agentID string, paused bool) error {
	pk, err := s.pkOf(ctx, agentID)
	if err != nil {
		return err
	}
	if err := s.db.WithContext(ctx).Exec("UPDATE crawl_state SET paused = ? WHERE agent_pk = ?", paused, pk).Error; err != nil {
		return fmt.Errorf("pausing agent %s: %w", agentID, err)
	}
	return nil
}

// PruneFetchLog deletes fetch outcomes older than before and says how many.
func (s *Store) PruneFetchLog(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Exec("DELETE FROM fetch_log WHERE at < ?", before.UTC())
	if res.Error != nil {
		return 0, fmt.Errorf("pruning fetch log: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// inList builds "col IN (?, ?, …)" and its arguments, for queries that go
// to database/sql directly (gorm expands slices itself).
func inList(col string, vals []int64) (string, []any) {
	args := make([]any, len(vals))
	ph := make([]byte, 0, 3*len(vals))
	for i, v := range vals {
		args[i] = v
		if i > 0 {
			ph = append(ph, ", "...)
		}
		ph = append(ph, '?')
	}
	return col + " IN (" + string(ph) + ")", args
}

// ReleaseLeases frees the leases of owners whose name starts with prefix,
// except owner keep: a crawler restarting on the same host takes back the
// agents its killed predecessor had claimed instead of waiting for the
// leases to expire. At worst a live crawler of the same host sharing the
// database fetches one of those agents twice.
func (s *Store) ReleaseLeases(ctx context.Context, prefix, keep string) (int64, error) {
	if prefix == "" {
		return 0, fmt.Errorf("%w: empty lease owner prefix", ErrInvalidQuery)
	}
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix)
	res := s.db.WithContext(ctx).Exec(`UPDATE crawl_state SET lease_owner = '', lease_until = NULL
		WHERE lease_owner LIKE ? ESCAPE '\' AND lease_owner <> ?`, esc+"%", keep)
	if res.Error != nil {
		return 0, fmt.Errorf("releasing leases: %w", res.Error)
	}
	return res.RowsAffected, nil
}
