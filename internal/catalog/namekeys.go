package catalog

import (
	"context"
	"fmt"
)

// NameKey is a confusable key of an agent's current name or provider
// (contentscan.Key): the catalog stores it opaquely with the agent's
// verification report and finds agents by it.
type NameKey struct {
	Key  string
	Text string
}

// NameKeyMatch is an agent holding a key.
type NameKeyMatch struct {
	Key     string
	AgentID string
	CardURL string
	Text    string
}

// maxNameKeyMatches bounds the agents one key returns: a name many agents
// share needs a few of them named, not all.
const maxNameKeyMatches = 20

// AgentsByNameKey lists agents (removed ones aside) whose current card
// has one of keys, up to maxNameKeyMatches per key, through the
// agent_name_keys primary key: an index lookup per key, never a scan of
// the agents.
func (s *Store) AgentsByNameKey(ctx context.Context, keys []string) ([]NameKeyMatch, error) {
	var out []NameKeyMatch
	for _, key := range keys {
		rows, err := s.queryCached(ctx, "agents-by-name-key", `SELECT k.name_key, a.id, a.card_url, k.text
			FROM agent_name_keys k JOIN agents a ON a.pk = k.agent_pk
			WHERE k.name_key = ? AND a.health <> ? AND a.removed_at IS NULL ORDER BY k.agent_pk LIMIT ?`,
			key, HealthRemoved, maxNameKeyMatches)
		if err != nil {
			return nil, fmt.Errorf("looking up name key: %w", err)
		}
		for rows.Next() {
			var m NameKeyMatch
			if err := rows.Scan(&m.Key, &m.AgentID, &m.CardURL, &m.Text); err != nil {
				rows.Close()
				return nil, fmt.Errorf("looking up name key: %w", err)
			}
			out = append(out, m)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("looking up name key: %w", err)
		}
	}
	return out, nil
}

type nameKeyRow struct {
	Key     string
	AgentPK int64
	Text    string
}

var nameKeysTable = bulkTable[nameKeyRow]{
	name: "agent_name_keys",
	cols: []bulkCol{{"name_key", pgText}, {"agent_pk", pgBigint}, {"text", pgText}},
	args: func(a []any, r nameKeyRow) []any { return append(a, r.Key, r.AgentPK, r.Text) },
}

// replaceNameKeys makes keys the agent's stored name keys.
func replaceNameKeys(tx *txn, agentID string, pk int64, keys []NameKey) error {
	if err := tx.Exec("DELETE FROM agent_name_keys WHERE agent_pk = ?", pk).Error; err != nil {
		return fmt.Errorf("storing name keys of agent %s: %w", agentID, err)
	}
	rows := make([]nameKeyRow, 0, len(keys))
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		key := cleanText(k.Key)
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		rows = append(rows, nameKeyRow{Key: key, AgentPK: pk, Text: cleanText(k.Text)})
	}
	if err := insertRows(tx, nameKeysTable, rows); err != nil {
		return fmt.Errorf("storing name keys of agent %s: %w", agentID, err)
	}
	return nil
}
