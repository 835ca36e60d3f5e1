package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3" // database/sql driver "sqlite3", to inspect the catalog as it was left

	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/synth"
)

// crashChildEnv carries the serve arguments of a child process started by
// TestCrashSafety; the child is this test binary running TestCrashChild.
const crashChildEnv = "REGISTRY_CRASH_CHILD_ARGS"

// crashChildAddrEnv, when set, names the file where the child writes the
// address it listens on, once it accepts connections: a parent that needs
// the address starts the child on port 0 and reads it there. A port picked
// beforehand and closed could be taken by another test's socket (packages
// run in parallel) before the child binds it.
const crashChildAddrEnv = "REGISTRY_CRASH_CHILD_ADDR_FILE"

// TestCrashChild is not a test on its own: it runs `registry serve` in a
// child process for TestCrashSafety, which kills it with SIGKILL.
func TestCrashChild(t *testing.T) {
	args := os.Getenv(crashChildEnv)
	if args == "" {
		t.Skip("child process of TestCrashSafety only")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	argv := strings.Split(args, "\n")
	if path := os.Getenv(crashChildAddrEnv); path != "" && argv[0] == "serve" {
		os.Exit(serveReportingAddr(ctx, argv[1:], path))
	}
	os.Exit(run(ctx, argv, os.Stdout, os.Stderr, func(string) string { return "" }))
}

// serveReportingAddr is `registry serve args…` (runServe) that writes the
// bound address to path, whole: written aside, then renamed.
func serveReportingAddr(ctx context.Context, args []string, path string) int {
	cfg, _, code, ok := loadConfig("serve", "[flags]", config.All, args, os.Stderr, func(string) string { return "" })
	if !ok {
		return code
	}
	log := newLogger(cfg, os.Stderr)
	err := serve(ctx, cfg, log, func(a net.Addr) {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(a.String()), 0o600); err != nil {
			log.Error("writing the address", "err", err)
			return
		}
		if err := os.Rename(tmp, path); err != nil {
			log.Error("writing the address", "err", err)
		}
	})
	if err != nil {
		log.Error("serve failed", "err", err)
		return exitFail
	}
	return exitOK
}

// TestCrashSafety kills `registry serve` with SIGKILL in the middle of a
// crawl of 200 agents (a quarter of which change their card on every
// fetch), checks that the catalog it left is consistent, and restarts it to
// see the crawl resume from the stored schedule.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	const agents = 200
	gen := synth.New(11)
	var fetches atomic.Int64
	fleet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /agents/{i}/card.json
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		i, err := strconv.Atoi(parts[min(1, len(parts)-1)])
		if len(parts) != 3 || err != nil || i < 0 || i >= agents {
			http.NotFound(w, r)
			return
		}
		n := fetches.Add(1)
		body := gen.Card(i)
		if i%4 == 0 { // a card that changes on every fetch
			body = []byte(strings.Replace(string(body), `"name":"`, fmt.Sprintf(`"name":"rev %d `, n), 1))
		}
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", etag)
		w.Header().Set("Cache-Control", "max-age=0")
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer fleet.Close()

	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	var lines []string
	for i := range agents {
		lines = append(lines, fmt.Sprintf("%s/agents/%d/card.json", fleet.URL, i))
	}
	if err := os.WriteFile(seeds, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, "catalog.db")
	args := []string{"--listen", "127.0.0.1:0", "--db", "sqlite:" + dbPath, "--import-examples=false",
		"--seeds", seeds, "--allow-networks", "127.0.0.0/8", "--crawl-concurrency", "16", "--crawl-per-host", "16",
		"--crawl-min-interval", "100ms", "--crawl-max-interval", "1s", "--log-level", "warn",
		// Synthetic cards name hosts under .example (jku, OpenID): tests
		// reach loopback only.
		"--verify-fetch=false"}
	start := func() *exec.Cmd { return startServeProcess(t, args) }
	db, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=10000&mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			return -1 // the schema may not exist yet
		}
		return n
	}
	// A hang guard, ended as soon as ok holds: at load 30 on two cores the
	// crawl was not yet in full swing after 60 s.
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	child := start()
	waitFor("a crawl in full swing", func() bool {
		return count("SELECT COUNT(*) FROM agents") == agents && count("SELECT COUNT(*) FROM fetch_log") > 2*agents
	})
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	killedAt := time.Now().UTC()
	versionsAtKill := count("SELECT COUNT(*) FROM card_versions")

	checks := []struct {
		what string
		q    string
	}{
		{"integrity_check", "SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'"},
		{"agents without their current version", `SELECT COUNT(*) FROM agents a WHERE NOT EXISTS
			(SELECT 1 FROM card_versions v WHERE v.agent_pk = a.pk AND v.number = a.current_version)`},
		{"versions beyond the current one", `SELECT COUNT(*) FROM card_versions v JOIN agents a ON a.pk = v.agent_pk
			WHERE v.number > a.current_version`},
		{"gaps in version numbers", `SELECT COUNT(*) FROM agents a WHERE
			(SELECT COUNT(*) FROM card_versions v WHERE v.agent_pk = a.pk) <> a.current_version`},
		{"agents without crawl state", "SELECT COUNT(*) FROM agents a WHERE NOT EXISTS (SELECT 1 FROM crawl_state c WHERE c.agent_pk = a.pk)"},
		{"agents whose facets cannot be derived", "SELECT COUNT(*) FROM agents WHERE NOT json_valid(summary) OR NOT json_valid(audit_codes)"},
		{"skills of another version", `SELECT COUNT(*) FROM agents a WHERE (SELECT COUNT(*) FROM skills s WHERE s.agent_pk = a.pk) <>
			json_array_length(json_extract(a.summary, '$.skills'))`},
		{"agents whose feed lacks their creation", `SELECT COUNT(*) FROM agents a WHERE NOT EXISTS
			(SELECT 1 FROM changes c WHERE c.agent_pk = a.pk AND c.kind = 'created')`},
		{"feed entries for versions never stored", `SELECT COUNT(*) FROM changes c JOIN agents a ON a.pk = c.agent_pk
			WHERE c.version > a.current_version`},
	}
	for _, c := range checks {
		if n := count(c.q); n != 0 {
			t.Errorf("after SIGKILL: %s: %d", c.what, n)
		}
	}
	if versionsAtKill <= agents {
		t.Errorf("only %d versions for %d agents: the changing cards were not re-fetched", versionsAtKill, agents)
	}

	// A restart resumes from the stored schedule: every agent is checked
	// again, none is registered twice.
	child = start()
	waitFor("every agent re-checked after the restart", func() bool {
		return count("SELECT COUNT(*) FROM crawl_state WHERE last_check_at > ?", killedAt) == agents
	})
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	if n := count("SELECT COUNT(*) FROM agents"); n != agents {
		t.Fatalf("%d agents after restart, want %d", n, agents)
	}
	if n := count("SELECT COUNT(*) FROM card_versions"); n <= versionsAtKill {
		t.Errorf("no new versions after the restart (%d, %d at kill)", n, versionsAtKill)
	}
}
