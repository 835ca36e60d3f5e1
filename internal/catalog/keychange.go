package catalog

import (
	"fmt"
	"slices"
	"time"
)

// FilterKeyChangedDay values are the day (KeyChangedDayLayout, UTC) the
// current card version was received when its verification report holds
// the signing-key-change finding (auditSigningKeyChanged): the day the
// card signed by a new key came. Agents whose current card has no such
// finding carry none. It is not a filter field of its own: searches ask
// for a span of days through Query.AnyOf (KeyChangedSince).
const FilterKeyChangedDay = "key_changed_day"

// KeyChangedDayLayout is how FilterKeyChangedDay writes a day.
const KeyChangedDayLayout = time.DateOnly

// MaxKeyChangedDays bounds the span KeyChangedSince turns into days, so a
// search's work stays small.
const MaxKeyChangedDays = 366

// auditSigningKeyChanged is verify.FindingSigningKeyChanged (verify
// imports catalog; the report's tests, which record that code, hold the
// two together).
const auditSigningKeyChanged = "signing_key_changed"

// KeyChangedSince is the AnyOf group of the agents whose key changed on a
// day from since to until, both UTC days and inclusive; at most
// MaxKeyChangedDays days, the latest kept. A since after until is a group
// of no day, which matches no agent.
func KeyChangedSince(since, until time.Time) FilterGroup {
	g := FilterGroup{Field: FilterKeyChangedDay, Values: []string{}}
	day := since.UTC().Truncate(24 * time.Hour)
	last := until.UTC().Truncate(24 * time.Hour)
	if first := last.AddDate(0, 0, -(MaxKeyChangedDays - 1)); day.Before(first) {
		day = first
	}
	for ; !day.After(last); day = day.AddDate(0, 0, 1) {
		g.Values = append(g.Values, day.Format(KeyChangedDayLayout))
	}
	return g
}

// keyChangedDay is the FilterKeyChangedDay value of an agent whose
// current card, received at received, has the audit codes codes; "" when
// no key change is among them.
func keyChangedDay(codes []string, received time.Time) string {
	if received.IsZero() || !slices.Contains(codes, auditSigningKeyChanged) {
		return ""
	}
	return received.UTC().Format(KeyChangedDayLayout)
}

// keyChangeEvent is the EventKeyChanged of a verification in of the
// agent's current version that reports the signing-key-change finding
// the stored audit codes (rec) did not hold, nil otherwise: once per card
// version, whatever the verdict, not again at its rechecks.
func keyChangeEvent(rec agentRecord, in VerificationInput, now time.Time) (*changeRow, error) {
	if !slices.Contains(in.AuditCodes, auditSigningKeyChanged) {
		return nil, nil
	}
	stored, err := decodeAuditCodes(rec.AuditCodes)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", rec.ID, err)
	}
	if slices.Contains(stored, auditSigningKeyChanged) {
		return nil, nil
	}
	kids := dedupe(in.KIDs, func(s string) string { return cleanText(s) })
	slices.Sort(kids)
	row, err := NewEvent{Kind: EventKeyChanged, AgentPK: rec.PK, AgentID: rec.ID, CardURL: rec.CardURL,
		Version: rec.CurrentVersion, At: now, Detail: map[string]any{"kids": kids, "status": in.Status}}.row()
	return &row, err
}
