package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/card"
)

// The admission policy (serve --policy) runs inside the writes that record
// what it judges: a new card version (storeRun), a new verdict
// (recordReports) and a health change (recordOutcomes). The catalog
// declares what it needs of the policy (Admission) and owns what a
// judgement does to an agent: its results stored per version, the policy
// facet, a hold (pending until the card complies or an editor overrides),
// a refusal (nothing stored; a crawled agent keeps its last compliant
// version and goes stale). The rules themselves live in internal/policy,
// wired by serve through verify.Admission.

// Admission judges one card version against the admission policy.
type Admission interface {
	// Judge never fails: a rule that cannot be judged is an errored
	// result, reported like a flag.
	Judge(in AdmissionInput) Judgement
	// Digest names the policy's content; it is stored with the agents it
	// judged, so a later policy is known to be another.
	Digest() string
}

// AdmissionInput is what a judgement reads of one card version.
type AdmissionInput struct {
	// AgentID is "" for a card URL new to the catalog.
	AgentID string
	CardURL string
	Card    *card.Card
	// Source is how the version came (Source*).
	Source string
	// Provenance is how the agent came, as the write leaves it: the
	// provenance facet's values (registered, seeded, imported, and a
	// source's publishedFrom, discoveredFrom, federatedFrom).
	Provenance []string
	// Report is the verification report on the version (verify.Report as
	// JSON); nil before the verifier reported.
	Report          json.RawMessage
	SignatureStatus string
	Health          string
}

// Policy actions and outcomes, as internal/policy names them.
const (
	PolicyFlag   = "flag"
	PolicyHold   = "hold"
	PolicyReject = "reject"

	PolicyFail    = "fail"
	PolicyErrored = "errored"
)

// PolicyResult is one rule that did not pass on a card version.
type PolicyResult struct {
	RuleID string
	// Action is the rule's action; an errored rule's is PolicyFlag.
	Action string
	// Outcome is PolicyFail or PolicyErrored.
	Outcome string
	// Message is the rule's message, or what went wrong for an errored
	// rule.
	Message string
}

// Judgement is the admission policy's verdict on one card version.
type Judgement struct {
	// Results are the rules that did not pass, in policy order.
	Results []PolicyResult
	// Action is the most severe action of a failed rule (reject > hold >
	// flag), "" when every rule passed.
	Action string
}

// First returns the first failed rule whose action is action.
func (j Judgement) First(action string) (PolicyResult, bool) {
	for _, r := range j.Results {
		if r.Outcome == PolicyFail && r.Action == action {
			return r, true
		}
	}
	return PolicyResult{}, false
}

// failing is the sorted rule ids of Results: the policy facet's values.
func (j Judgement) failing() []string {
	ids := make([]string, 0, len(j.Results))
	for _, r := range j.Results {
		ids = append(ids, cleanText(r.RuleID))
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// ErrRefused is wrapped by the error of a write the admission policy
// refused (a *RefusedError).
var ErrRefused = errors.New("catalog: refused by the admission policy")

// RefusedError is a card a rule with action reject refused at
// registration or import: nothing of it was stored.
type RefusedError struct {
	CardURL string
	RuleID  string
	Message string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("card %s refused by admission policy rule %q: %s", e.CardURL, e.RuleID, e.Message)
}

func (e *RefusedError) Unwrap() error { return ErrRefused }

// admissionBox holds an Admission for an atomic.Pointer; nil a means none.
type admissionBox struct{ a Admission }

// SetAdmission replaces the admission policy of the writes that follow;
// nil turns it off. Agents already judged keep their results until a
// write judges them again.
func (s *Store) SetAdmission(a Admission) { s.admission.Store(&admissionBox{a: a}) }

// Admission returns the admission policy in force; nil when none.
func (s *Store) Admission() Admission {
	if b := s.admission.Load(); b != nil {
		return b.a
	}
	return nil
}

// policyActor names the admission policy as the actor of a hold and of
// its release.
var policyActor = System("policy")

// holdPrefix starts the listing reason of an agent the policy holds, so a
// hold is told from a pending review.
const holdPrefix = "held by admission policy rule "

func holdReason(r PolicyResult) string {
	return truncateRunes(holdPrefix+fmt.Sprintf("%q: %s", r.RuleID, cleanText(r.Message)), maxListingReason)
}

// heldByPolicy reports whether rec waits in pending because of the policy.
func heldByPolicy(rec *agentRecord) bool {
	return rec.Listing == ListingPending && rec.ListingBy == policyActor.String() && strings.HasPrefix(rec.ListingReason, holdPrefix)
}

// policyResultRow is one row of policy_results.
type policyResultRow struct {
	AgentPK     int64
	Version     int
	RuleID      string
	Action      string
	Outcome     string
	Message     string
	EvaluatedAt time.Time
}

var policyResultsTable = bulkTable[policyResultRow]{
	name: "policy_results",
	cols: []bulkCol{{"agent_pk", pgBigint}, {"version", pgInteger}, {"rule_id", pgText}, {"action", pgText},
		{"outcome", pgText}, {"message", pgText}, {"evaluated_at", pgTimestamp}},
	args: func(a []any, r policyResultRow) []any {
		return append(a, r.AgentPK, r.Version, r.RuleID, r.Action, r.Outcome, r.Message, r.EvaluatedAt)
	},
}

// listingMove is a listing change the policy makes to an agent (a hold or
// its release), written and audited by applyPolicy.
type listingMove struct {
	rec  agentRecord // as the move leaves it
	from string
	rule string // the rule that holds; "" for a release
}

// policyPlan is what judgements write: the results of the judged
// versions (replacing what those versions had), and the listing moves.
type policyPlan struct {
	judged []int64 // agent pks, with versions in judgedAt
	at     []int
	rows   []policyResultRow
	moves  []listingMove
}

// judge applies j, made on rec's current version, to rec: the policy
// columns, the results, and a hold or its release. newVersion says the
// version is new, so a hold applies again even if an editor overrode the
// previous version's. It reports whether the rules failing changed (a
// policyEvent, which the caller appends).
func (pp *policyPlan) judge(rec *agentRecord, j Judgement, digest string, lp ListingPolicy, newVersion bool, now time.Time) (changed bool) {
	prevFailing := cmp.Or(rec.PolicyFailing, "[]")
	rec.PolicyFailing, rec.PolicyDigest = jsonArray(j.failing()), digest
	changed = prevFailing != rec.PolicyFailing
	pp.judged, pp.at = append(pp.judged, rec.PK), append(pp.at, rec.CurrentVersion)
	for _, r := range j.Results {
		pp.rows = append(pp.rows, policyResultRow{AgentPK: rec.PK, Version: rec.CurrentVersion, RuleID: cleanText(r.RuleID),
			Action: r.Action, Outcome: r.Outcome, Message: cleanText(truncateRunes(r.Message, maxListingReason)), EvaluatedAt: now})
	}
	hold, holds := j.First(PolicyHold)
	if !holds {
		// A reject rule that fails once the version is stored (on its
		// verdict or health, judged later) cannot refuse what is already
		// there: the version is held instead, never left listed.
		hold, holds = j.First(PolicyReject)
	}
	switch {
	case holds && (rec.Listing == ListingApproved || rec.Listing == ListingPending):
		// An editor who approved a held version overrode the hold; it
		// holds again only when the failures change or a new version
		// comes.
		if !newVersion && rec.Listing == ListingApproved && prevFailing == rec.PolicyFailing {
			return changed
		}
		reason := holdReason(hold)
		if heldByPolicy(rec) && rec.ListingReason == reason {
			return changed
		}
		from := rec.Listing
		at := now
		rec.Listing, rec.ListingReason, rec.ListingBy, rec.ListingAt = ListingPending, reason, policyActor.String(), &at
		pp.moves = append(pp.moves, listingMove{rec: *rec, from: from, rule: hold.RuleID})
	case !holds && heldByPolicy(rec):
		at := now
		rec.ListingBy, rec.ListingAt = policyActor.String(), &at
		if !lp.RequireApproval || rec.ApprovedVersion > 0 {
			rec.Listing, rec.ListingReason, rec.ApprovedVersion = ListingApproved, "", rec.CurrentVersion
		} else {
			rec.ListingReason = "complies with the admission policy; awaiting review"
		}
		pp.moves = append(pp.moves, listingMove{rec: *rec, from: ListingPending})
	}
	return changed
}

// apply writes pp inside tx: the results of the judged versions replace
// theirs, and each listing move is written with its audit row (the
// policy's, on behalf of the request that caused the write, if any).
func (pp *policyPlan) apply(tx *txn, cause Actor) error {
	for i, pk := range pp.judged {
		if err := tx.Exec("DELETE FROM policy_results WHERE agent_pk = ? AND version = ?", pk, pp.at[i]).Error; err != nil {
			return fmt.Errorf("replacing policy results: %w", err)
		}
	}
	if err := insertRows(tx, policyResultsTable, pp.rows); err != nil {
		return fmt.Errorf("storing policy results: %w", err)
	}
	if len(pp.moves) == 0 {
		return nil
	}
	actor := policyActor
	if cause.Request != nil {
		actor = actor.For(*cause.Request)
	}
	rows := make([]audit, 0, len(pp.moves))
	for _, m := range pp.moves {
		r := m.rec
		err := tx.Exec(`UPDATE agents SET listing = ?, listing_reason = ?, listing_replacement = '', listing_by = ?,
			listing_at = ?, approved_version = ? WHERE pk = ?`, r.Listing, r.ListingReason, r.ListingBy, r.ListingAt,
			r.ApprovedVersion, r.PK).Error
		if err != nil {
			return fmt.Errorf("applying the admission policy to agent %s: %w", r.ID, err)
		}
		detail := map[string]any{"from": m.from, "to": r.Listing, "version": r.CurrentVersion, "cause": cause.String()}
		if r.ListingReason != "" {
			detail["reason"] = r.ListingReason
		}
		if m.rule != "" {
			detail["rule"] = m.rule
		}
		rows = append(rows, audit{action: ActionListing, targetKind: TargetAgent, targetID: r.ID, detail: detail})
	}
	if err := insertAudit(tx.DB, actor, rows...); err != nil {
		return fmt.Errorf("recording the admission policy's listing changes: %w", err)
	}
	return nil
}

// policyFacets are the policy facet's pairs of a stored policy_failing.
func policyFacets(failing string) ([]facetRecord, error) {
	ids, err := decodeStrings(failing)
	if err != nil {
		return nil, fmt.Errorf("decoding policy results: %w", err)
	}
	out := make([]facetRecord, len(ids))
	for i, id := range ids {
		out[i] = facetRecord{Field: FieldPolicy, Value: id}
	}
	return out, nil
}

// PolicyState is where an agent's current version stands with the
// admission policy.
type PolicyState struct {
	// Judged is set when a policy judged the current version; Digest
	// names that policy.
	Judged bool
	Digest string
	// Results are the rules that did not pass on the current version.
	Results []PolicyResult
	// EvaluatedAt is when the results were written; zero when none.
	EvaluatedAt time.Time
	// RefusedBy is the rule that refused the last card a crawl brought,
	// which was not stored; "" when none did.
	RefusedBy string
}

// PolicyState reads the admission policy's standing on an agent the
// scope sees; ErrNotFound otherwise.
func (s *Store) PolicyState(ctx context.Context, sc Scope, agentID string) (PolicyState, error) {
	pk, err := s.pkOf(ctx, sc, agentID)
	if err != nil {
		return PolicyState{}, err
	}
	var st PolicyState
	var version int
	err = s.db.WithContext(ctx).Raw("SELECT current_version, policy_digest, policy_refused FROM agents WHERE pk = ?", pk).
		Row().Scan(&version, &st.Digest, &st.RefusedBy)
	if err != nil {
		return PolicyState{}, fmt.Errorf("policy state of agent %s: %w", agentID, translateRow(err))
	}
	st.Judged = st.Digest != ""
	rows, err := s.db.WithContext(ctx).Raw(`SELECT rule_id, action, outcome, message, evaluated_at FROM policy_results
		WHERE agent_pk = ? AND version = ? ORDER BY rule_id`, pk, version).Rows()
	if err != nil {
		return PolicyState{}, fmt.Errorf("policy results of agent %s: %w", agentID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r PolicyResult
		var at time.Time
		if err := rows.Scan(&r.RuleID, &r.Action, &r.Outcome, &r.Message, &at); err != nil {
			return PolicyState{}, fmt.Errorf("policy results of agent %s: %w", agentID, err)
		}
		st.Results = append(st.Results, r)
		st.EvaluatedAt = at.UTC()
	}
	return st, rows.Err()
}

// rejudge judges again the current versions of the agents pks after a
// change of their verdict or health, inside the write that made it (tx),
// and returns the index fields that changed per agent: the policy facet,
// and the placement when a hold or its release moved the listing. Without
// a policy it does nothing.
func rejudge(tx *txn, cause Actor, pks []int64, now time.Time) (map[int64]map[string][]string, error) {
	if tx.admission == nil || len(pks) == 0 {
		return nil, nil
	}
	digest := tx.admission.Digest()
	out := make(map[int64]map[string][]string, len(pks))
	var (
		pp      policyPlan
		changes []changeRow
	)
	for chunk := range slices.Chunk(pks, 500) {
		var recs []agentRecord
		if err := tx.Where("pk IN ? AND removed_at IS NULL", chunk).Find(&recs).Error; err != nil {
			return nil, fmt.Errorf("reading agents to judge: %w", err)
		}
		for i := range recs {
			rec := &recs[i]
			var raw []byte
			var source string
			var report sql.NullString
			err := tx.Raw(`SELECT v.raw, v.source, r.report FROM card_versions v LEFT JOIN verifications r
				ON r.agent_pk = v.agent_pk AND r.version = v.number WHERE v.agent_pk = ? AND v.number = ?`,
				rec.PK, rec.CurrentVersion).Row().Scan(&raw, &source, &report)
			if err != nil {
				return nil, fmt.Errorf("reading the card of agent %s: %w", rec.ID, err)
			}
			c, err := card.Parse(raw, StoredCardLimits(tx.limits, raw))
			if err != nil {
				// A stored card that no longer parses under these
				// limits is judged on its next version.
				continue
			}
			in := AdmissionInput{AgentID: rec.ID, CardURL: rec.CardURL, Card: c, Source: source,
				SignatureStatus: rec.SignatureStatus, Health: rec.Health, Provenance: strings.Fields(rec.Provenance)}
			if report.Valid {
				in.Report = json.RawMessage(report.String)
			}
			j := tx.admission.Judge(in)
			listing := rec.Listing
			if pp.judge(rec, j, digest, tx.listing, false, now) {
				changes = append(changes, policyEvent(*rec, now, ""))
			}
			if err := tx.Exec("UPDATE agents SET policy_failing = ?, policy_digest = ? WHERE pk = ?",
				rec.PolicyFailing, rec.PolicyDigest, rec.PK).Error; err != nil {
				return nil, fmt.Errorf("storing the policy results of agent %s: %w", rec.ID, err)
			}
			ids, _ := decodeStrings(rec.PolicyFailing) // written above as a JSON array
			vals := map[string][]string{FieldPolicy: ids}
			if rec.Listing != listing {
				pl, err := storedPlacement(rec.Listing, rec.Collections, rec.Visibility)
				if err != nil {
					return nil, fmt.Errorf("agent %s: %w", rec.ID, err)
				}
				maps.Copy(vals, pl.values())
			}
			out[rec.PK] = vals
		}
	}
	if err := pp.apply(tx, cause); err != nil {
		return nil, err
	}
	if err := appendChanges(tx, changes); err != nil {
		return nil, err
	}
	return out, nil
}

// policyEvent is the EventPolicy row of rec as a judgement leaves it: the
// rules now failing, or the rule that refused a crawled card.
func policyEvent(rec agentRecord, at time.Time, refusedBy string) changeRow {
	detail := `{"failing":` + cmp.Or(rec.PolicyFailing, "[]") + `}`
	if refusedBy != "" {
		b, _ := json.Marshal(map[string]string{"refused_by": refusedBy}) // strings always encode
		detail = string(b)
	}
	return changeRow{AgentPK: rec.PK, AgentID: rec.ID, CardURL: rec.CardURL, Kind: EventPolicy, Version: rec.CurrentVersion,
		At: at.UTC(), Detail: detail}
}
