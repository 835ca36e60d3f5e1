package catalog_test

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// The two databases' schemas after every migration, compared in one
// vocabulary. The differences the comparison accepts are these, and no
// others:
//   - Types are compared by kind (schemaType): SQLite has one INTEGER
//     for every width.
//   - A PostgreSQL BOOLEAN is a SQLite INTEGER (0 or 1): SQLite has no
//     boolean type, and the SQLite migrations declare INTEGER (sameColumn).
//   - A column of a primary key counts as NOT NULL: PostgreSQL makes it
//     so; SQLite, for a historical bug, does not (sqlite.org/lang_createtable.html).
//   - Defaults are not compared: CURRENT_TIMESTAMP and now(), 0 and false
//     are the same default spelled two ways.
//   - An index a PRIMARY KEY or UNIQUE constraint makes is named by the
//     database (sqlite_autoindex_agents_1, agents_pkey): it is compared by
//     its table, columns and uniqueness, not by name.
//   - A partial index is compared by being partial, not by its predicate:
//     "paused = 0" on SQLite is "NOT paused" on PostgreSQL.
//   - goose's own table is goose's.

// schemaColumn is one column in the shared vocabulary.
type schemaColumn struct {
	Type    string
	NotNull bool
}

// schemaIndex is one index: its columns in order ("(expr)" for an
// expression), uniqueness, and whether it is partial.
type schemaIndex struct {
	Table   string
	Columns string
	Unique  bool
	Partial bool
}

type schema struct {
	// columns by table, then column name.
	columns map[string]map[string]schemaColumn
	// indexes by name; constraint indexes by "table(columns)".
	indexes map[string]schemaIndex
}

// schemaType maps a declared SQLite type or a PostgreSQL data_type onto
// the shared vocabulary; an unknown spelling maps to itself, so a type the
// map does not know fails the comparison rather than passing it.
func schemaType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	switch t {
	case "integer", "int", "bigint", "smallint":
		return "integer"
	case "text", "character varying", "varchar":
		return "text"
	case "blob", "bytea":
		return "bytes"
	case "boolean", "bool":
		return "boolean"
	case "timestamp", "timestamptz", "datetime", "timestamp with time zone":
		return "timestamp"
	case "real", "double precision", "float":
		return "float"
	}
	return t
}

// sameColumn tells whether a SQLite column l is PostgreSQL's p.
func sameColumn(l, p schemaColumn) bool {
	if p.Type == "boolean" && l.Type == "integer" {
		p.Type = l.Type
	}
	return l == p
}

// TestSchemasMatchAcrossDatabases migrates a SQLite and a PostgreSQL
// catalog and compares their tables, columns, types and indexes: a
// migration written for one database and not (or not alike) for the other
// fails here.
func TestSchemasMatchAcrossDatabases(t *testing.T) {
	pgDSN := catalogtest.PostgresDSN(t) // skips without a server
	sqliteDSN := catalogtest.SQLiteDSN(t)
	migrate(t, sqliteDSN)
	migrate(t, pgDSN)

	lite := sqliteSchema(t, "file:"+strings.TrimPrefix(sqliteDSN, "sqlite:"))
	pg := postgresSchema(t, pgDSN)
	if len(lite.columns) == 0 {
		t.Fatal("no tables read from SQLite")
	}
	for _, tbl := range sortedUnion(lite.columns, pg.columns) {
		lc, lok := lite.columns[tbl]
		pc, pok := pg.columns[tbl]
		if !lok || !pok {
			t.Errorf("table %s: on SQLite %v, on PostgreSQL %v", tbl, lok, pok)
			continue
		}
		for _, col := range sortedUnion(lc, pc) {
			l, lok := lc[col]
			p, pok := pc[col]
			switch {
			case !lok || !pok:
				t.Errorf("column %s.%s: on SQLite %v, on PostgreSQL %v", tbl, col, lok, pok)
			case !sameColumn(l, p):
				t.Errorf("column %s.%s: SQLite %+v, PostgreSQL %+v", tbl, col, l, p)
			}
		}
	}
	for _, name := range sortedUnion(lite.indexes, pg.indexes) {
		l, lok := lite.indexes[name]
		p, pok := pg.indexes[name]
		switch {
		case !lok || !pok:
			t.Errorf("index %s: on SQLite %v (%+v), on PostgreSQL %v (%+v)", name, lok, l, pok, p)
		case l != p:
			t.Errorf("index %s: SQLite %+v, PostgreSQL %+v", name, l, p)
		}
	}
}

func migrate(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	s, err := catalog.Open(ctx, catalog.Config{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}

func sortedUnion[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// gooseTable is goose's version table, on both databases.
const gooseTable = "goose_db_version"

func sqliteSchema(t *testing.T, dsn string) schema {
	t.Helper()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables := queryStrings(t, db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> ?", gooseTable)
	s := schema{columns: map[string]map[string]schemaColumn{}, indexes: map[string]schemaIndex{}}
	for _, tbl := range tables {
		cols := map[string]schemaColumn{}
		forRows(t, db, func(r *sql.Rows) error {
			var (
				cid, notNull, pk int
				name, typ        string
				dflt             sql.NullString
			)
			err := r.Scan(&cid, &name, &typ, &notNull, &dflt, &pk)
			cols[name] = schemaColumn{Type: schemaType(typ), NotNull: notNull == 1 || pk > 0}
			return err
		}, fmt.Sprintf("PRAGMA table_info(%q)", tbl))
		s.columns[tbl] = cols
		type idx struct {
			name, origin    string
			unique, partial bool
		}
		var idxs []idx
		forRows(t, db, func(r *sql.Rows) error {
			var (
				seq, unique, partial int
				name, origin         string
			)
			err := r.Scan(&seq, &name, &unique, &origin, &partial)
			idxs = append(idxs, idx{name, origin, unique == 1, partial == 1})
			return err
		}, fmt.Sprintf("PRAGMA index_list(%q)", tbl))
		for _, ix := range idxs {
			var cols []string
			forRows(t, db, func(r *sql.Rows) error {
				var (
					seqno, cid int
					name       sql.NullString
				)
				err := r.Scan(&seqno, &cid, &name)
				cols = append(cols, cmp.Or(name.String, "(expr)"))
				return err
			}, fmt.Sprintf("PRAGMA index_info(%q)", ix.name))
			si := schemaIndex{Table: tbl, Columns: strings.Join(cols, ","), Unique: ix.unique, Partial: ix.partial}
			name := ix.name
			if ix.origin != "c" { // made by a PRIMARY KEY or UNIQUE constraint
				name = tbl + "(" + si.Columns + ")"
			}
			s.indexes[name] = si
		}
	}
	// A rowid table's INTEGER PRIMARY KEY is the rowid itself, with no
	// index of its own; PostgreSQL's primary key has one.
	for tbl := range s.columns {
		pk := queryStrings(t, db, "SELECT name FROM pragma_table_info(?) WHERE pk > 0 AND lower(type) = 'integer' "+
			"AND (SELECT COUNT(*) FROM pragma_table_info(?) WHERE pk > 0) = 1", tbl, tbl)
		if len(pk) == 1 {
			if _, ok := s.indexes[tbl+"("+pk[0]+")"]; !ok {
				s.indexes[tbl+"("+pk[0]+")"] = schemaIndex{Table: tbl, Columns: pk[0], Unique: true}
			}
		}
	}
	return s
}

func postgresSchema(t *testing.T, dsn string) schema {
	t.Helper()
	db := catalogtest.PostgresConn(t, dsn)
	s := schema{columns: map[string]map[string]schemaColumn{}, indexes: map[string]schemaIndex{}}
	forRows(t, db, func(r *sql.Rows) error {
		var tbl, col, typ, nullable string
		if err := r.Scan(&tbl, &col, &typ, &nullable); err != nil {
			return err
		}
		if s.columns[tbl] == nil {
			s.columns[tbl] = map[string]schemaColumn{}
		}
		s.columns[tbl][col] = schemaColumn{Type: schemaType(typ), NotNull: nullable == "NO"}
		return nil
	}, `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name <> $1`, gooseTable)
	// Columns in index order; attnum 0 is an expression.
	forRows(t, db, func(r *sql.Rows) error {
		var (
			name, tbl, cols               string
			unique, partial, isConstraint bool
		)
		if err := r.Scan(&name, &tbl, &cols, &unique, &partial, &isConstraint); err != nil {
			return err
		}
		si := schemaIndex{Table: tbl, Columns: cols, Unique: unique, Partial: partial}
		if isConstraint {
			name = tbl + "(" + cols + ")"
		}
		s.indexes[name] = si
		return nil
	}, `SELECT i.relname, tb.relname,
			(SELECT string_agg(COALESCE(a.attname, '(expr)'), ',' ORDER BY k.ord)
			 FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
			 LEFT JOIN pg_attribute a ON a.attrelid = tb.oid AND a.attnum = k.attnum AND k.attnum <> 0),
			ix.indisunique, ix.indpred IS NOT NULL,
			EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.oid)
		FROM pg_index ix
		JOIN pg_class i ON i.oid = ix.indexrelid
		JOIN pg_class tb ON tb.oid = ix.indrelid
		JOIN pg_namespace n ON n.oid = tb.relnamespace
		WHERE n.nspname = current_schema() AND tb.relname <> $1`, gooseTable)
	return s
}

func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	var out []string
	forRows(t, db, func(r *sql.Rows) error {
		var s string
		err := r.Scan(&s)
		out = append(out, s)
		return err
	}, q, args...)
	return out
}

func forRows(t *testing.T, db *sql.DB, fn func(*sql.Rows) error, q string, args ...any) {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
