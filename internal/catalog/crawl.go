package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// notRemoved keeps the crawl_state rows of agents an admin removed out of
// the crawl. Removal parks their next check past any claim (parkedCheck),
// so the due index does not reach them; this is the rule itself, for a
// row written otherwise (a lookup by pk per due row).
const notRemoved = "NOT EXISTS (SELECT 1 FROM agents r WHERE r.pk = crawl_state.agent_pk AND r.removed_at IS NOT NULL)"

// ClaimDue leases up to limit agents whose next check is due (not paused,
// not removed, lease free or expired) to owner for lease, soonest due first. On
// PostgreSQL, FOR UPDATE SKIP LOCKED lets replicas claim concurrently
// without waiting on or double-claiming each other's rows.
func (s *Store) ClaimDue(ctx context.Context, now time.Time, limit int, owner string, lease time.Duration) ([]CrawlTarget, error) {
	if limit <= 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx = s.stmtCtx(ctx)
	now = now.UTC()
	until := now.Add(lease)
	var pks []int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := `UPDATE crawl_state SET lease_owner = ?, lease_until = ? WHERE agent_pk IN (
			SELECT agent_pk FROM crawl_state
			WHERE paused = ? AND next_check_at <= ? AND (lease_until IS NULL OR lease_until < ?) AND ` + notRemoved + `
			ORDER BY next_check_at LIMIT ?) RETURNING agent_pk`
		if s.dialect == dialectPostgres {
			q = `UPDATE crawl_state c SET lease_owner = ?, lease_until = ? FROM (
				SELECT agent_pk FROM crawl_state
				WHERE paused = ? AND next_check_at <= ? AND (lease_until IS NULL OR lease_until < ?) AND ` + notRemoved + `
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

// CrawlTarget returns the crawl state of one agent, for a check on demand;
// ErrNotFound for an unknown or removed agent.
func (s *Store) CrawlTarget(ctx context.Context, agentID string) (CrawlTarget, error) {
	ts, err := s.crawlTargets(ctx, "a.id = ? AND a.removed_at IS NULL", agentID)
	if err != nil {
		return CrawlTarget{}, err
	}
	if len(ts) == 0 {
		return CrawlTarget{}, fmt.Errorf("agent %s: %w", agentID, ErrNotFound)
	}
	return ts[0], nil
}

// CrawlTargets returns the crawl states of the listed (not removed)
// agents among ids, in no particular order.
func (s *Store) CrawlTargets(ctx context.Context, agentIDs []string) ([]CrawlTarget, error) {
	var out []CrawlTarget
	for chunk := range slices.Chunk(agentIDs, 500) {
		ts, err := s.crawlTargets(ctx, "a.id IN ? AND a.removed_at IS NULL", chunk)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

func (s *Store) crawlTargets(ctx context.Context, cond string, arg any) ([]CrawlTarget, error) {
	rows, err := s.db.WithContext(ctx).Raw(`SELECT a.id, a.card_url, a.health, a.raw_sha256, c.etag, c.last_modified,
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
		if err := rows.Scan(&t.AgentID, &t.CardURL, &t.Health, &t.RawSHA256, &t.ETag, &t.LastModified,
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
// no longer exist or were removed are skipped.
func (s *Store) RecordFetches(ctx context.Context, actor Actor, outs []FetchOutcome) ([]UpsertResult, error) {
	if err := actor.validate(); err != nil {
		return nil, err
	}
	if len(outs) == 0 {
		return nil, nil
	}
	results := make([]UpsertResult, len(outs))
	var docs []indexedDoc
	var healthUps []fieldUpdate
	err := s.transactRetrying(ctx, func(tx *txn) error {
		clear(results) // run again after a conflict: from scratch
		var err error
		docs, healthUps, err = recordOutcomes(tx, actor, outs, results)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("recording fetches: %w", err)
	}
	s.publish(docs)
	// An agent whose health changed and whose new card the batch stored
	// is indexed already, with its new health; only the others are read
	// back (a health change without new bytes is rare next to a crawl's
	// new versions). Their seq makes a concurrent newer write win.
	indexed := make(map[int64]bool, len(docs))
	for _, d := range docs {
		indexed[d.pk] = true
	}
	healthUps = slices.DeleteFunc(healthUps, func(u fieldUpdate) bool { return indexed[u.pk] })
	if err := s.publishFields(ctx, healthUps); err != nil {
		s.log.Warn("refreshing search index after health change", "err", err)
	}
	return results, nil
}

// refreshAudits are the audit rows of the checks outs[i] for i in checked.
func refreshAudits(outs []FetchOutcome, results []UpsertResult, checked []int) []audit {
	rows := make([]audit, 0, len(checked))
	for _, i := range checked {
		o := outs[i]
		detail := map[string]any{"status": o.Status, "not_modified": o.NotModified, "new_version": results[i].NewVersion}
		if o.Class != "" {
			detail["class"] = o.Class
		}
		rows = append(rows, audit{action: ActionRefresh, targetKind: TargetAgent, targetID: o.AgentID, detail: detail})
	}
	return rows
}

// recordOutcomes stores outs inside tx, filling results. It returns the
// index documents of the new card versions and the pks of agents whose
// health changed. Work is per batch: one lookup, one statement per table.
func recordOutcomes(tx *txn, actor Actor, outs []FetchOutcome, results []UpsertResult) ([]indexedDoc, []fieldUpdate, error) {
	ids := make([]string, len(outs))
	for i, o := range outs {
		ids[i] = o.AgentID
	}
	var recs []agentRecord
	// A check that was under way when its agent was removed is dropped.
	// Rows are locked in pk order, as every writer locks several agents
	// (lockOrder).
	if err := tx.locked().Select("pk", "id", "card_url", "health", "current_version", "seq", "raw_sha256", "policy_refused").
		Where("id IN ? AND removed_at IS NULL", ids).Order(lockOrder).Find(&recs).Error; err != nil {
		return nil, nil, fmt.Errorf("looking up agents: %w", err)
	}
	byID := make(map[string]agentRecord, len(recs))
	for _, r := range recs {
		byID[r.ID] = r
	}
	now := time.Now().UTC()
	w := checkWritesOf(outs, byID, now)
	// An agent checked twice in one batch keeps the last health; the
	// bulk update must not see it twice.
	healthRows := lastPerKey(w.health, func(r agentHealthRow) int64 { return r.PK })
	seqs, err := allocate(tx, "seq", len(healthRows))
	if err != nil {
		return nil, nil, err
	}
	healthUps := make([]fieldUpdate, len(healthRows))
	for i := range healthRows {
		healthRows[i].Seq = seqs[i]
		healthUps[i] = fieldUpdate{pk: healthRows[i].PK, prev: healthRows[i].prev, seq: seqs[i],
			values: map[string][]string{FieldHealth: {healthRows[i].Health}}}
	}
	if err := updateRows(tx, agentHealthUpdate, healthRows); err != nil {
		return nil, nil, err
	}
	// A change of health is judged again by the admission policy, in
	// this transaction.
	pks := make([]int64, len(healthRows))
	for i, r := range healthRows {
		pks[i] = r.PK
	}
	vals, err := rejudge(tx, actor, pks, now)
	if err != nil {
		return nil, nil, err
	}
	for _, u := range healthUps {
		maps.Copy(u.values, vals[u.pk])
	}
	// Two checks of one agent apply in order: each run of distinct agents
	// is one statement.
	err = runsWithoutRepeats(w.state, func(r crawlOutcomeRow) int64 { return r.AgentPK }, func(from, to int) error {
		return updateRows(tx, crawlOutcomeUpdate, w.state[from:to])
	})
	if err != nil {
		return nil, nil, err
	}
	if err := insertRows(tx, fetchLogTable, w.log); err != nil {
		return nil, nil, err
	}
	if err := appendChanges(tx, w.changes); err != nil {
		return nil, nil, err
	}
	// New card bytes go through the same path as registrations; the
	// health written above is already in the rows it reads.
	for i := range w.cards {
		if err := validateInput(&w.cards[i]); err != nil {
			return nil, nil, err
		}
	}
	res := make([]UpsertResult, len(w.cards))
	docs, fields, err := storeCards(tx, actor, w.cards, w.hints, res)
	if err != nil {
		return nil, nil, err
	}
	healthUps = append(healthUps, fields...)
	for j, i := range w.cardAt {
		results[i] = res[j]
	}
	if err := writeAudit(tx.DB, actor, refreshAudits(outs, results, w.checked)...); err != nil {
		return nil, nil, err
	}
	return docs, healthUps, nil
}

// checkWrites are the rows a batch of checks writes beside the new card
// versions it brought.
type checkWrites struct {
	// health are the health changes written by a statement of their own
	// (a new version carries its health, see crawlHint).
	health  []agentHealthRow
	state   []crawlOutcomeRow
	log     []fetchLogRow
	changes []changeRow
	// cards are the cards to store, with their hints; cardAt their
	// checks' indexes in outs.
	cards  []UpsertInput
	hints  []crawlHint
	cardAt []int
	// checked are the indexes in outs of the checks of agents found
	// (not removed).
	checked []int
}

// checkWritesOf decides what the checks outs write, given the agents
// rows found by id (byID is updated with the health they leave).
func checkWritesOf(outs []FetchOutcome, byID map[string]agentRecord, now time.Time) checkWrites {
	checks := make(map[string]int, len(outs))
	for _, o := range outs {
		checks[o.AgentID]++
	}
	w := checkWrites{log: make([]fetchLogRow, 0, len(outs))}
	for i, o := range outs {
		rec, ok := byID[o.AgentID]
		if !ok {
			continue
		}
		w.checked = append(w.checked, i)
		at := o.At.UTC()
		if o.At.IsZero() {
			at = now
		}
		health := o.Health
		if o.Removed {
			health = HealthRemoved
		}
		if health == HealthUp && rec.PolicyRefused != "" && o.Card == nil {
			// The card the policy refused is still served (a 304): the
			// agent stays stale on its last compliant version.
			health = HealthStale
		}
		var hint crawlHint
		if o.Card != nil && checks[o.AgentID] == 1 {
			hint.digest = rawDigest(o.Card.Raw)
		}
		if health != "" && health != rec.Health && health != HealthRemoved && rec.Health != "" {
			w.changes = append(w.changes, transition(EventHealth, rec, rec.Health, health, now))
		}
		switch {
		case health == "" || health == rec.Health:
		case hint.digest != "" && hint.digest != rec.RawSHA256:
			// A new version: its agents row write carries the health
			// (the agent's only check in the batch, so no other write
			// of its health comes between).
			hint.health = health
			rec.Health = health
			byID[o.AgentID] = rec
		default:
			w.health = append(w.health, agentHealthRow{PK: rec.PK, Health: health, UpdatedAt: now, prev: rec.Seq})
			if health == HealthRemoved {
				w.changes = append(w.changes, changeRow{AgentPK: rec.PK, AgentID: rec.ID, CardURL: rec.CardURL,
					Kind: ChangeRemoved, Version: rec.CurrentVersion, At: now})
			}
			rec.Health = health
			byID[o.AgentID] = rec
		}
		w.state = append(w.state, crawlOutcome(rec.PK, o, at))
		success := o.Class == ""
		w.log = append(w.log, fetchLogRow{AgentPK: rec.PK, At: at, OK: success, NotModified: o.NotModified,
			Status: o.Status, LatencyMS: o.Latency.Milliseconds(), Class: o.Class, Message: truncateRunes(o.Message, 1000)})
		if o.Card != nil {
			w.cards = append(w.cards, UpsertInput{CardURL: rec.CardURL, Card: o.Card, Source: SourceCrawl, ReceivedAt: o.At,
				Precheck: o.Precheck})
			w.hints = append(w.hints, hint)
			w.cardAt = append(w.cardAt, i)
		}
	}
	return w
}

// crawlOutcome is what check o changes in the crawl state of agent pk.
func crawlOutcome(pk int64, o FetchOutcome, at time.Time) crawlOutcomeRow {
	r := crawlOutcomeRow{AgentPK: pk, NextCheckAt: o.NextCheckAt.UTC(), ConsecutiveFailures: o.ConsecutiveFailures, LastCheckAt: at}
	if o.URL != "" {
		r.ServedURL, r.LegacyPath = &o.URL, &o.LegacyPath
	}
	if o.Class == "" {
		r.LastSuccessAt = &at
		if o.ETag != "" || o.LastModified != "" || !o.NotModified {
			// A 304 without validators keeps the stored ones; a 200
			// replaces them, even with none.
			etag, lm := cleanText(o.ETag), cleanText(o.LastModified)
			r.ETag, r.LastModified = &etag, &lm
		}
		return r
	}
	msg := cleanText(truncateRunes(o.Message, 1000))
	r.ErrorClass, r.ErrorMessage, r.ErrorStatus, r.ErrorAt = &o.Class, &msg, &o.Status, &at
	return r
}

// lastPerKey keeps the last row of each key, in the order of those last rows.
func lastPerKey[R any, K comparable](rows []R, key func(R) K) []R {
	last := make(map[K]int, len(rows))
	for i, r := range rows {
		last[key(r)] = i
	}
	if len(last) == len(rows) {
		return rows
	}
	out := rows[:0:0]
	for i, r := range rows {
		if last[key(r)] == i {
			out = append(out, r)
		}
	}
	return out
}

// Changes lists the change feed after seq since, oldest first, leaving out
// the entries of agents the scope does not see. Of an agent an admin
// removed (or the registry withdrew: a removal in the feed), other scopes
// see only the removal (if they saw the agent), so a consumer learns that it is gone; entries of agents deleted before
// removal was a state stay (their row is gone, so is what hid them).
func (s *Store) Changes(ctx context.Context, sc Scope, since int64, limit int) ([]Change, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	var (
		cond string
		args []any
	)
	if !sc.All {
		cond, args = sc.placementSQL()
		cond = " AND (a.pk IS NULL OR (" + cond + " AND (a.removed_at IS NULL OR c.kind = ?)))"
		args = append(args, ChangeRemoved)
	}
	// Federated: the agent's only live provenance is a peer registry's
	// (provenance column exactly federatedFrom), so a registry federating
	// from this one does not take it onward (docs/sources.md#federation).
	rows, err := s.db.WithContext(ctx).Raw(`SELECT c.seq, c.kind, c.agent_id, c.card_url, c.version, c.at,
		CASE WHEN a.provenance = '`+RelationFederatedFrom+`' THEN 1 ELSE 0 END FROM changes c
		LEFT JOIN agents a ON a.pk = c.agent_pk WHERE c.seq > ? AND c.kind IN ?`+cond+` ORDER BY c.seq LIMIT ?`,
		append(append([]any{since, feedKinds}, args...), limit)...).Rows()
	if err != nil {
		return nil, fmt.Errorf("reading change feed: %w", err)
	}
	defer rows.Close()
	out := []Change{}
	for rows.Next() {
		var c Change
		var federated int
		if err := rows.Scan(&c.Seq, &c.Kind, &c.AgentID, &c.CardURL, &c.Version, &c.At, &federated); err != nil {
			return nil, fmt.Errorf("reading change feed: %w", err)
		}
		c.At, c.Federated = c.At.UTC(), federated == 1
		out = append(out, c)
	}
	return out, rows.Err()
}

// AgentHealth reports an agent's crawl state and its uptime over the last
// 24 hours and 7 days (shares of successful checks), as of now.
func (s *Store) AgentHealth(ctx context.Context, agentID string, now time.Time) (HealthReport, error) {
	return agentHealth(s.db.WithContext(ctx), agentID, now)
}

func agentHealth(db *gorm.DB, agentID string, now time.Time) (HealthReport, error) {
	var (
		r                                    HealthReport
		pk                                   int64
		lastCheck, lastOK, lastErrAt, nextAt sql.NullTime
		errClass, errMsg                     string
		errStatus                            int
	)
	var removed bool
	err := db.Raw(`SELECT a.pk, a.health, c.paused, c.consecutive_failures, c.next_check_at,
		c.last_check_at, c.last_success_at, c.last_error_class, c.last_error_message, c.last_error_status, c.last_error_at,
		a.removed_at IS NOT NULL
		FROM agents a JOIN crawl_state c ON c.agent_pk = a.pk WHERE a.id = ?`, agentID).Row().
		Scan(&pk, &r.State, &r.Paused, &r.ConsecutiveFailures, &nextAt, &lastCheck, &lastOK, &errClass, &errMsg, &errStatus, &lastErrAt,
			&removed)
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
	if !r.Paused && !removed {
		r.NextCheckAt = ptr(nextAt)
	}
	if errClass != "" && lastErrAt.Valid {
		r.LastError = &FetchError{Class: errClass, Message: errMsg, Status: errStatus, At: lastErrAt.Time.UTC()}
	}
	// Both windows in one scan of the agent's last week.
	var total7, ok7, total24, ok24 sql.NullInt64
	day, week := now.UTC().Add(-24*time.Hour), now.UTC().Add(-7*24*time.Hour)
	if err := db.Raw(`SELECT COUNT(*), SUM(CASE WHEN ok THEN 1 ELSE 0 END),
		SUM(CASE WHEN at >= ? THEN 1 ELSE 0 END), SUM(CASE WHEN ok AND at >= ? THEN 1 ELSE 0 END)
		FROM fetch_log WHERE agent_pk = ? AND at >= ?`, day, day, pk, week).Row().Scan(&total7, &ok7, &total24, &ok24); err != nil {
		return HealthReport{}, fmt.Errorf("uptime of agent %s: %w", agentID, err)
	}
	share := func(ok, total sql.NullInt64) *float64 {
		if total.Int64 == 0 {
			return nil
		}
		v := float64(ok.Int64) / float64(total.Int64)
		return &v
	}
	r.Uptime24h, r.Uptime7d = share(ok24, total24), share(ok7, total7)
	return r, nil
}

// SetPaused stops or resumes crawling one agent; ErrNotFound for an
// unknown or removed agent (a restore keeps the paused state it had).
func (s *Store) SetPaused(ctx context.Context, actor Actor, agentID string, paused bool) error {
	if err := actor.validate(); err != nil {
		return err
	}
	var pk int64
	err := s.db.WithContext(ctx).Raw("SELECT pk FROM agents WHERE id = ? AND removed_at IS NULL", agentID).Row().Scan(&pk)
	if err != nil {
		return fmt.Errorf("agent %s: %w", agentID, translateRow(err))
	}
	action := ActionResume
	if paused {
		action = ActionPause
	}
	err = s.transact(ctx, func(tx *txn) error {
		if err := tx.Exec("UPDATE crawl_state SET paused = ? WHERE agent_pk = ?", paused, pk).Error; err != nil {
			return err
		}
		return writeAudit(tx.DB, actor, audit{action: action, targetKind: TargetAgent, targetID: agentID})
	})
	if err != nil {
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
