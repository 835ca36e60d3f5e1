package catalog

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// ActionPolicyRejudge is the audit action of a re-judgement of the
// catalog by a new admission policy (Rejudge); its detail holds the
// policy's digest and what changed.
const ActionPolicyRejudge = "policy.rejudge"

// TargetPolicy is the audit target kind of the admission policy; its id
// is the policy's digest.
const TargetPolicy = "policy"

// rejudgeBatch is how many agents one transaction of Rejudge judges: a
// batch holds their rows locked, so it stays short next to the writes
// of crawls and registrations.
const rejudgeBatch = 200

// RejudgeStats is what Rejudge did.
type RejudgeStats struct {
	// Digest names the policy that judged.
	Digest string `json:"digest"`
	// Judged counts the agents judged; Changed those whose failing rules
	// changed; Held and Released those the policy moved to pending or
	// back out of it.
	Judged   int `json:"judged"`
	Changed  int `json:"changed"`
	Held     int `json:"held"`
	Released int `json:"released"`
	// Done is false when the run stopped early: ctx ended, or another
	// policy came into force (which judges the catalog in turn).
	Done bool `json:"done"`
}

// Rejudge judges the current version of every agent (removed ones aside)
// by the admission policy in force, when another policy or none judged
// it: what a policy turned on or changed does to the catalog already
// there. It works in batches of rejudgeBatch agents, each in a
// transaction of its own that writes what a verdict's judgement writes
// (the results, a hold or its release with its audit row, an
// agent.policy event when the failing rules change) and moves the
// agents it changed in the search index. An agent a write judged by the
// same policy meanwhile is skipped, so a run cut short (ctx, a restart)
// is resumed by the next. An audit row (ActionPolicyRejudge) records a
// run that judged any agent. Without a policy it does nothing.
func (s *Store) Rejudge(ctx context.Context, actor Actor) (RejudgeStats, error) {
	if err := actor.validate(); err != nil {
		return RejudgeStats{}, err
	}
	adm := s.Admission()
	if adm == nil {
		return RejudgeStats{Done: true}, nil
	}
	st := RejudgeStats{Digest: adm.Digest()}
	var after int64
	for {
		if ctx.Err() != nil {
			break
		}
		var pks []int64
		err := s.db.WithContext(ctx).Raw(`SELECT pk FROM agents WHERE pk > ? AND removed_at IS NULL AND policy_digest <> ?
			ORDER BY pk LIMIT ?`, after, st.Digest, rejudgeBatch).Scan(&pks).Error
		if err != nil {
			return st, fmt.Errorf("listing agents to judge: %w", err)
		}
		if len(pks) == 0 {
			st.Done = true
			break
		}
		after = pks[len(pks)-1]
		var ups []fieldUpdate
		stale := false
		err = s.transact(ctx, func(tx *txn) error {
			if tx.admission == nil || tx.admission.Digest() != st.Digest {
				stale = true
				return nil
			}
			var err error
			ups, err = rejudgeBatchOf(tx, actor, pks, &st)
			return err
		})
		if err != nil {
			return st, fmt.Errorf("judging agents again: %w", err)
		}
		if stale {
			break
		}
		if err := s.publishFields(ctx, ups); err != nil {
			s.log.Warn("refreshing search index after the admission policy judged again", "err", err)
		}
	}
	if st.Judged > 0 {
		row := audit{action: ActionPolicyRejudge, targetKind: TargetPolicy, targetID: st.Digest, detail: st}
		if err := insertAudit(s.db.WithContext(context.WithoutCancel(ctx)), actor, row); err != nil {
			return st, fmt.Errorf("recording the admission policy's judgement: %w", err)
		}
	}
	return st, nil
}

// rejudgeBatchOf judges the agents pks again inside tx (their rows locked)
// and gives those whose index fields changed a new seq, so the index and
// the other replicas' Sync take the change; it adds to st what it did and
// returns the index changes.
func rejudgeBatchOf(tx *txn, actor Actor, pks []int64, st *RejudgeStats) ([]fieldUpdate, error) {
	type before struct {
		PK            int64
		Seq           int64
		PolicyFailing string
		Listing       string
	}
	var was []before
	if err := tx.locked().Table("agents").Select("pk", "seq", "policy_failing", "listing").
		Where("pk IN ? AND removed_at IS NULL", pks).Order(lockOrder).Find(&was).Error; err != nil {
		return nil, fmt.Errorf("locking agents to judge: %w", err)
	}
	judged := make([]int64, len(was))
	for i, w := range was {
		judged[i] = w.PK
	}
	now := time.Now().UTC()
	vals, err := rejudge(tx, actor, judged, now)
	if err != nil {
		return nil, err
	}
	var after []before
	if err := tx.Table("agents").Select("pk", "seq", "policy_failing", "listing").Where("pk IN ?", judged).
		Find(&after).Error; err != nil {
		return nil, fmt.Errorf("reading judged agents: %w", err)
	}
	prev := make(map[int64]before, len(was))
	for _, w := range was {
		prev[w.PK] = w
	}
	var changed []before
	for _, a := range after {
		if _, ok := vals[a.PK]; !ok {
			continue // a card that no longer parses is judged on its next version
		}
		st.Judged++
		p := prev[a.PK]
		failingChanged := cmpFailing(p.PolicyFailing, a.PolicyFailing)
		if failingChanged {
			st.Changed++
		}
		switch {
		case a.Listing == p.Listing:
		case a.Listing == ListingPending:
			st.Held++
		case p.Listing == ListingPending:
			st.Released++
		}
		if failingChanged || a.Listing != p.Listing {
			changed = append(changed, p)
		}
	}
	seqs, err := allocate(tx, "seq", len(changed))
	if err != nil {
		return nil, err
	}
	ups := make([]fieldUpdate, len(changed))
	for i, c := range changed {
		if err := tx.Exec("UPDATE agents SET seq = ?, updated_at = ? WHERE pk = ?", seqs[i], now, c.PK).Error; err != nil {
			return nil, fmt.Errorf("storing the judgement of agent %d: %w", c.PK, err)
		}
		ups[i] = fieldUpdate{pk: c.PK, prev: c.Seq, seq: seqs[i], values: vals[c.PK]}
	}
	return ups, nil
}

// cmpFailing reports whether two stored policy_failing arrays differ.
func cmpFailing(a, b string) bool {
	x, errA := decodeStrings(a)
	y, errB := decodeStrings(b)
	return errA != nil || errB != nil || !slices.Equal(x, y)
}
