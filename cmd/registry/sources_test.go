package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

func TestSourcesCommand(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/ard.json":
			fmt.Fprintf(w, `{"entries":[{"identifier":"urn:air:127.0.0.1:t:one","displayName":"One","type":"application/a2a-agent-card+json","url":"%s/card"},
				{"identifier":"urn:air:127.0.0.1:t:mcp","displayName":"Tools","type":"application/mcp-server-card+json","url":"%s/mcp"}]}`, srv.URL, srv.URL)
		case "/card":
			fmt.Fprint(w, `{"name":"One","description":"d","version":"1",
"supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	// Loopback allowed explicitly, as every test that fetches does.
	env := map[string]string{"REGISTRY_DB": catalogtest.SQLiteDSN(t), "REGISTRY_ALLOW_NETWORKS": "127.0.0.1/32"}

	if code, _, _ := runCmd(t, env, "sources", "add", "ftp://x"); code != exitUsage {
		t.Errorf("add ftp: code %d", code)
	}
	code, stdout, stderr := runCmd(t, env, "sources", "add", srv.URL)
	if code != exitOK {
		t.Fatalf("add: %d %q", code, stderr)
	}
	id := regexp.MustCompile(`^added (\S+) `).FindStringSubmatch(stdout)
	if id == nil {
		t.Fatalf("add printed %q", stdout)
	}
	code, stdout, stderr = runCmd(t, env, "sources", "refresh", id[1])
	if code != exitOK || !strings.Contains(stdout, "via ard.json") || !strings.Contains(stdout, "urn:air:127.0.0.1:t:one  catalogued") ||
		!strings.Contains(stdout, "not_a2a") {
		t.Fatalf("refresh: %d %q %q", code, stdout, stderr)
	}
	code, stdout, _ = runCmd(t, env, "sources", "list")
	if code != exitOK || !strings.Contains(stdout, id[1]) || !strings.Contains(stdout, "ok") {
		t.Errorf("list: %d %q", code, stdout)
	}
	code, stdout, _ = runCmd(t, env, "sources", "remove", id[1])
	if code != exitOK || !strings.Contains(stdout, "1 agents only it vouched for were withdrawn") {
		t.Errorf("remove: %d %q", code, stdout)
	}
	if code, _, stderr := runCmd(t, env, "sources", "show", id[1]); code != exitFail || !strings.Contains(stderr, "no source") {
		t.Errorf("show after remove: %d %q", code, stderr)
	}
}

// A peer registry added from the command line: its token read from the
// environment variable named, never printed; a token without --registry,
// or a variable that is unset, is a usage error.
func TestSourcesAddRegistry(t *testing.T) {
	const token = "cli-peer-token"
	env := map[string]string{"REGISTRY_DB": catalogtest.SQLiteDSN(t), "PEER_TOKEN": token}
	if code, _, stderr := runCmd(t, env, "sources", "add", "--token-env", "PEER_TOKEN", "https://registry.example"); code != exitUsage {
		t.Errorf("a token for a manifest: %d %q", code, stderr)
	}
	if code, _, stderr := runCmd(t, env, "sources", "add", "--registry", "--token-env", "UNSET_VAR", "https://registry.example"); code != exitUsage {
		t.Errorf("an unset variable: %d %q", code, stderr)
	}
	code, stdout, stderr := runCmd(t, env, "sources", "add", "--registry", "--token-env", "PEER_TOKEN", "https://registry.example")
	if code != exitOK || strings.Contains(stdout+stderr, token) {
		t.Fatalf("add: %d %q %q", code, stdout, stderr)
	}
	code, stdout, _ = runCmd(t, env, "sources", "list", "--json")
	if code != exitOK || strings.Contains(stdout, token) || !strings.Contains(stdout, `"kind": "registry"`) || !strings.Contains(stdout, `"token_set": true`) {
		t.Errorf("list: %d %s", code, stdout)
	}
}
