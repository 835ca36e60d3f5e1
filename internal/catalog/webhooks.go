package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// ErrCursorMoved is returned by EnqueueWebhookDeliveries when another
// replica fanned the same change feed entries out first; the caller reads
// the cursor again.
var ErrCursorMoved = errors.New("catalog: webhook cursor moved")

// WebhookLogCap is how many finished deliveries are kept per subscription
// (the delivery log); pending ones are never dropped.
const WebhookLogCap = 100

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Webhook is a subscription. Its signing secret is not part of it: it is
// shown once at creation and read back only to sign (DueDelivery).
type Webhook struct {
	ID             string
	URL            string
	EventTypes     []string
	Filter         string
	CreatedAt      time.Time
	CreatedBy      string
	DisabledAt     *time.Time
	DisabledReason string
}

// WebhookDelivery is one entry of a subscription's delivery log.
type WebhookDelivery struct {
	PK            int64
	Seq           int64
	AgentID       string
	EventType     string
	State         string
	Attempts      int
	CreatedAt     time.Time
	NextAttemptAt time.Time
	LastAttemptAt *time.Time
	LastStatus    int
	LastError     string
}

// NewWebhookDelivery is a delivery the fan-out decided on.
type NewWebhookDelivery struct {
	WebhookID string
	Seq       int64
	AgentID   string
	EventType string
	Payload   string
}

// DueDelivery is a claimed delivery with what sending it needs.
type DueDelivery struct {
	PK             int64
	WebhookID      string
	URL            string
	Secret         string
	Payload        string
	CreatedAt      time.Time
	Attempts       int
	FirstFailureAt *time.Time
}

// WebhookAttempt is the outcome of one attempt. Next is when to try again
// after a failure; Disable, when set, disables the subscription with that
// reason and fails its pending deliveries.
type WebhookAttempt struct {
	At      time.Time
	OK      bool
	Status  int
	Err     string
	Next    time.Time
	Disable string
}

// CreateWebhook stores a subscription and its signing secret.
func (s *Store) CreateWebhook(ctx context.Context, actor Actor, w Webhook, secret string) error {
	return s.transact(ctx, func(tx *txn) error {
		if err := tx.Exec(`INSERT INTO webhooks (id, url, event_types, filter, secret, created_at, created_by)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, w.ID, w.URL, strings.Join(w.EventTypes, ","), w.Filter, s.seal.seal(webhookSecretAt(w.ID), secret),
			w.CreatedAt.UTC(), w.CreatedBy).Error; err != nil {
			return fmt.Errorf("storing webhook: %w", err)
		}
		return writeAudit(tx.DB, actor, audit{action: "webhook.create", targetKind: "webhook", targetID: w.ID,
			detail: map[string]any{"url": w.URL, "event_types": w.EventTypes, "filter": w.Filter}})
	})
}

// DeleteWebhook removes a subscription and its deliveries; ErrNotFound
// when there is none.
func (s *Store) DeleteWebhook(ctx context.Context, actor Actor, id string) error {
	return s.transact(ctx, func(tx *txn) error {
		res := tx.Exec("DELETE FROM webhooks WHERE id = ?", id)
		if res.Error != nil {
			return fmt.Errorf("deleting webhook: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("webhook %s: %w", id, ErrNotFound)
		}
		if err := tx.Exec("DELETE FROM webhook_deliveries WHERE webhook_id = ?", id).Error; err != nil {
			return fmt.Errorf("deleting webhook deliveries: %w", err)
		}
		return writeAudit(tx.DB, actor, audit{action: "webhook.delete", targetKind: "webhook", targetID: id})
	})
}

// Webhooks lists the subscriptions, oldest first.
func (s *Store) Webhooks(ctx context.Context) ([]Webhook, error) {
	return s.webhooks(ctx, "")
}

// Webhook returns one subscription; ErrNotFound when there is none.
func (s *Store) Webhook(ctx context.Context, id string) (Webhook, error) {
	ws, err := s.webhooks(ctx, id)
	if err != nil {
		return Webhook{}, err
	}
	if len(ws) == 0 {
		return Webhook{}, fmt.Errorf("webhook %s: %w", id, ErrNotFound)
	}
	return ws[0], nil
}

func (s *Store) webhooks(ctx context.Context, id string) ([]Webhook, error) {
	q := "SELECT id, url, event_types, filter, created_at, created_by, disabled_at, disabled_reason FROM webhooks"
	var args []any
	if id != "" {
		q += " WHERE id = ?"
		args = append(args, id)
	}
	rows, err := s.queryRows(ctx, q+" ORDER BY created_at, id", args...)
	if err != nil {
		return nil, fmt.Errorf("reading webhooks: %w", err)
	}
	defer rows.Close()
	out := []Webhook{}
	for rows.Next() {
		var (
			w        Webhook
			types    string
			disabled sql.NullTime
		)
		if err := rows.Scan(&w.ID, &w.URL, &types, &w.Filter, &w.CreatedAt, &w.CreatedBy, &disabled, &w.DisabledReason); err != nil {
			return nil, fmt.Errorf("reading webhooks: %w", err)
		}
		w.EventTypes = strings.Split(types, ",")
		w.CreatedAt = w.CreatedAt.UTC()
		if disabled.Valid {
			t := disabled.Time.UTC()
			w.DisabledAt = &t
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// WebhookDeliveries returns a subscription's deliveries, newest first:
// pending ones and the last WebhookLogCap finished ones.
func (s *Store) WebhookDeliveries(ctx context.Context, id string, limit int) ([]WebhookDelivery, error) {
	rows, err := s.queryRows(ctx, `SELECT pk, seq, agent_id, event_type, state, attempts, created_at, next_attempt_at,
		last_attempt_at, last_status, last_error FROM webhook_deliveries WHERE webhook_id = ? ORDER BY pk DESC LIMIT ?`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("reading webhook deliveries: %w", err)
	}
	defer rows.Close()
	out := []WebhookDelivery{}
	for rows.Next() {
		var (
			d    WebhookDelivery
			last sql.NullTime
		)
		if err := rows.Scan(&d.PK, &d.Seq, &d.AgentID, &d.EventType, &d.State, &d.Attempts, &d.CreatedAt,
			&d.NextAttemptAt, &last, &d.LastStatus, &d.LastError); err != nil {
			return nil, fmt.Errorf("reading webhook deliveries: %w", err)
		}
		d.CreatedAt, d.NextAttemptAt = d.CreatedAt.UTC(), d.NextAttemptAt.UTC()
		if last.Valid {
			t := last.Time.UTC()
			d.LastAttemptAt = &t
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// WebhookCursor is the last change feed seq fanned out into deliveries.
func (s *Store) WebhookCursor(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.db.WithContext(ctx).Raw("SELECT seq FROM webhook_cursor WHERE id = 1").Scan(&seq).Error; err != nil {
		return 0, fmt.Errorf("reading webhook cursor: %w", err)
	}
	return seq, nil
}

// EnqueueWebhookDeliveries stores the deliveries of the change feed
// entries after from up to to and moves the cursor from from to to, in one
// transaction: the deliveries exist exactly when the cursor has passed
// their entries, so a crash loses none. The cursor moves only if it is
// still at from (compare and swap), so when replicas fan out concurrently
// one wins and the other gets ErrCursorMoved and stores nothing: each
// entry is fanned out once.
func (s *Store) EnqueueWebhookDeliveries(ctx context.Context, from, to int64, ds []NewWebhookDelivery, now time.Time) error {
	now = now.UTC()
	return s.transact(ctx, func(tx *txn) error {
		res := tx.Exec("UPDATE webhook_cursor SET seq = ? WHERE id = 1 AND seq = ?", to, from)
		if res.Error != nil {
			return fmt.Errorf("moving webhook cursor: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return ErrCursorMoved
		}
		if len(ds) == 0 {
			return nil
		}
		// A subscription deleted meanwhile gets none: its row is locked
		// until commit, so a deletion waits for this write or comes first.
		var ids []string
		for _, d := range ds {
			if !slices.Contains(ids, d.WebhookID) {
				ids = append(ids, d.WebhookID)
			}
		}
		var live []string
		if err := tx.locked().Table("webhooks").Where("id IN ?", ids).Pluck("id", &live).Error; err != nil {
			return fmt.Errorf("storing webhook deliveries: %w", err)
		}
		rows := make([]deliveryRow, 0, len(ds))
		for _, d := range ds {
			if slices.Contains(live, d.WebhookID) {
				rows = append(rows, deliveryRow{NewWebhookDelivery: d, At: now})
			}
		}
		// One statement per 200 deliveries, not one each: a fan-out of
		// 500 events spent most of its time on these round trips.
		if err := insertRows(tx, webhookDeliveriesTable, rows); err != nil {
			return fmt.Errorf("storing webhook deliveries: %w", err)
		}
		return nil
	})
}

// deliveryRow is a new pending delivery, created and due at At.
type deliveryRow struct {
	NewWebhookDelivery
	At time.Time
}

var webhookDeliveriesTable = bulkTable[deliveryRow]{
	name: "webhook_deliveries",
	cols: []bulkCol{{"webhook_id", pgText}, {"seq", pgBigint}, {"agent_id", pgText}, {"event_type", pgText}, {"payload", pgText},
		{"state", pgText}, {"created_at", pgTimestamp}, {"next_attempt_at", pgTimestamp}},
	args: func(a []any, r deliveryRow) []any {
		return append(a, r.WebhookID, r.Seq, r.AgentID, r.EventType, r.Payload, DeliveryPending, r.At, r.At)
	},
}

// pendingFirst holds a delivery back while an earlier one of the same
// subscription and agent is pending: deliveries arrive in order per agent.
const pendingFirst = `NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.webhook_id = d.webhook_id
	AND e.agent_id = d.agent_id AND e.state = 'pending' AND e.seq < d.seq)
	AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.disabled_at IS NULL)`

// ClaimWebhookDeliveries leases up to limit due deliveries, each the
// first pending one of its subscription and agent, oldest first: in pk
// order, which is the feed's (the fan-out writes deliveries in feed
// order) and walks the primary key, so a claim reads about limit rows
// however many are pending; ordered by seq, it read and sorted the whole
// backlog, and a dispatcher that fell behind fell further behind. On
// PostgreSQL, FOR UPDATE SKIP LOCKED lets replicas claim concurrently
// without taking each other's rows; a claimed row stays pending, so the
// agent's later deliveries wait for it on every replica.
func (s *Store) ClaimWebhookDeliveries(ctx context.Context, now time.Time, limit int, lease time.Duration) ([]DueDelivery, error) {
	now = now.UTC()
	var pks []int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := `UPDATE webhook_deliveries SET lease_until = ? WHERE pk IN (
			SELECT d.pk FROM webhook_deliveries d WHERE d.state = 'pending' AND d.next_attempt_at <= ?
			AND (d.lease_until IS NULL OR d.lease_until < ?) AND ` + pendingFirst + `
			ORDER BY d.pk LIMIT ?) RETURNING pk`
		if s.dialect == dialectPostgres {
			q = `UPDATE webhook_deliveries u SET lease_until = ? FROM (
				SELECT d.pk FROM webhook_deliveries d WHERE d.state = 'pending' AND d.next_attempt_at <= ?
				AND (d.lease_until IS NULL OR d.lease_until < ?) AND ` + pendingFirst + `
				ORDER BY d.pk LIMIT ? FOR UPDATE OF d SKIP LOCKED) c WHERE u.pk = c.pk RETURNING u.pk`
		}
		return tx.Raw(q, now.Add(lease), now, now, limit).Scan(&pks).Error
	})
	if err != nil {
		return nil, fmt.Errorf("claiming webhook deliveries: %w", err)
	}
	if len(pks) == 0 {
		return nil, nil
	}
	rows, err := s.db.WithContext(ctx).Raw(`SELECT d.pk, d.webhook_id, w.url, w.secret, d.payload, d.created_at, d.attempts,
		d.first_failure_at FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.pk IN ? ORDER BY d.seq`, pks).Rows()
	if err != nil {
		return nil, fmt.Errorf("reading claimed webhook deliveries: %w", err)
	}
	defer rows.Close()
	var out []DueDelivery
	for rows.Next() {
		var (
			d     DueDelivery
			first sql.NullTime
		)
		if err := rows.Scan(&d.PK, &d.WebhookID, &d.URL, &d.Secret, &d.Payload, &d.CreatedAt, &d.Attempts, &first); err != nil {
			return nil, fmt.Errorf("reading claimed webhook deliveries: %w", err)
		}
		secret, err := s.seal.open(webhookSecretAt(d.WebhookID), d.Secret)
		if err != nil {
			return nil, err
		}
		d.Secret = secret
		d.CreatedAt = d.CreatedAt.UTC()
		if first.Valid {
			t := first.Time.UTC()
			d.FirstFailureAt = &t
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// FinishedDelivery is an attempt of delivery PK of subscription WebhookID.
type FinishedDelivery struct {
	WebhookID string
	PK        int64
	Attempt   WebhookAttempt
}

// FinishWebhookDelivery records an attempt of delivery pk of subscription
// webhookID; see FinishWebhookDeliveries.
func (s *Store) FinishWebhookDelivery(ctx context.Context, webhookID string, pk int64, a WebhookAttempt) error {
	return s.FinishWebhookDeliveries(ctx, []FinishedDelivery{{WebhookID: webhookID, PK: pk, Attempt: a}})
}

// FinishWebhookDeliveries records attempts in one transaction (a batch
// of deliveries costs one commit, not one each) and keeps each of their
// subscriptions' logs to WebhookLogCap finished deliveries.
func (s *Store) FinishWebhookDeliveries(ctx context.Context, fs []FinishedDelivery) error {
	if len(fs) == 0 {
		return nil
	}
	return s.transact(ctx, func(tx *txn) error {
		var hooks []string
		var delivered []deliveredRow
		for _, f := range fs {
			if !slices.Contains(hooks, f.WebhookID) {
				hooks = append(hooks, f.WebhookID)
			}
			if f.Attempt.OK {
				delivered = append(delivered, deliveredRow{PK: f.PK, At: f.Attempt.At.UTC(), Status: f.Attempt.Status})
				continue
			}
			if err := finishDelivery(tx, f); err != nil {
				return err
			}
		}
		// Deliveries that arrived, the most of any batch: one statement
		// per 200, not one each (a dispatcher at 1,000 deliveries/s spent
		// more on these round trips than on sending).
		if err := updateRows(tx, deliveredUpdate, delivered); err != nil {
			return fmt.Errorf("recording webhook deliveries: %w", err)
		}
		for _, id := range hooks {
			if err := tx.Exec(`DELETE FROM webhook_deliveries WHERE webhook_id = ? AND state <> 'pending' AND pk NOT IN (
				SELECT pk FROM webhook_deliveries WHERE webhook_id = ? AND state <> 'pending' ORDER BY pk DESC LIMIT ?)`,
				id, id, WebhookLogCap).Error; err != nil {
				return fmt.Errorf("pruning webhook log: %w", err)
			}
		}
		return nil
	})
}

// deliveredRow is a delivery the receiver took (a 2xx).
type deliveredRow struct {
	PK     int64
	At     time.Time
	Status int
}

var deliveredUpdate = bulkUpdate[deliveredRow]{
	table: "webhook_deliveries", key: "pk",
	cols: []bulkCol{{"pk", pgBigint}, {"last_attempt_at", pgTimestamp}, {"last_status", pgInteger}},
	set:  "state = '" + DeliveryDelivered + "', attempts = attempts + 1, last_error = '', lease_until = NULL",
	args: func(a []any, r deliveredRow) []any { return append(a, r.PK, r.At, r.Status) },
}

// finishDelivery records one attempt inside tx.
func finishDelivery(tx *txn, f FinishedDelivery) error {
	a, pk, webhookID := f.Attempt, f.PK, f.WebhookID
	at := a.At.UTC()
	msg := truncateRunes(a.Err, 500)
	var err error
	switch {
	case a.OK:
		err = updateRows(tx, deliveredUpdate, []deliveredRow{{PK: pk, At: at, Status: a.Status}})
	case a.Disable != "":
		err = tx.Exec(`UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1, last_attempt_at = ?,
			last_status = ?, last_error = ?, lease_until = NULL WHERE pk = ?`, DeliveryFailed, at, a.Status, msg, pk).Error
		if err == nil {
			err = tx.Exec("UPDATE webhook_deliveries SET state = ?, lease_until = NULL WHERE webhook_id = ? AND state = ?",
				DeliveryFailed, webhookID, DeliveryPending).Error
		}
		if err == nil {
			err = tx.Exec("UPDATE webhooks SET disabled_at = ?, disabled_reason = ? WHERE id = ?",
				at, truncateRunes(a.Disable, 500), webhookID).Error
		}
	default:
		err = tx.Exec(`UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = ?, last_status = ?,
			last_error = ?, lease_until = NULL, next_attempt_at = ?, first_failure_at = COALESCE(first_failure_at, ?)
			WHERE pk = ?`, at, a.Status, msg, a.Next.UTC(), at, pk).Error
	}
	if err != nil {
		return fmt.Errorf("recording webhook delivery: %w", err)
	}
	return nil
}
