// Package catalogtest opens migrated catalogs for tests: SQLite always, and
// PostgreSQL when REGISTRY_TEST_POSTGRES_DSN names a server. Each PostgreSQL
// store lives in a schema of its own, dropped when the test ends, so tests
// run in parallel and leave nothing behind.
package catalogtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", for schema set-up

	"github.com/a2aregistry/registry/internal/catalog"
)

// PostgresDSNEnv names the environment variable holding the test server's DSN.
const PostgresDSNEnv = "REGISTRY_TEST_POSTGRES_DSN"

// ForEach runs fn once per available backend as a subtest named after it.
func ForEach(t *testing.T, fn func(t *testing.T, s *catalog.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
}

// SQLite returns a migrated store in a fresh file under t.TempDir().
func SQLite(t testing.TB) *catalog.Store {
	t.Helper()
	return open(t, "sqlite:"+filepath.Join(t.TempDir(), "catalog.db"))
}

// SQLiteDSN returns the DSN of a fresh SQLite file, for tests that open
// several stores on one database.
func SQLiteDSN(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "catalog.db")
}

// Postgres returns a migrated store in a fresh schema, or skips the test
// when no server is configured.
func Postgres(t testing.TB) *catalog.Store {
	t.Helper()
	return open(t, PostgresDSN(t))
}

// PostgresDSN creates a fresh schema and returns a DSN whose search_path
// selects it, or skips the test when no server is configured.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresDSNEnv)
	if base == "" {
		t.Skipf("%s not set: skipping PostgreSQL test", PostgresDSNEnv)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("opening %s: %v", PostgresDSNEnv, err)
	}
	t.Cleanup(func() { admin.Close() })
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("creating schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Logf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parsing %s: %v", PostgresDSNEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// PostgresConn opens a database/sql pool of its own on a PostgreSQL dsn
// (PostgresDSN's schema), beside the store's, for a test to read or
// write the database directly; closed when the test ends.
func PostgresConn(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("opening %s: %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Open opens and migrates a store on dsn, closed when the test ends, and
// builds its search index so that searches answer at once.
func Open(t testing.TB, dsn string) *catalog.Store {
	t.Helper()
	return open(t, dsn)
}

// OpenCold is Open without building the search index: searches answer
// catalog.ErrIndexNotReady until something builds it.
func OpenCold(t testing.TB, dsn string) *catalog.Store {
	t.Helper()
	ctx := context.Background()
	s, err := catalog.Open(ctx, catalog.Config{DSN: dsn})
	if err != nil {
		t.Fatalf("opening catalog: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrating catalog: %v", err)
	}
	return s
}

func open(t testing.TB, dsn string) *catalog.Store {
	t.Helper()
	s := OpenCold(t, dsn)
	if err := s.WarmIndex(context.Background()); err != nil {
		t.Fatalf("building search index: %v", err)
	}
	return s
}
