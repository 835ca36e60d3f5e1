package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// On PostgreSQL, Migrate analyzes the tables that hold rows but were
// never analyzed, once: the planner's guesses without statistics made the
// verifier's due query scan the whole catalog every poll.
func TestMigrateAnalyzesTablesWithoutStatistics(t *testing.T) {
	ctx := context.Background()
	dsn := catalogtest.PostgresDSN(t)
	s := catalogtest.OpenCold(t, dsn)
	db := catalogtest.PostgresConn(t, dsn)
	if _, err := db.Exec(`CREATE TABLE analyze_big (id int); INSERT INTO analyze_big SELECT generate_series(1, 2000);
		CREATE TABLE analyze_small (id int); INSERT INTO analyze_small SELECT generate_series(1, 10)`); err != nil {
		t.Fatal(err)
	}
	// The statistics system counts the inserted rows once the inserting
	// session reports them.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var live int64
		if err := db.QueryRow("SELECT n_live_tup FROM pg_stat_user_tables WHERE relid = 'analyze_big'::regclass").Scan(&live); err != nil {
			t.Fatal(err)
		}
		if live >= 2000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pg_stat_user_tables counts %d rows in analyze_big after 20 s", live)
		}
		time.Sleep(100 * time.Millisecond)
	}
	state := func(table string) (reltuples float64, analyzed int64) {
		t.Helper()
		if err := db.QueryRow(`SELECT c.reltuples, t.analyze_count FROM pg_class c JOIN pg_stat_user_tables t ON t.relid = c.oid
			WHERE c.oid = $1::regclass`, table).Scan(&reltuples, &analyzed); err != nil {
			t.Fatal(err)
		}
		return reltuples, analyzed
	}
	if tuples, _ := state("analyze_big"); tuples >= 0 {
		t.Fatalf("analyze_big has reltuples %v before Migrate: the test needs a table never analyzed", tuples)
	}
	for range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if tuples, _ := state("analyze_big"); tuples != 2000 {
		t.Errorf("analyze_big: reltuples %v after Migrate, want 2000 (analyzed)", tuples)
	}
	// Statistics reach pg_stat_user_tables when the analyzing session
	// reports them; reltuples above is the planner's own, at once.
	deadline = time.Now().Add(20 * time.Second)
	for {
		_, n := state("analyze_big")
		if n == 1 {
			// A second count would be reported within a second or so
			// (sessions report at most once a second when idle).
			time.Sleep(1500 * time.Millisecond)
			if _, n = state("analyze_big"); n == 1 {
				break
			}
		}
		if n > 1 || time.Now().After(deadline) {
			t.Fatalf("analyze_big analyzed %d times by two Migrates, want once", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tuples, _ := state("analyze_small"); tuples >= 0 {
		t.Errorf("analyze_small (10 rows) analyzed: reltuples %v", tuples)
	}
}
