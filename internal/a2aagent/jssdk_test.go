package a2aagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// TestJSSDKClient drives the agent with the official A2A JavaScript SDK's
// client (testdata/jsclient, @a2a-js/sdk pinned) over every interface the
// card declares: a question and a follow-up in its context. It needs node
// and testdata/jsclient/node_modules (npm ci); REGISTRY_TEST_REQUIRE_NODE=1
// makes their absence a failure (CI).
func TestJSSDKClient(t *testing.T) {
	dir := filepath.Join("testdata", "jsclient")
	_, nodeErr := exec.LookPath("node")
	_, sdkErr := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk"))
	if nodeErr != nil || sdkErr != nil {
		msg := "node or internal/a2aagent/testdata/jsclient/node_modules missing; run (cd internal/a2aagent/testdata/jsclient && npm ci)"
		if os.Getenv("REGISTRY_TEST_REQUIRE_NODE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	st := catalogtest.SQLite(t)
	f := seed(t, st)
	srv, _ := serve(t, st)
	cmd := exec.CommandContext(t.Context(), "node", "client.mjs", srv.URL, "viewer")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\n%s", err, stderr.String())
	}
	type line struct {
		Binding, Version string
		Completed        bool
		First, FollowUp  []string
		Error            string
	}
	var lines []line
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		lines = append(lines, l)
	}
	if len(lines) != 3 {
		t.Fatalf("the JS client drove %d interfaces, want 3:\n%s", len(lines), stdout.String())
	}
	for _, l := range lines {
		if l.Error != "" || !l.Completed || !slices.Contains(l.First, f.converter) || !slices.Contains(l.First, f.grpcConverter) ||
			slices.Contains(l.First, f.ledger) || !slices.Equal(l.FollowUp, []string{f.grpcConverter}) {
			t.Errorf("%s %s: %+v", l.Binding, l.Version, l)
		}
	}
}
