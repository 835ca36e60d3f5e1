package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Event kinds: rows of the changes table beside the feed's own kinds
// (ChangeCreated, ChangeUpdated, ChangeRemoved, ChangeRestored), written
// by emitEvent in the transaction of the change they report, so that
// webhooks, which read them with Events, keep the table as their outbox.
// The public change feed (Changes) leaves them out: a consumer syncing a
// copy of the catalog needs only the feed's kinds.
const (
	// EventHealth: the agent's health moved between up, down and stale
	// (detail from, to).
	EventHealth = "health"
	// EventSignature: the signature status of the agent's current
	// version changed (detail from, to).
	EventSignature = "signature"
	// EventListing: the agent's listing state changed (detail from, to,
	// reason, replacement).
	EventListing = "listing"
	// EventWithdrawn: the agent left search because nothing vouches for
	// it any more (detail reason, source_id).
	EventWithdrawn = "withdrawn"
	// EventContentFinding: a content scan found something in the agent's
	// card (detail as the scanner reports it).
	EventContentFinding = "content_finding"
	// EventSourceFailed: a source could not be resolved or crawled; the
	// event names no agent (AgentID empty, CardURL the source's URL).
	EventSourceFailed = "source_failed"
	// EventPolicy: the admission policy's rules failing (or errored) on
	// the agent's current version changed (detail failing), or it
	// refused a card a crawl brought (detail refused_by); admission.go.
	EventPolicy = "policy"
	// EventKeyChanged: the agent's current version is signed by a key
	// other than the previous version's (the signing-key-change finding),
	// whatever the verdict (detail kids, the new version's key ids, and
	// status); keychange.go.
	EventKeyChanged = "key_changed"
)

// feedKinds are the kinds the public change feed reports.
var feedKinds = []string{ChangeCreated, ChangeUpdated, ChangeRemoved, ChangeRestored}

// Event is an entry of the changes table of any kind, with its data.
type Event struct {
	Change
	// Detail is the event's JSON data; empty for the feed's own kinds.
	Detail json.RawMessage
}

// NewEvent is what emitEvent writes. AgentPK is 0 and AgentID empty for
// an event about no agent (EventSourceFailed).
type NewEvent struct {
	Kind    string
	AgentPK int64
	AgentID string
	CardURL string
	Version int
	At      time.Time
	// Detail is encoded as the event's JSON data.
	Detail map[string]any
}

// emitEvent records e inside tx, the transaction of the change it
// reports: a rollback takes the event with it and a commit makes it due
// to webhooks, in order with the other events of the same agent.
func emitEvent(tx *txn, e NewEvent) error {
	row, err := e.row()
	if err != nil {
		return err
	}
	if err := appendChanges(tx, []changeRow{row}); err != nil {
		return fmt.Errorf("recording %s event: %w", e.Kind, err)
	}
	return nil
}

// row is the changes row of e.
func (e NewEvent) row() (changeRow, error) {
	detail := ""
	if len(e.Detail) > 0 {
		b, err := json.Marshal(e.Detail)
		if err != nil {
			return changeRow{}, fmt.Errorf("encoding %s event: %w", e.Kind, err)
		}
		detail = string(b)
	}
	at := e.At.UTC()
	if e.At.IsZero() {
		at = time.Now().UTC()
	}
	return changeRow{AgentPK: e.AgentPK, AgentID: e.AgentID, CardURL: e.CardURL, Kind: e.Kind,
		Version: e.Version, At: at, Detail: detail}, nil
}

// transition is the changes row of an event whose data is a move of
// one of rec's states from one value to another.
func transition(kind string, rec agentRecord, from, to string, at time.Time) changeRow {
	b, _ := json.Marshal(map[string]string{"from": from, "to": to}) // strings always encode
	return changeRow{AgentPK: rec.PK, AgentID: rec.ID, CardURL: rec.CardURL, Kind: kind, Version: rec.CurrentVersion,
		At: at.UTC(), Detail: string(b)}
}

// Events returns the entries of the changes table after since, of every
// kind, oldest first, at most limit (1 to 1000): the events webhooks
// deliver. It is not scoped: subscriptions are an admin's.
func (s *Store) Events(ctx context.Context, since int64, limit int) ([]Event, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	rows, err := s.db.WithContext(ctx).Raw(`SELECT seq, kind, agent_id, card_url, version, at, detail FROM changes
		WHERE seq > ? ORDER BY seq LIMIT ?`, since, limit).Rows()
	if err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		var (
			e      Event
			detail string
		)
		if err := rows.Scan(&e.Seq, &e.Kind, &e.AgentID, &e.CardURL, &e.Version, &e.At, &detail); err != nil {
			return nil, fmt.Errorf("reading events: %w", err)
		}
		e.At = e.At.UTC()
		if detail != "" {
			e.Detail = json.RawMessage(detail)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	return out, nil
}
