package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrInvalidListing: a listing change names an unknown state, lacks a
// reason the state needs, or names a replacement that cannot be one. The
// wrapped message says which, for the caller.
var ErrInvalidListing = errors.New("catalog: invalid listing change")

// ActionListing is the audited action of a listing transition.
const ActionListing = "agent.listing"

// maxListingReason bounds a transition's reason.
const maxListingReason = 1000

// ListingPolicy is how new and changed cards enter the listing lifecycle.
type ListingPolicy struct {
	// RequireApproval starts new agents (registered, imported, seeded)
	// pending; without it they start approved, so a first run lists
	// everything.
	RequireApproval bool
	// ReapproveOnChange sends an approved agent back to pending when a new
	// card version arrives; its approved version is kept, so the review
	// shows the diff from it.
	ReapproveOnChange bool
}

func (p ListingPolicy) initial() string {
	if p.RequireApproval {
		return ListingPending
	}
	return ListingApproved
}

// reapproveActor names the catalog as the actor of a send-back on change.
var reapproveActor = System("catalog")

func reapproveReason(version int) string {
	return fmt.Sprintf("card changed (version %d); review the change", version)
}

// ListingPolicy returns the Store's listing policy.
func (s *Store) ListingPolicy() ListingPolicy {
	if p := s.listing.Load(); p != nil {
		return *p
	}
	return ListingPolicy{}
}

// SetListingPolicy replaces the listing policy of the writes that follow
// (Config.Listing sets it at Open).
func (s *Store) SetListingPolicy(p ListingPolicy) { s.listing.Store(&p) }

// sendBackToReview marks changed approved agents pending, inside the
// transaction that stored their new card (recs hold the new state), with
// an audit row per agent in that transaction: the transition is the
// catalog's (reapproveActor), recorded whoever stored the card, with the
// request that did when there was one; cause names that writer (the
// crawler, or the person who registered the URL again).
func sendBackToReview(tx *txn, cause Actor, recs []agentRecord) error {
	actor := reapproveActor
	if cause.Request != nil {
		actor = actor.For(*cause.Request)
	}
	rows := make([]audit, 0, len(recs))
	for _, r := range recs {
		err := tx.Exec(`UPDATE agents SET listing = ?, listing_reason = ?, listing_replacement = '', listing_by = ?,
			listing_at = ? WHERE pk = ?`, r.Listing, r.ListingReason, r.ListingBy, r.ListingAt, r.PK).Error
		if err != nil {
			return fmt.Errorf("sending agent %s back to review: %w", r.ID, err)
		}
		rows = append(rows, audit{action: ActionListing, targetKind: TargetAgent, targetID: r.ID, detail: map[string]any{
			"from": ListingApproved, "to": r.Listing, "version": r.CurrentVersion, "approved_version": r.ApprovedVersion,
			"reason": r.ListingReason, "cause": cause.String()}})
	}
	if err := insertAudit(tx.DB, actor, rows...); err != nil {
		return fmt.Errorf("recording send-back to review: %w", err)
	}
	return nil
}

// ListingChange is a transition asked for by an editor.
type ListingChange struct {
	State  string
	Reason string
	// Replacement is the id of the agent replacing a deprecated one; it
	// must exist and be visible to the scope of the change.
	Replacement string
}

func (ch *ListingChange) validate(id string) error {
	ch.Reason = strings.TrimSpace(ch.Reason)
	ch.Replacement = strings.TrimSpace(ch.Replacement)
	switch {
	case !slices.Contains(ListingStates, ch.State):
		return fmt.Errorf("%w: state must be one of %s", ErrInvalidListing, strings.Join(ListingStates, ", "))
	case (ch.State == ListingRejected || ch.State == ListingDeprecated) && ch.Reason == "":
		return fmt.Errorf("%w: a reason is required to set %s", ErrInvalidListing, ch.State)
	case utf8.RuneCountInString(ch.Reason) > maxListingReason || !utf8.ValidString(ch.Reason):
		return fmt.Errorf("%w: reason must be UTF-8 text of at most %d characters", ErrInvalidListing, maxListingReason)
	case ch.Replacement != "" && ch.State != ListingDeprecated:
		return fmt.Errorf("%w: only a deprecated agent has a replacement", ErrInvalidListing)
	case ch.Replacement == id:
		return fmt.Errorf("%w: an agent cannot replace itself", ErrInvalidListing)
	}
	ch.Reason = cleanText(ch.Reason)
	return nil
}

// SetListing moves an agent to another listing state, with the audit row
// and an "updated" change-feed entry in the same transaction, and updates
// the search index in place (other replicas pick it up by the bumped seq,
// see Sync). Approving records the
// current version as the approved one. An agent the scope does not see is
// ErrNotFound; a bad change ErrInvalidListing.
func (s *Store) SetListing(ctx context.Context, actor Actor, sc Scope, id string, ch ListingChange) (Agent, error) {
	if err := actor.validate(); err != nil {
		return Agent{}, err
	}
	if err := ch.validate(id); err != nil {
		return Agent{}, err
	}
	var up fieldUpdate
	err := s.transact(ctx, func(tx *txn) error {
		var rec agentRecord
		res := tx.Where("id = ?", id).Limit(1).Find(&rec)
		if res.Error != nil {
			return fmt.Errorf("looking up agent %s: %w", id, res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("agent %s: %w", id, ErrNotFound)
		}
		if ok, err := sc.sees(rec.Listing, rec.Visibility, rec.RemovedAt != nil); err != nil || !ok {
			return errors.Join(fmt.Errorf("agent %s: %w", id, ErrNotFound), err)
		}
		if ch.Replacement != "" {
			var r agentRecord
			res := tx.Select("listing", "visibility", "removed_at").Where("id = ?", ch.Replacement).Limit(1).Find(&r)
			if res.Error != nil {
				return fmt.Errorf("looking up replacement %s: %w", ch.Replacement, res.Error)
			}
			ok, err := sc.sees(r.Listing, r.Visibility, r.RemovedAt != nil)
			if err != nil {
				return err
			}
			if res.RowsAffected == 0 || !ok {
				return fmt.Errorf("%w: replacement agent %s not found", ErrInvalidListing, ch.Replacement)
			}
		}
		seqs, err := allocate(tx, "seq", 1)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		approved := rec.ApprovedVersion
		if ch.State == ListingApproved {
			approved = rec.CurrentVersion
		}
		if err := tx.Exec(`UPDATE agents SET listing = ?, listing_reason = ?, listing_replacement = ?, listing_by = ?,
			listing_at = ?, approved_version = ?, seq = ?, updated_at = ? WHERE pk = ?`,
			ch.State, ch.Reason, ch.Replacement, actor.String(), now, approved, seqs[0], now, rec.PK).Error; err != nil {
			return fmt.Errorf("setting listing of agent %s: %w", id, err)
		}
		pl, err := storedPlacement(ch.State, rec.Collections, rec.Visibility)
		if err != nil {
			return fmt.Errorf("agent %s: %w", id, err)
		}
		up = fieldUpdate{pk: rec.PK, prev: rec.Seq, seq: seqs[0], values: pl.values()}
		// Callers who could not see the agent before learn of it from the
		// feed, as of a change.
		if err := appendChanges(tx, []changeRow{{AgentPK: rec.PK, AgentID: rec.ID, CardURL: rec.CardURL, Kind: ChangeUpdated,
			Version: rec.CurrentVersion, At: now}}); err != nil {
			return fmt.Errorf("recording listing of agent %s: %w", id, err)
		}
		detail := map[string]any{"from": rec.Listing, "to": ch.State, "version": rec.CurrentVersion}
		if ch.Reason != "" {
			detail["reason"] = ch.Reason
		}
		if ch.Replacement != "" {
			detail["replacement"] = ch.Replacement
		}
		if rec.Listing != ch.State || ch.Reason != rec.ListingReason || ch.Replacement != rec.ListingReplacement {
			event := NewEvent{Kind: EventListing, AgentPK: rec.PK, AgentID: rec.ID, CardURL: rec.CardURL,
				Version: rec.CurrentVersion, At: now, Detail: detail}
			if err := emitEvent(tx, event); err != nil {
				return err
			}
		}
		return writeAudit(tx.DB, actor, audit{action: ActionListing, targetKind: TargetAgent, targetID: id, detail: detail})
	})
	if err != nil {
		return Agent{}, err
	}
	if err := s.publishFields(ctx, []fieldUpdate{up}); err != nil {
		return Agent{}, fmt.Errorf("indexing listing of agent %s: %w", id, err)
	}
	return s.Agent(ctx, ScopeAll, id)
}

// PendingCount counts the agents awaiting review that the scope would see
// once approved: not removed, and in the collections its groups open
// (Scope's rule without the listing state). It is what a viewer who finds
// nothing is told ("N agents await review"), so the count reveals no
// agent of a collection the viewer could never see, and nothing but the
// number.
func (s *Store) PendingCount(ctx context.Context, sc Scope) (int, error) {
	q := "SELECT COUNT(*) FROM agents a WHERE a.listing = ? AND a.removed_at IS NULL"
	args := []any{ListingPending}
	if !sc.All {
		// As an editor of the same groups: every listing state, the
		// caller's collections only.
		cond, cargs := Scope{Review: true, Groups: sc.Groups}.placementSQL()
		q += " AND " + cond
		args = append(args, cargs...)
	}
	var n int64
	if err := s.db.WithContext(ctx).Raw(q, args...).Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("counting pending agents: %w", err)
	}
	return int(n), nil
}

// PendingAgents lists the agents awaiting review that the scope sees,
// oldest transition first, at most limit.
func (s *Store) PendingAgents(ctx context.Context, sc Scope, limit int) ([]Agent, error) {
	if limit <= 0 || limit > 500 {
		limit = 500
	}
	var ids []string
	if err := s.db.WithContext(ctx).Raw("SELECT id FROM agents WHERE listing = ? ORDER BY COALESCE(listing_at, created_at), pk LIMIT ?",
		ListingPending, limit).Scan(&ids).Error; err != nil {
		return nil, fmt.Errorf("listing pending agents: %w", err)
	}
	out := make([]Agent, 0, len(ids))
	for _, id := range ids {
		a, err := s.Agent(ctx, sc, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
