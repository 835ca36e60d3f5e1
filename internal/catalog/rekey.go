package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/a2aregistry/registry/internal/card"
)

// rekeyVersion is migration 00004. It is Go, not SQL, because the key it
// restores is card.CanonicalCardURL (IDNA, RFC 3986 normalization), which
// neither SQLite nor PostgreSQL can compute.
const rekeyVersion = 4

// rekeyMigration is migration 00004: one identity per agent. Older
// releases keyed agents by card URLs canonicalized three different ways
// (an IDN host in Unicode by import, percent-encoded by registration;
// dot segments, "//", empty queries and default ports kept), so one agent
// could be several rows. It rewrites every card_url to its canonical form
// and merges the rows that now share one: every card version is kept,
// renumbered by the time it was received, and the row whose current card
// was received last is the one that survives, with that card current.
// Fetch history and verification reports move with the versions; each
// merged-away agent gets a "removed" entry in the change feed, the
// survivor an "updated" one. Trusted-key origin scopes are canonicalized
// too (card.CanonicalOrigin).
//
// Once every migration has run, Migrate re-derives every agent's indexed
// view from its stored current card (see rederive): that step runs this
// release's write path on the newest schema, which a migration in the
// middle of the sequence cannot do.
//
// Down does nothing: a merge cannot be told apart afterwards, and the
// canonical keys are valid under the older code.
func rekeyMigration(d dialect, lim card.Limits) *goose.Migration {
	up := func(ctx context.Context, tx *sql.Tx) error {
		r := &rekeyTx{tx: tx, dialect: d}
		return rekey(ctx, r, time.Now().UTC())
	}
	noop := func(context.Context, *sql.Tx) error { return nil }
	return goose.NewGoMigration(rekeyVersion, &goose.GoFunc{RunTx: up}, &goose.GoFunc{RunTx: noop})
}

// rederiveVersion is migration 00019, which changes no schema: applying it
// makes Migrate re-derive every agent's indexed view, as after 00004,
// because the card parser's derivation changed (see the migration file).
const rederiveVersion = 19

// rekeyTx runs the migration's statements, written with "?" placeholders,
// on either database.
type rekeyTx struct {
	tx      *sql.Tx
	dialect dialect
}

func (r *rekeyTx) exec(ctx context.Context, q string, args ...any) error {
	if _, err := r.tx.ExecContext(ctx, rebind(r.dialect, q), args...); err != nil {
		if len(q) > 80 {
			q = q[:80] + "…"
		}
		return fmt.Errorf("running %q: %w", q, err)
	}
	return nil
}

func (r *rekeyTx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return r.tx.QueryContext(ctx, rebind(r.dialect, q), args...)
}

// rekeyAgent is one agents row as the migration sees it.
type rekeyAgent struct {
	pk, current, seq int64
	id, url, key     string
	received         time.Time // when its current version was received
	paused           bool
}

// rekeyVersionRow is one card_versions row of a merged agent.
type rekeyVersionRow struct {
	agentPK, number int64
	received        time.Time
}

func rekey(ctx context.Context, r *rekeyTx, now time.Time) error {
	agents, err := rekeyLoadAgents(ctx, r)
	if err != nil {
		return fmt.Errorf("migration 00004: reading agents: %w", err)
	}
	groups := map[string][]*rekeyAgent{}
	var keys []string
	for _, a := range agents {
		if _, ok := groups[a.key]; !ok {
			keys = append(keys, a.key)
		}
		groups[a.key] = append(groups[a.key], a)
	}
	slices.Sort(keys)
	for _, key := range keys {
		g := groups[key]
		if len(g) == 1 {
			if g[0].url != key {
				if err := r.exec(ctx, "UPDATE agents SET card_url = ? WHERE pk = ?", key, g[0].pk); err != nil {
					return fmt.Errorf("migration 00004: rekeying %s: %w", g[0].url, err)
				}
			}
			continue
		}
		if err := rekeyMerge(ctx, r, key, g, now); err != nil {
			return fmt.Errorf("migration 00004: merging %d agents into %s: %w", len(g), key, err)
		}
	}
	if err := rekeyTrustedKeys(ctx, r); err != nil {
		return fmt.Errorf("migration 00004: trusted key origins: %w", err)
	}
	return nil
}

func rekeyLoadAgents(ctx context.Context, r *rekeyTx) ([]*rekeyAgent, error) {
	rows, err := r.query(ctx, `SELECT a.pk, a.id, a.card_url, a.current_version, a.seq, v.received_at, COALESCE(c.paused, ?)
		FROM agents a JOIN card_versions v ON v.agent_pk = a.pk AND v.number = a.current_version
		LEFT JOIN crawl_state c ON c.agent_pk = a.pk ORDER BY a.pk`, true)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*rekeyAgent
	for rows.Next() {
		a := &rekeyAgent{}
		if err := rows.Scan(&a.pk, &a.id, &a.url, &a.current, &a.seq, &a.received, &a.paused); err != nil {
			return nil, err
		}
		a.key = a.url
		// URNs (imports named by content hash) have no other spelling.
		if k, err := card.CanonicalCardURL(a.url); err == nil {
			a.key = k
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// rekeyMerge folds the agents of g into the one whose current card is the
// newest (received last; then the higher pk, the later registration).
func rekeyMerge(ctx context.Context, r *rekeyTx, key string, g []*rekeyAgent, now time.Time) error {
	slices.SortFunc(g, func(a, b *rekeyAgent) int {
		if c := a.received.Compare(b.received); c != 0 {
			return c
		}
		return cmp.Compare(a.pk, b.pk)
	})
	winner, losers := g[len(g)-1], g[:len(g)-1]
	pks := make([]any, len(g))
	for i, a := range g {
		pks[i] = a.pk
	}
	in := "(" + strings.TrimSuffix(strings.Repeat("?,", len(g)), ",") + ")"
	rows, err := r.query(ctx, "SELECT agent_pk, number, received_at FROM card_versions WHERE agent_pk IN "+in, pks...)
	if err != nil {
		return err
	}
	var versions []rekeyVersionRow
	for rows.Next() {
		var v rekeyVersionRow
		if err := rows.Scan(&v.agentPK, &v.number, &v.received); err != nil {
			rows.Close()
			return err
		}
		versions = append(versions, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// Oldest first; the survivor's current card last whatever the clocks
	// said, so it stays current.
	isCurrent := func(v rekeyVersionRow) bool { return v.agentPK == winner.pk && v.number == winner.current }
	slices.SortFunc(versions, func(a, b rekeyVersionRow) int {
		if ca, cb := isCurrent(a), isCurrent(b); ca != cb {
			if ca {
				return 1
			}
			return -1
		}
		if c := a.received.Compare(b.received); c != 0 {
			return c
		}
		if c := cmp.Compare(a.agentPK, b.agentPK); c != 0 {
			return c
		}
		return cmp.Compare(a.number, b.number)
	})
	// Two passes through negative numbers, so no renumbered row collides
	// with one not yet moved (the primary key is (agent_pk, number)).
	for i, v := range versions {
		n := -int64(i + 1)
		if err := r.exec(ctx, "UPDATE card_versions SET agent_pk = ?, number = ? WHERE agent_pk = ? AND number = ?", winner.pk, n, v.agentPK, v.number); err != nil {
			return err
		}
		if err := r.exec(ctx, "UPDATE verifications SET agent_pk = ?, version = ? WHERE agent_pk = ? AND version = ?", winner.pk, n, v.agentPK, v.number); err != nil {
			return err
		}
	}
	if err := r.exec(ctx, "UPDATE card_versions SET number = -number WHERE agent_pk = ? AND number < 0", winner.pk); err != nil {
		return err
	}
	if err := r.exec(ctx, "UPDATE verifications SET version = -version WHERE agent_pk = ? AND version < 0", winner.pk); err != nil {
		return err
	}

	paused := true
	for _, a := range g {
		paused = paused && a.paused
	}
	seq, err := rekeySeq(ctx, r)
	if err != nil {
		return err
	}
	for _, l := range losers {
		if err := r.exec(ctx, "UPDATE fetch_log SET agent_pk = ? WHERE agent_pk = ?", winner.pk, l.pk); err != nil {
			return err
		}
		if err := r.exec(ctx, "DELETE FROM agents WHERE pk = ?", l.pk); err != nil {
			return err
		}
		if err := r.exec(ctx, "INSERT INTO changes (agent_pk, agent_id, card_url, kind, version, at) VALUES (?, ?, ?, ?, ?, ?)",
			l.pk, l.id, l.url, ChangeRemoved, l.current, now); err != nil {
			return err
		}
	}
	current := int64(len(versions))
	if err := r.exec(ctx, "UPDATE agents SET card_url = ?, current_version = ?, seq = ?, updated_at = ? WHERE pk = ?",
		key, current, seq, now, winner.pk); err != nil {
		return err
	}
	if err := r.exec(ctx, "UPDATE crawl_state SET paused = ? WHERE agent_pk = ?", paused, winner.pk); err != nil {
		return err
	}
	return r.exec(ctx, "INSERT INTO changes (agent_pk, agent_id, card_url, kind, version, at) VALUES (?, ?, ?, ?, ?, ?)",
		winner.pk, winner.id, key, ChangeUpdated, current, now)
}

// rekeySeq takes the next agents.seq, as allocate does.
func rekeySeq(ctx context.Context, r *rekeyTx) (int64, error) {
	q := "SELECT COALESCE(MAX(seq), 0) + 1 FROM agents"
	if r.dialect == dialectPostgres {
		q = "SELECT nextval('agent_seq')"
	}
	var n int64
	if err := r.tx.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("allocating agents.seq: %w", err)
	}
	return n, nil
}

func rekeyTrustedKeys(ctx context.Context, r *rekeyTx) error {
	rows, err := r.query(ctx, "SELECT id, origins FROM trusted_keys")
	if err != nil {
		return err
	}
	type row struct{ id, origins string }
	var all []row
	for rows.Next() {
		var k row
		if err := rows.Scan(&k.id, &k.origins); err != nil {
			rows.Close()
			return err
		}
		all = append(all, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, k := range all {
		var origins []string
		if err := json.Unmarshal([]byte(k.origins), &origins); err != nil {
			return fmt.Errorf("trusted key %s: %w", k.id, err)
		}
		var canon []string
		for _, o := range origins {
			if c, err := card.CanonicalOrigin(o); err == nil {
				o = c
			}
			if !slices.Contains(canon, o) {
				canon = append(canon, o)
			}
		}
		b, err := json.Marshal(canon)
		if err != nil {
			return err
		}
		if string(b) != k.origins {
			if err := r.exec(ctx, "UPDATE trusted_keys SET origins = ? WHERE id = ?", string(b), k.id); err != nil {
				return err
			}
		}
	}
	return nil
}

// rederive rebuilds the indexed view of every agent (summary, name and
// other columns, skills, interfaces, schemes, findings) from its stored
// current card with this release's parser, which reads protocol versions,
// bindings, legacy authentication and skills without ids as declared, and
// marks every verification report stale so the runner redoes the security
// audit. A stored card this parser refuses (a non-card an older release
// accepted) keeps its old view. Migrate runs it after migration 00004
// (see rekeyMigration) or 00019 (rederiveVersion), on the newest schema,
// through the same functions that store a new card version. It works in
// batches of agents, one transaction each, and needs no index: Migrate
// runs before it is built.
func (s *Store) rederive(ctx context.Context) error {
	var after int64
	for {
		var batch []struct {
			PK  int64
			Raw []byte
		}
		if err := s.db.WithContext(ctx).Raw(`SELECT a.pk, v.raw FROM agents a
			JOIN card_versions v ON v.agent_pk = a.pk AND v.number = a.current_version
			WHERE a.pk > ? ORDER BY a.pk LIMIT 500`, after).Scan(&batch).Error; err != nil {
			return fmt.Errorf("re-deriving the indexed view: %w", err)
		}
		if len(batch) == 0 {
			break
		}
		after = batch[len(batch)-1].PK
		err := s.transact(ctx, func(tx *txn) error {
			var (
				d   derivedRows
				pks []int64
			)
			for _, a := range batch {
				// This release's write path, admission rules included:
				// a card it would refuse keeps its old view.
				lim := StoredCardLimits(s.limits, a.Raw)
				lim.Stored = false
				c, err := card.Parse(a.Raw, lim)
				if err != nil {
					continue
				}
				summary, err := encodeSummaryRecord(recordOfSummary(summaryOf(c)))
				if err != nil {
					return err
				}
				if err := tx.Exec(`UPDATE agents SET name = ?, description = ?, provider = ?, agent_version = ?, shape = ?,
					protocol_versions = ?, summary = ?, derived_sha256 = '' WHERE pk = ?`, cleanText(c.Name), cleanText(c.Description),
					cleanText(providerOf(c)), cleanText(c.Version), string(c.Shape), strings.Join(c.ProtocolVersions, ","),
					summary, a.PK).Error; err != nil {
					return err
				}
				if err := d.add(a.PK, c); err != nil {
					return err
				}
				pks = append(pks, a.PK)
			}
			if err := deleteDerived(tx, pks); err != nil {
				return err
			}
			return d.write(tx)
		})
		if err != nil {
			return fmt.Errorf("re-deriving the indexed view: %w", err)
		}
	}
	if err := s.db.WithContext(ctx).Exec("UPDATE verifications SET stale = ?", true).Error; err != nil {
		return fmt.Errorf("marking verification reports stale: %w", err)
	}
	return nil
}
