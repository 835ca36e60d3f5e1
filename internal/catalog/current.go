package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aregistry/registry/internal/card"
)

// CurrentCard is an agent's current card version with what the catalog
// knows about it, for judging the whole catalog at once (`registry policy
// test`).
type CurrentCard struct {
	AgentID, CardURL string
	Health           string
	Listing          string
	Version          int
	// SignatureStatus is the signature facet value (Signature*).
	SignatureStatus string
	// Raw is the current version's bytes, as received.
	Raw []byte
	// Report is the current version's verification report (verify.Report
	// as JSON); nil when the version has none yet.
	Report json.RawMessage
	// Source is how the current version came (Source*).
	Source string
	// Provenance is how the agent came, as the provenance facet says it
	// (Provenance* kinds, a source's Relation*).
	Provenance []string
	// PolicyFailing are the admission policy's rules failing (or
	// errored) on the current version, as stored; PolicyDigest names the
	// policy that judged it ("" none).
	PolicyFailing []string
	PolicyDigest  string
	// Policy are the stored results of those rules, in rule id order.
	Policy []PolicyResult
}

type currentCardRow struct {
	PK              int64
	ID              string
	CardURL         string
	Health          string
	Listing         string
	CurrentVersion  int
	SignatureStatus string
	Raw             []byte
	Report          *string
	Source          string
	Provenance      string
	PolicyFailing   string
	PolicyDigest    string
}

// CurrentCards calls fn with the current card of every agent sc sees that
// is not removed (ScopeAll included: a removed agent has no current
// findings or policy to judge), in creation order. The scope is applied in
// the query, as search applies it in the index, so a door cannot forget
// it. Like ExportAgents, each page is read on its own: consistent per
// agent, not across agents.
func (s *Store) CurrentCards(ctx context.Context, sc Scope, fn func(CurrentCard) error) error {
	where, scopeArgs := "a.removed_at IS NULL", []any(nil)
	if !sc.All {
		cond, args := sc.placementSQL()
		where, scopeArgs = where+" AND "+cond, args
	}
	var after int64
	for {
		var rows []currentCardRow
		args := append(append([]any{after}, scopeArgs...), exportPage)
		err := s.db.WithContext(ctx).Raw(`SELECT a.pk, a.id, a.card_url, a.health, a.listing, a.current_version,
			a.signature_status, v.raw, r.report, v.source, a.provenance, a.policy_failing, a.policy_digest
			FROM agents a JOIN card_versions v ON v.agent_pk = a.pk AND v.number = a.current_version
			LEFT JOIN verifications r ON r.agent_pk = a.pk AND r.version = a.current_version
			WHERE a.pk > ? AND `+where+` ORDER BY a.pk LIMIT ?`, args...).Scan(&rows).Error
		if err != nil {
			return fmt.Errorf("reading current cards: %w", err)
		}
		if len(rows) == 0 {
			return nil
		}
		results, err := s.currentPolicyResults(ctx, rows)
		if err != nil {
			return err
		}
		for _, r := range rows {
			c := CurrentCard{AgentID: r.ID, CardURL: r.CardURL, Health: r.Health, Listing: r.Listing,
				Version: r.CurrentVersion, SignatureStatus: r.SignatureStatus, Raw: r.Raw, Source: r.Source,
				PolicyDigest: r.PolicyDigest, Provenance: strings.Fields(r.Provenance)}
			failing, err := decodeStrings(r.PolicyFailing)
			if err != nil {
				return fmt.Errorf("policy results of agent %s: %w", r.ID, err)
			}
			c.PolicyFailing, c.Policy = failing, results[r.PK]
			if r.Report != nil {
				c.Report = json.RawMessage(*r.Report)
			}
			if err := fn(c); err != nil {
				return err
			}
		}
		after = rows[len(rows)-1].PK
	}
}

// CardLimits are the limits stored cards are re-parsed under (with
// StoredCardLimits), for a reader of CurrentCard.Raw.
func (s *Store) CardLimits() card.Limits { return s.limits }

// currentPolicyResults reads the stored policy results of the current
// versions of rows' agents, by agent pk: one query per page.
func (s *Store) currentPolicyResults(ctx context.Context, rows []currentCardRow) (map[int64][]PolicyResult, error) {
	pks := make([]int64, 0, len(rows))
	version := make(map[int64]int, len(rows))
	for _, r := range rows {
		if r.PolicyFailing != "" && r.PolicyFailing != "[]" {
			pks = append(pks, r.PK)
			version[r.PK] = r.CurrentVersion
		}
	}
	out := make(map[int64][]PolicyResult, len(pks))
	if len(pks) == 0 {
		return out, nil
	}
	res, err := s.db.WithContext(ctx).Raw(`SELECT agent_pk, version, rule_id, action, outcome, message FROM policy_results
		WHERE agent_pk IN ? ORDER BY agent_pk, rule_id`, pks).Rows()
	if err != nil {
		return nil, fmt.Errorf("reading policy results: %w", err)
	}
	defer res.Close()
	for res.Next() {
		var (
			pk int64
			v  int
			r  PolicyResult
		)
		if err := res.Scan(&pk, &v, &r.RuleID, &r.Action, &r.Outcome, &r.Message); err != nil {
			return nil, fmt.Errorf("reading policy results: %w", err)
		}
		if v == version[pk] {
			out[pk] = append(out[pk], r)
		}
	}
	return out, res.Err()
}
