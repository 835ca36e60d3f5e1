package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"github.com/a2aregistry/registry/internal/card"
)

// txn is a write transaction: gorm's transaction and what the write
// functions of one Store share (dialect, cached bulk statements). Write
// functions take it as their first argument, so several compose inside one
// transaction.
type txn struct {
	*gorm.DB
	ctx   context.Context
	sql   *sql.Tx // nil when gorm's connection is not a *sql.Tx
	d     dialect
	stmts *stmtCache
	// listing is the Store's listing policy, for new and changed cards.
	listing ListingPolicy
	// admission is the Store's admission policy; nil when none. limits
	// bound the parsing of stored cards it judges again.
	admission Admission
	limits    card.Limits
}

// transact runs fn in one write transaction.
func (s *Store) transact(ctx context.Context, fn func(tx *txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx = s.stmtCtx(ctx)
	s.stmts.prepareWanted(ctx)
	return s.db.WithContext(ctx).Transaction(func(g *gorm.DB) error {
		sqlTx, _ := g.Statement.ConnPool.(*sql.Tx)
		return fn(&txn{DB: g, ctx: ctx, sql: sqlTx, d: s.dialect, stmts: s.stmts, listing: s.ListingPolicy(),
			admission: s.Admission(), limits: s.limits})
	})
}

// txAttempts bounds how often transactRetrying runs a transaction that
// PostgreSQL aborts as a deadlock's victim or a serialization failure.
const txAttempts = 3

// transactRetrying runs fn as transact does and, when PostgreSQL aborts
// the transaction as a deadlock's victim (40P01) or for a serialization
// failure (40001), runs it again from the start after a short pause, up to
// txAttempts in all: the other transaction has gone on, and the same work
// done again finds what it wrote. The writers lock agents in one order
// (lockOrder) so that they do not deadlock; this is the net under that
// rule, for the crawler's and verifier's batches that would otherwise be
// lost to one. fn must be safe to run again: it may set variables of its
// caller's, but each run must set them from scratch.
func (s *Store) transactRetrying(ctx context.Context, fn func(tx *txn) error) error {
	for attempt := 1; ; attempt++ {
		err := s.transact(ctx, fn)
		code := txConflict(err)
		if code == "" || attempt == txAttempts {
			return err
		}
		s.log.Warn("transaction aborted by the database, running it again", "sqlstate", code, "attempt", attempt)
		// Staggered, so that two victims of one another do not meet again
		// at once: 20, 40 ms.
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		}
	}
}

// txConflict returns the SQLSTATE of err when it is a PostgreSQL deadlock
// (40P01) or serialization failure (40001), and "" otherwise.
func txConflict(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001") {
		return pe.Code
	}
	return ""
}

// Column types, for the casts PostgreSQL needs on the parameters of a
// VALUES list (it cannot infer them). keep marks a column of a bulk update
// whose NULL keeps the stored value.
const (
	pgBigint    = "bigint"
	pgInteger   = "integer"
	pgText      = "text"
	pgBoolean   = "boolean"
	pgTimestamp = "timestamptz"
	pgBytea     = "bytea"
	keep        = "?keep"
)

type bulkCol struct {
	name string
	// typ is the column's PostgreSQL type, with keep appended for an
	// update column whose NULL keeps the stored value.
	typ string
}

// bulkTable is a table written with multi-row INSERTs of rows R.
type bulkTable[R any] struct {
	name string
	cols []bulkCol
	// conflict, when set, follows the VALUES list (an ON CONFLICT
	// clause): a row may then replace a stored one.
	conflict string
	args     func([]any, R) []any
}

// bulkUpdate updates one row of table per R, matched on key (the first
// column), in one UPDATE … FROM (VALUES …) statement per batch.
type bulkUpdate[R any] struct {
	table, key string
	cols       []bulkCol
	// set is extra assignments made to every updated row.
	set  string
	args func([]any, R) []any
}

// maxBulkRows bounds the rows of one statement (SQLite allows 32,766
// parameters, PostgreSQL 65,535).
const maxBulkRows = 200

// insertRows writes rows with multi-row INSERTs: one statement per table and
// batch rather than one per row, which is most of the cost of an upsert.
func insertRows[R any](tx *txn, t bulkTable[R], rows []R) error {
	if len(rows) == 0 {
		return nil
	}
	head := "INSERT INTO " + t.name + " (" + colNames(t.cols) + ") VALUES "
	tail := ""
	if t.conflict != "" {
		tail = " " + t.conflict
	}
	err := execChunks(tx, "i:"+t.name, len(t.cols), rows, t.args, func(n int) string {
		return head + tuples(tx.d, t.cols, n, false) + tail
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", t.name, err)
	}
	return nil
}

// updateRows applies rows with UPDATE … FROM a VALUES list. A key must not
// repeat within rows: which of two rows wins would be unspecified.
func updateRows[R any](tx *txn, u bulkUpdate[R], rows []R) error {
	if len(rows) == 0 {
		return nil
	}
	var set strings.Builder
	for _, c := range u.cols[1:] {
		if set.Len() > 0 {
			set.WriteString(", ")
		}
		if strings.HasSuffix(c.typ, keep) {
			fmt.Fprintf(&set, "%s = COALESCE(v.%s, %s.%s)", c.name, c.name, u.table, c.name)
		} else {
			fmt.Fprintf(&set, "%s = v.%s", c.name, c.name)
		}
	}
	if u.set != "" {
		set.WriteString(", " + u.set)
	}
	head := "WITH v (" + colNames(u.cols) + ") AS (VALUES "
	tail := ") UPDATE " + u.table + " SET " + set.String() + " FROM v WHERE " + u.table + "." + u.key + " = v." + u.cols[0].name
	err := execChunks(tx, "u:"+u.table+":"+u.cols[1].name, len(u.cols), rows, u.args, func(n int) string {
		return head + tuples(tx.d, u.cols, n, true) + tail
	})
	if err != nil {
		return fmt.Errorf("updating %s: %w", u.table, err)
	}
	return nil
}

func colNames(cols []bulkCol) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// tuples writes n parameter tuples in the dialect's placeholder style;
// cast adds PostgreSQL type casts (needed in a VALUES list that is not an
// INSERT's).
func tuples(d dialect, cols []bulkCol, n int, cast bool) string {
	var b strings.Builder
	p := 0
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j, c := range cols {
			if j > 0 {
				b.WriteByte(',')
			}
			p++
			if d != dialectPostgres {
				b.WriteByte('?')
				continue
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(p))
			if cast {
				b.WriteString("::")
				b.WriteString(strings.TrimSuffix(c.typ, keep))
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// execChunks runs rows through statements of at most maxBulkRows rows.
// Statements are prepared once per row count and cached (see stmtCache):
// compiling a 200-row INSERT again on every call cost 8–10% of storing a
// card. To keep the cache small, a remainder is cut into power-of-two
// chunks, so a table needs at most nine statements.
func execChunks[R any](tx *txn, key string, ncols int, rows []R, args func([]any, R) []any, build func(n int) string) error {
	buf := make([]any, 0, min(len(rows), maxBulkRows)*ncols)
	for len(rows) > 0 {
		n := min(len(rows), maxBulkRows)
		if n < maxBulkRows {
			n = 1 << (bitLen(n) - 1)
		}
		buf = buf[:0]
		for _, r := range rows[:n] {
			buf = args(buf, r)
		}
		for i, v := range buf {
			if s, ok := v.(string); ok {
				buf[i] = cleanText(s)
			}
		}
		if err := tx.execCached(key, n, build, buf); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

func bitLen(n int) int {
	l := 0
	for ; n > 0; n >>= 1 {
		l++
	}
	return l
}

// execCached runs the statement build(n) with args: prepared, when the
// Store has it, else as plain SQL, asking the cache to prepare it before
// the next transaction.
func (tx *txn) execCached(key string, n int, build func(int) string, args []any) error {
	k := stmtKey{key, n}
	if tx.sql != nil && tx.stmts != nil {
		if stmt := tx.stmts.get(k, build); stmt != nil {
			_, err := tx.sql.StmtContext(tx.ctx, stmt).ExecContext(tx.ctx, args...)
			return err
		}
	}
	// Straight to the connection: gorm would rewrite the placeholders.
	_, err := tx.Statement.ConnPool.ExecContext(tx.ctx, build(n), args...)
	return err
}

// queryCached runs a frequent read outside any transaction, q written
// with "?" placeholders, as a statement prepared once: the verifier looks
// up every card's names, and preparing the query each time cost as much
// as running it.
func (s *Store) queryCached(ctx context.Context, name, q string, args ...any) (*sql.Rows, error) {
	k := stmtKey{name: name}
	build := func(int) string { return rebind(s.dialect, q) }
	st := s.stmts.get(k, build)
	if st == nil {
		// No connection is held here, so preparing now is safe.
		s.stmts.prepareWanted(ctx)
		if st = s.stmts.get(k, build); st == nil {
			return s.queryRows(ctx, q, args...)
		}
	}
	return st.QueryContext(ctx, args...)
}

type stmtKey struct {
	name string
	rows int
}

// stmtCache holds the bulk statements of a Store, prepared on its
// *sql.DB: database/sql prepares each on a connection the first time it
// runs there and reuses it after, also inside transactions (Tx.Stmt).
//
// A statement is never prepared inside a transaction: that takes a second
// connection from the pool while the transaction holds one, and with
// SQLite's pool full of writers waiting for the lock the transaction holds,
// it would wait for ever. A transaction that misses a statement runs its
// SQL as it is and leaves it wanted; Store.transact prepares the wanted
// statements before it begins the next one.
type stmtCache struct {
	db     *sql.DB
	mu     sync.Mutex
	m      map[stmtKey]*sql.Stmt
	wanted map[stmtKey]string
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: make(map[stmtKey]*sql.Stmt), wanted: make(map[stmtKey]string)}
}

// get returns the prepared statement k, or nil after noting it wanted.
func (c *stmtCache) get(k stmtKey, build func(int) string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[k]; ok {
		return st
	}
	if _, ok := c.wanted[k]; !ok {
		c.wanted[k] = build(k.rows)
	}
	return nil
}

// prepareWanted prepares the statements transactions missed. The caller
// must hold no connection of the pool. A statement that fails to prepare
// (a table not migrated yet) is left to be wanted again.
func (c *stmtCache) prepareWanted(ctx context.Context) {
	c.mu.Lock()
	if len(c.wanted) == 0 {
		c.mu.Unlock()
		return
	}
	wanted := c.wanted
	c.wanted = make(map[stmtKey]string)
	c.mu.Unlock()
	for k, q := range wanted {
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if _, ok := c.m[k]; ok {
			st.Close()
		} else {
			c.m[k] = st
		}
		c.mu.Unlock()
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, st := range c.m {
		st.Close()
		delete(c.m, k)
	}
}
