package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
)

func runCmd(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(t.Context(), args, &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func TestDispatch(t *testing.T) {
	tests := []struct {
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{nil, exitUsage, "", "Usage:"},
		{[]string{"help"}, exitOK, "registry serve", ""},
		{[]string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`},
		{[]string{"version"}, exitOK, "dev", ""},
		{[]string{"serve", "-h"}, exitOK, "", "REGISTRY_LISTEN"},
		{[]string{"migrate", "--listen", "127.0.0.1:1"}, exitUsage, "", "flag provided but not defined: -listen"},
		{[]string{"serve", "--listen", "0.0.0.0:8080"}, exitUsage, "", "--insecure-allow-remote"},
		{[]string{"serve", "--db", "mysql://x/y"}, exitUsage, "", `unknown scheme "mysql"`},
		{[]string{"serve", "extra"}, exitUsage, "", "unexpected arguments"},
		{[]string{"import"}, exitUsage, "", "no files given"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCmd(t, nil, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout %q lacks %q", stdout, tt.wantStdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q lacks %q", stderr, tt.wantStderr)
			}
		})
	}
}

func TestVersionFromLdflags(t *testing.T) {
	old := version
	t.Cleanup(func() { version = old })
	version = "v9.8.7"
	if got := versionString(); got != "v9.8.7" {
		t.Errorf("versionString() = %q", got)
	}
}

const testCard = `{
  "name": "Invoice Agent",
  "description": "Extracts invoice fields from PDFs",
  "version": "1.0.0",
  "supportedInterfaces": [
    {"url": "https://invoices.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
  ],
  "capabilities": {},
  "defaultInputModes": ["application/pdf"],
  "defaultOutputModes": ["application/json"],
  "skills": [{"id": "extract", "name": "Extract", "description": "Extract fields", "tags": ["invoice"]}]
}`

// backends gives each test a fresh database DSN: SQLite always,
// PostgreSQL when REGISTRY_TEST_POSTGRES_DSN is set.
var backends = []struct {
	name string
	dsn  func(testing.TB) string
}{
	{"sqlite", catalogtest.SQLiteDSN},
	{"postgres", catalogtest.PostgresDSN},
}

func TestImportCommand(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { testImportCommand(t, b.dsn(t)) })
	}
}

func testImportCommand(t *testing.T, db string) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", testCard)
	bad := write("bad.json", `{"name": "x",`)
	big := write("big.json", strings.Replace(testCard, "Extracts invoice", strings.Repeat("y", 2048), 1))
	env := map[string]string{"REGISTRY_DB": db, "REGISTRY_LOG_LEVEL": "error"}

	code, stdout, stderr := runCmd(t, env, "import", "--max-card-bytes", "1KiB", good, bad, big, filepath.Join(dir, "missing.json"))
	if code != exitFail {
		t.Errorf("exit code %d, want %d; stderr %q", code, exitFail, stderr)
	}
	wantLines := []string{
		regexp.QuoteMeta(good) + `: created urn:a2a-registry:import:[0-9a-f]{64} \("Invoice Agent"\)`,
		regexp.QuoteMeta(bad) + `: error: .*invalid agent card.*`,
		regexp.QuoteMeta(big) + `: error: .*too large.*`,
		`.*missing\.json: error: .*no such file.*`,
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != len(wantLines) {
		t.Fatalf("stdout has %d lines, want %d:\n%s", len(lines), len(wantLines), stdout)
	}
	for i, re := range wantLines {
		if !regexp.MustCompile("^" + re + "$").MatchString(lines[i]) {
			t.Errorf("line %d = %q, want /%s/", i, lines[i], re)
		}
	}
	if !strings.Contains(stderr, "3 of 4 files failed") {
		t.Errorf("stderr %q lacks the failure count", stderr)
	}

	// Same bytes again: unchanged; all succeed → exit 0.
	code, stdout, _ = runCmd(t, env, "import", good)
	if code != exitOK || !strings.Contains(stdout, ": unchanged urn:a2a-registry:import:") {
		t.Errorf("re-import: code %d, stdout %q", code, stdout)
	}
	// --url files the card under the agent served there, in canonical form;
	// an edited card at the same URL is a new version of that agent.
	const cardURL = "https://invoices.example.com/agents/invoice/.well-known/agent-card.json"
	code, stdout, _ = runCmd(t, env, "import", "--url", "HTTPS://Invoices.Example.com:443/agents//invoice/.well-known/agent-card.json", good)
	if code != exitOK || !strings.Contains(stdout, ": created "+cardURL) {
		t.Errorf("import --url: code %d, stdout %q", code, stdout)
	}
	edited := write("edited.json", strings.Replace(testCard, `"1.0.0"`, `"1.1.0"`, 1))
	code, stdout, _ = runCmd(t, env, "import", "--url", cardURL, edited)
	if code != exitOK || !strings.Contains(stdout, ": updated "+cardURL) {
		t.Errorf("edited import: code %d, stdout %q", code, stdout)
	}
	for _, args := range [][]string{{"import", "--url", cardURL, good, edited}, {"import", "--url", "invoices.example.com/card.json", good}} {
		if code, _, stderr := runCmd(t, env, args...); code != exitUsage {
			t.Errorf("%q: code %d, want usage error; stderr %q", args, code, stderr)
		}
	}
}

func TestMigrateCommand(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := b.dsn(t)
			for range 2 { // idempotent
				code, _, stderr := runCmd(t, map[string]string{"REGISTRY_DB": db}, "migrate")
				if code != exitOK {
					t.Fatalf("migrate: code %d, stderr %q", code, stderr)
				}
			}
		})
	}
}

func TestServe(t *testing.T) {
	cfg := config.Default()
	cfg.Server.Listen = "127.0.0.1:0"
	cfg.Storage.DB = "sqlite:" + filepath.Join(t.TempDir(), "reg.db")
	cfg.Server.ShutdownTimeout = 5 * time.Second
	// The example cards name hosts on the internet (OpenID discovery):
	// tests reach loopback only.
	cfg.Verify.Fetch = false
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))

	ctx, cancel := context.WithCancel(t.Context())
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, cfg, log, func(a net.Addr) { addrc <- a }) }()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a.String()
	case err := <-errc:
		t.Fatalf("serve: %v", err)
	case <-time.After(serveStartLimit):
		t.Fatal("server did not start")
	}

	get := func(path string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	if code, body := get("/healthz"); code != http.StatusOK || !strings.Contains(string(body), "ok") {
		t.Errorf("/healthz: %d %s", code, body)
	}
	code, body := get("/api/v1/agents")
	if code != http.StatusOK {
		t.Fatalf("/api/v1/agents: %d %s", code, body)
	}
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatalf("decoding search page: %v; body %s", err, body)
	}
	if len(page.Items) == 0 {
		t.Errorf("no example agents after first start: %s", body)
	}
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(string(body), "registry_agents ") {
		t.Errorf("/metrics: %d %.200s", code, body)
	}
	if code, _ := get("/api/v1/openapi.json"); code != http.StatusOK {
		t.Errorf("/api/v1/openapi.json: %d", code)
	}
	// Registration goes through the SSRF guard: loopback is refused
	// unless allowed, and the client error is logged once, not as ours.
	resp, err := http.Post(base+"/api/v1/agents", "application/json", strings.NewReader(`{"url":"http://127.0.0.1:9/"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), "blocked_address") {
		t.Errorf("POST loopback agent: %d %s", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), `msg="http request" method=POST path=/api/v1/agents route=/api/v1/agents status=422`) {
		t.Errorf("POST not logged with its status: %s", logs.String())
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a client error was logged as ours: %s", logs.String())
	}

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("serve returned %v after shutdown", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
}

// serve must return, not hang on its background work, when it fails after
// starting it (here: the listen address is taken).
func TestServeFailsCleanly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := config.Default()
	cfg.Server.Listen = ln.Addr().String()
	cfg.Storage.DB = "sqlite:" + filepath.Join(t.TempDir(), "reg.db")
	cfg.Verify.Fetch = false
	errc := make(chan error, 1)
	go func() { errc <- serve(t.Context(), cfg, slog.New(slog.DiscardHandler), nil) }()
	select {
	case err := <-errc:
		var opErr *net.OpError
		if !errors.As(err, &opErr) || opErr.Op != "listen" || !errors.Is(err, syscall.EADDRINUSE) {
			t.Fatalf("serve = %v, want the listen error EADDRINUSE", err)
		}
	case <-time.After(serveStartLimit):
		t.Fatal("serve hung after failing to listen")
	}
}
