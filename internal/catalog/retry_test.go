package catalog_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// A transaction that PostgreSQL picks as a deadlock's victim runs again
// and commits once the other has; the one it deadlocked with commits too.
func TestTransactRetryingDeadlockVictim(t *testing.T) {
	ctx := context.Background()
	dsn := catalogtest.PostgresDSN(t)
	s := catalogtest.Open(t, dsn)
	other := catalogtest.PostgresConn(t, dsn)
	if _, err := other.Exec("CREATE TABLE retry_probe (id int PRIMARY KEY, v int); INSERT INTO retry_probe VALUES (1, 0), (2, 0)"); err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int32
	aHolds1, bHolds2 := make(chan struct{}), make(chan struct{})
	aDone := make(chan error, 1)
	go func() {
		aDone <- s.TransactRetrying(ctx, func(exec func(string, ...any) error) error {
			n := attempts.Add(1)
			if err := exec("UPDATE retry_probe SET v = v + 1 WHERE id = 1"); err != nil {
				return err
			}
			if n == 1 {
				close(aHolds1)
				<-bHolds2
			}
			// Waits for B's lock on 2; its deadlock timer starts first,
			// so this transaction is the one PostgreSQL aborts.
			return exec("UPDATE retry_probe SET v = v + 10 WHERE id = 2")
		})
	}()
	<-aHolds1
	tx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("UPDATE retry_probe SET v = v + 100 WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	close(bHolds2)
	// A must be waiting for row 2 before B asks for row 1, so that A's
	// deadlock timer starts first.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var waiting int
		if err := other.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%v = v + 10 WHERE id = 2%'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the retried transaction never waited for row 2")
		}
	}
	if _, err := tx.Exec("UPDATE retry_probe SET v = v + 1000 WHERE id = 1"); err != nil {
		t.Fatalf("the other transaction was aborted instead: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-aDone:
		if err != nil {
			t.Fatalf("TransactRetrying: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("TransactRetrying did not return")
	}
	if n := attempts.Load(); n != 2 {
		t.Fatalf("fn ran %d times, want 2 (aborted once, then committed)", n)
	}
	var v1, v2 int
	if err := other.QueryRow("SELECT (SELECT v FROM retry_probe WHERE id = 1), (SELECT v FROM retry_probe WHERE id = 2)").Scan(&v1, &v2); err != nil {
		t.Fatal(err)
	}
	if v1 != 1001 || v2 != 110 {
		t.Fatalf("rows hold %d and %d, want 1001 and 110: each transaction's work once", v1, v2)
	}
}

// Conflicts are retried a bounded number of times, and other errors not
// at all.
func TestTransactRetryingGivesUp(t *testing.T) {
	s := catalogtest.Open(t, "sqlite:"+filepath.Join(t.TempDir(), "c.db"))
	for _, c := range []struct {
		name string
		err  error
		runs int32
	}{
		{"deadlock", &pgconn.PgError{Code: "40P01"}, 3},
		{"serialization failure", &pgconn.PgError{Code: "40001"}, 3},
		{"unique violation", &pgconn.PgError{Code: "23505"}, 1},
		{"other", errors.New("disk full"), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var runs atomic.Int32
			err := s.TransactRetrying(context.Background(), func(func(string, ...any) error) error {
				runs.Add(1)
				return c.err
			})
			if !errors.Is(err, c.err) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			if n := runs.Load(); n != c.runs {
				t.Fatalf("fn ran %d times, want %d", n, c.runs)
			}
		})
	}
}
