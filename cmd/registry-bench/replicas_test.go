package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// The replicas benchmark runs the real binary on PostgreSQL: check on a
// tiny fleet that both runs crawled every agent and answered requests.
func TestReplicasBenchmarkSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the registry binary; skipped with -short")
	}
	dsn := os.Getenv(catalogtest.PostgresDSNEnv)
	if dsn == "" {
		t.Skipf("%s not set", catalogtest.PostgresDSNEnv)
	}
	// A schema of its own: runs of this test in other checkouts share the
	// database and must not drop each other's tables.
	schema := fmt.Sprintf("registry_bench_replicas_smoke_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	t.Cleanup(func() {
		if db, err := sql.Open("pgx", dsn); err == nil {
			db.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE")
			db.Close()
		}
	})
	out := filepath.Join(t.TempDir(), "replicas.json")
	if err := runReplicas([]string{"-db", dsn, "-pg-schema", schema, "-n", "100", "-hosts", "2", "-replicas", "2",
		"-duration", "2s", "-json", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r replicasReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Runs) != 2 || r.Runs[1].Replicas != 2 {
		t.Fatalf("runs %+v; want 1 and 2 replicas", r.Runs)
	}
	for _, run := range r.Runs {
		if run.FirstCrawlPerSec <= 0 || run.Search.N == 0 || run.APIPerSec <= 0 {
			t.Fatalf("incomplete run: %+v", run)
		}
	}
}
