package mcpserver

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// conformanceScenarios are the suite's generic server scenarios; the
// others (tools-call-*, resources-read-*) expect the suite's own sample
// tools and say nothing about this server.
var conformanceScenarios = []string{"server-initialize", "ping", "tools-list", "resources-list", "server-sse-multiple-streams"}

// TestConformance runs the MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in testdata/conformance)
// against the door on loopback. It needs node and
// testdata/conformance/node_modules (npm ci); REGISTRY_TEST_REQUIRE_NODE=1
// makes their absence a failure (CI).
func TestConformance(t *testing.T) {
	dir := filepath.Join("testdata", "conformance")
	bin := filepath.Join(dir, "node_modules", ".bin", "conformance")
	_, nodeErr := exec.LookPath("node")
	_, binErr := os.Stat(bin)
	if nodeErr != nil || binErr != nil {
		msg := "node or testdata/conformance/node_modules missing; run (cd internal/mcpserver/testdata/conformance && npm ci)"
		if os.Getenv("REGISTRY_TEST_REQUIRE_NODE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	st := catalogtest.SQLite(t)
	seed(t, st)
	// The suite sends no credentials: it is the anonymous caller of a
	// registry that lets anonymous callers view.
	srv := serveAs(t, st, "viewer")
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.CommandContext(t.Context(), "node", filepath.Join("node_modules", ".bin", "conformance"),
				"server", "--url", srv.URL+Path, "--scenario", sc, "-o", out)
			cmd.Dir = dir
			var outb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &outb, &outb
			runErr := cmd.Run()
			failed := failedChecks(t, out)
			if runErr != nil || len(failed) > 0 {
				t.Errorf("scenario %s: %v; failed checks %v\n%s", sc, runErr, failed, outb.String())
			}
		})
	}
}

// failedChecks reads the suite's checks.json files under dir.
func failedChecks(t *testing.T, dir string) []string {
	t.Helper()
	var failed []string
	found := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return err
		}
		found = true
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var checks []struct {
			ID, Name, Status, ErrorMessage string
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			return err
		}
		for _, c := range checks {
			if strings.EqualFold(c.Status, "FAILURE") {
				failed = append(failed, c.Name+": "+c.ErrorMessage)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		failed = append(failed, "no checks.json written")
	}
	return failed
}
