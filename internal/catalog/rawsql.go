package catalog

import (
	"context"
	"database/sql"
	"strconv"
)

// Most of the catalog's SQL goes through gorm, which binds "?" for each
// database itself. A few statements go to database/sql beside it: the
// bulk writes and the prepared reads (bulk.go), the index's streaming
// reads (loadDocs, Sync) and the Go migration, which runs on goose's
// *sql.Tx (rekey.go). They are written with "?" placeholders too, and
// rebind is the one place that turns them into PostgreSQL's.

// rebind turns the ? placeholders of q into PostgreSQL's $1, $2, …; SQLite
// takes q as it is. q must hold no other '?' (in a literal, or
// PostgreSQL's jsonb ? operator): rebind does not parse SQL.
func rebind(d dialect, q string) string {
	if d != dialectPostgres {
		return q
	}
	b := make([]byte, 0, len(q)+16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] != '?' {
			b = append(b, q[i])
			continue
		}
		n++
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return string(b)
}

// queryRows is the one way to read beside gorm: q, written with "?"
// placeholders, on the Store's pool. ctx is used as given; a read of many
// rows on SQLite passes s.stmtCtx(ctx) and checks ctx as it goes.
func (s *Store) queryRows(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.sqlDB.QueryContext(ctx, rebind(s.dialect, q), args...)
}

// inList builds "col IN (?, ?, …)" and its arguments, for queries that go
// to database/sql directly (gorm expands slices itself).
func inList(col string, vals []int64) (string, []any) {
	args := make([]any, len(vals))
	ph := make([]byte, 0, 3*len(vals))
	for i, v := range vals {
		args[i] = v
		if i > 0 {
			ph = append(ph, ", "...)
		}
		ph = append(ph, '?')
	}
	return col + " IN (" + string(ph) + ")", args
}
