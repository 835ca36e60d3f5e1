package catalog

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
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

// maxKeysPerLookup bounds the keys of one lookup statement (a card has
// two: its name's and its provider's), so few statements are prepared.
const maxKeysPerLookup = 4

// AgentsByNameKey lists agents (removed ones aside) whose current card
// has one of keys, up to maxNameKeyMatches per key, in the order of keys
// and then of the agents' pks, through the agent_name_keys primary key:
// an index lookup per key, never a scan of the agents. The keys of a card
// are looked up in one statement: the verifier asks for every card it
// checks, and on PostgreSQL each statement is a round trip.
func (s *Store) AgentsByNameKey(ctx context.Context, keys []string) ([]NameKeyMatch, error) {
	var out []NameKeyMatch
	for chunk := range slices.Chunk(keys, maxKeysPerLookup) {
		args := make([]any, 0, 3*len(chunk))
		for _, key := range chunk {
			args = append(args, key, HealthRemoved, maxNameKeyMatches)
		}
		rows, err := s.queryCached(ctx, "agents-by-name-key:"+strconv.Itoa(len(chunk)), nameKeyLookup(len(chunk)), args...)
		if err != nil {
			return nil, fmt.Errorf("looking up name keys: %w", err)
		}
		for rows.Next() {
			var (
				m        NameKeyMatch
				ord, apk int64
			)
			if err := rows.Scan(&ord, &apk, &m.Key, &m.AgentID, &m.CardURL, &m.Text); err != nil {
				rows.Close()
				return nil, fmt.Errorf("looking up name keys: %w", err)
			}
			out = append(out, m)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("looking up name keys: %w", err)
		}
	}
	return out, nil
}

// nameKeyLookup is the statement of AgentsByNameKey for n keys: one
// limited index lookup per key, their rows together.
func nameKeyLookup(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&b, `SELECT * FROM (SELECT %d AS ord, k.agent_pk, k.name_key, a.id, a.card_url, k.text
			FROM agent_name_keys k JOIN agents a ON a.pk = k.agent_pk
			WHERE k.name_key = ? AND a.health <> ? AND a.removed_at IS NULL ORDER BY k.agent_pk LIMIT ?) AS m%d`, i, i)
	}
	b.WriteString(" ORDER BY 1, 2")
	return b.String()
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

// nameKeyRows are the stored rows of an agent's name keys: cleaned,
// each once, none empty.
func nameKeyRows(pk int64, keys []NameKey) []nameKeyRow {
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
	return rows
}
