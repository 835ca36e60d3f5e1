package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/search"
)

// An agent's representative queries are the questions the entries of
// sources' manifests that name it say it answers (ARD's
// representativeQueries, kept in source_entries). Search indexes them as
// a column of its own (search.ColQueries), read where the rest of the
// text is: by card writes (addSourceQueries), index builds and reloads
// (loadDocs, entryQueries). They are no part of the card, so a source
// check or deletion that changes them gives the agent a new seq and
// reloads its document (requery).

// Only a manifest on the card's own registrable domain (card.PublisherOfCard)
// speaks for it here: another domain's manifest may list an agent, and
// brings it in, but its words must not rank someone else's agent
// (ownQueries).

// Bounds on what an agent's queries add to its text: a manifest is the
// publisher's word, and a long list would bury the card's own.
const (
	maxIndexedQueries  = 32
	maxIndexedQueryLen = 256
)

// entryQueriesWhere selects the entries that vouch for an agent: a
// skipped entry names none.
const entryQueriesWhere = "e.agent_id <> '' AND e.outcome <> '" + EntrySkipped + "'"

// queriesText is the queries column of an agent's text: the queries of
// its entries (JSON arrays, in source and position order), trimmed,
// without repeats (ignoring case), at most maxIndexedQueries of at most
// maxIndexedQueryLen bytes, one a line.
func queriesText(stored []string) string {
	var kept []string
	for _, raw := range stored {
		qs, err := decodeStrings(raw)
		if err != nil {
			// Written by this package as a JSON array; an unreadable one
			// adds nothing rather than failing the agent's document.
			continue
		}
		for _, q := range qs {
			q = strings.TrimSpace(q)
			if len(q) > maxIndexedQueryLen {
				q = strings.ToValidUTF8(q[:maxIndexedQueryLen], "")
			}
			if q == "" || slices.ContainsFunc(kept, func(k string) bool { return strings.EqualFold(k, q) }) {
				continue
			}
			if len(kept) == maxIndexedQueries {
				return strings.Join(kept, "\n")
			}
			kept = append(kept, q)
		}
	}
	return strings.Join(kept, "\n")
}

// ownQueries tells whether an entry of the manifest at manifestURL may
// add its queries to the text of the agent whose card is at cardURL: the
// manifest is on the card's registrable domain.
func ownQueries(manifestURL, cardURL string) bool {
	m, err := card.PublisherOfCard(manifestURL)
	if err != nil {
		return false
	}
	c, err := card.PublisherOfCard(cardURL)
	return err == nil && m == c
}

// sourceQueries reads the stored queries of the entries naming agents
// ids that may speak for them (ownQueries), by agent id.
func sourceQueries(tx *txn, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	for chunk := range slices.Chunk(ids, 500) {
		var rows []struct {
			AgentID, RepresentativeQueries, ManifestURL, CardURL string
		}
		if err := tx.Table("source_entries AS e").Joins("JOIN agents a ON a.id = e.agent_id").
			Select("e.agent_id", "e.representative_queries", "e.manifest_url", "a.card_url").
			Where(entryQueriesWhere+" AND e.agent_id IN ?", chunk).Order("e.source_id, e.position").
			Find(&rows).Error; err != nil {
			return nil, fmt.Errorf("representative queries of agents: %w", err)
		}
		for _, r := range rows {
			if ownQueries(r.ManifestURL, r.CardURL) {
				out[r.AgentID] = append(out[r.AgentID], r.RepresentativeQueries)
			}
		}
	}
	return out, nil
}

// addSourceQueries fills the queries column of the index documents of a
// card write from their agents' stored entries (recs, found by pk).
func addSourceQueries(tx *txn, docs []indexedDoc, recs []agentRecord) error {
	if len(docs) == 0 {
		return nil
	}
	idOf := make(map[int64]string, len(recs))
	for i := range recs {
		idOf[recs[i].PK] = recs[i].ID
	}
	ids := make([]string, 0, len(docs))
	for _, d := range docs {
		ids = append(ids, idOf[d.pk])
	}
	qs, err := sourceQueries(tx, ids)
	if err != nil {
		return err
	}
	for i := range docs {
		docs[i].text[search.ColQueries] = queriesText(qs[idOf[docs[i].pk]])
	}
	return nil
}

// queryRowsByPK merges the entries' queries into loadDocs' pk-ordered
// read: rows of (agent pk, stored queries) ordered by pk.
type queryRowsByPK struct {
	rows *sql.Rows
	pk   int64 // of the row read ahead; 0 when done
	raw  string
	// own: the row's manifest may speak for the agent (ownQueries).
	own bool
}

// entryQueries starts loadDocs' read of the entries' queries; where (on
// agents) narrows it like the agents' read.
func (s *Store) entryQueries(ctx context.Context, where string, args []any) (*queryRowsByPK, error) {
	q := "SELECT a.pk, e.representative_queries, e.manifest_url, a.card_url FROM source_entries e JOIN agents a ON a.id = e.agent_id WHERE " + entryQueriesWhere
	if where != "" {
		q += " AND e.agent_id IN (SELECT id FROM agents WHERE " + where + ")"
	}
	rows, err := s.queryRows(s.stmtCtx(ctx), q+" ORDER BY a.pk, e.source_id, e.position", args...)
	if err != nil {
		return nil, fmt.Errorf("representative queries of agents: %w", err)
	}
	qr := &queryRowsByPK{rows: rows}
	if err := qr.advance(); err != nil {
		rows.Close()
		return nil, fmt.Errorf("representative queries of agents: %w", err)
	}
	return qr, nil
}

func (q *queryRowsByPK) advance() error {
	q.pk = 0
	if !q.rows.Next() {
		return q.rows.Err()
	}
	var manifestURL, cardURL string
	if err := q.rows.Scan(&q.pk, &q.raw, &manifestURL, &cardURL); err != nil {
		return err
	}
	q.own = ownQueries(manifestURL, cardURL)
	return nil
}

// textOf sets the queries column of agent pk's text t, skipping the
// rows of agents below it (not read: removed, or outside the read).
func (q *queryRowsByPK) textOf(pk int64, t searchText) (searchText, error) {
	var stored []string
	for q.pk != 0 && q.pk <= pk {
		if q.pk == pk && q.own {
			stored = append(stored, q.raw)
		}
		if err := q.advance(); err != nil {
			return t, fmt.Errorf("representative queries of agent %d: %w", pk, err)
		}
	}
	t[search.ColQueries] = queriesText(stored)
	return t, nil
}

// requery runs change, a write to source sourceID's entries that also
// names agents named (its new entries'), inside tx, and gives every
// listed agent whose queries column it changed a new seq (and
// updated_at, for other replicas' syncs). It returns their pks, to
// reload after commit (Store.refreshDocs).
func requery(tx *txn, sourceID string, named []string, at time.Time, change func() error) ([]int64, error) {
	var ids []string
	if err := tx.Table("source_entries").Where("source_id = ? AND agent_id <> ''", sourceID).
		Distinct().Pluck("agent_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("agents of source %s: %w", sourceID, err)
	}
	ids = slices.Compact(slices.Sorted(slices.Values(append(ids, named...))))
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == "" })
	before, err := sourceQueries(tx, ids)
	if err != nil {
		return nil, err
	}
	if err := change(); err != nil {
		return nil, err
	}
	after, err := sourceQueries(tx, ids)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, id := range ids {
		if queriesText(before[id]) != queriesText(after[id]) {
			changed = append(changed, id)
		}
	}
	var pks []int64
	if err := lockAcross(tx, "id", changed); err != nil {
		return nil, err
	}
	for chunk := range slices.Chunk(changed, lockChunk) {
		var recs []agentRecord
		if err := tx.locked().Select("pk").Where("id IN ? AND removed_at IS NULL", chunk).Order(lockOrder).Find(&recs).Error; err != nil {
			return nil, fmt.Errorf("agents of changed queries: %w", err)
		}
		seqs, err := allocate(tx, "seq", len(recs))
		if err != nil {
			return nil, err
		}
		// One statement per chunk, not one per agent: a source's first
		// check changes the queries of every agent it brings.
		rows := make([]agentSeqRow, len(recs))
		for i, r := range recs {
			rows[i] = agentSeqRow{PK: r.PK, Seq: seqs[i], UpdatedAt: at}
			pks = append(pks, r.PK)
		}
		if err := updateRows(tx, agentSeqUpdate, rows); err != nil {
			return nil, fmt.Errorf("re-indexing agents: %w", err)
		}
	}
	return pks, nil
}

// agentSeqRow gives an agent a new seq, for its document to be read
// again.
type agentSeqRow struct {
	PK, Seq   int64
	UpdatedAt time.Time
}

var agentSeqUpdate = bulkUpdate[agentSeqRow]{
	table: "agents", key: "pk",
	cols: []bulkCol{{"pk", pgBigint}, {"seq", pgBigint}, {"updated_at", pgTimestamp}},
	args: func(a []any, r agentSeqRow) []any { return append(a, r.PK, r.Seq, r.UpdatedAt) },
}

// afterRequery reloads the index documents of agents whose queries a
// committed source write changed (requery).
func (s *Store) afterRequery(ctx context.Context, pks []int64) {
	if err := s.refreshDocs(ctx, pks); err != nil {
		s.log.Warn("refreshing search index after a change of representative queries", "err", err)
	}
}
