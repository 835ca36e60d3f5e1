package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/verify"
)

const goodPolicy = `rules:
  - id: named
    expression: agent.name != ""
    action: flag
    message: name it
`

// recorder keeps the policies handed to the catalog.
type recorder struct {
	mu  sync.Mutex
	got []*verify.Admission
}

func (r *recorder) set(a *verify.Admission) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, a)
}

func (r *recorder) last() *verify.Admission {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[len(r.got)-1]
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// TestPolicyFileRefusedAtStart: a policy with an invalid rule stops serve
// before anything else, the rule named.
func TestPolicyFileRefusedAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte("rules:\n  - id: typo\n    expression: agent.nmae == 'x'\n    action: flag\n    message: m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadPolicyFile(path, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), `rule "typo"`) {
		t.Fatalf("load = %v, want the rule named", err)
	}
	var out, errOut strings.Builder
	code := run(context.Background(), []string{"serve", "--db", "sqlite:" + filepath.Join(t.TempDir(), "r.db"), "--listen", "127.0.0.1:0",
		"--policy", path}, &out, &errOut, func(string) string { return "" })
	if code != exitFail || !strings.Contains(errOut.String(), "typo") {
		t.Errorf("serve with a bad policy: exit %d, stderr %q", code, errOut.String())
	}
}

// TestPolicyFileReload: SIGHUP reloads the file; a bad new file is
// refused whole and the policy in force stays (shown in the state); a
// changed file is picked up by the poll.
func TestPolicyFileReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(goodPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	pf, err := loadPolicyFile(path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	pf.attach(rec.set)
	first := rec.last().Digest()

	// The signal is caught here before it is sent: the test process
	// never sees SIGHUP's default action.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pf.watch(ctx, hup, 20*time.Millisecond)
	}()
	defer func() { cancel(); <-done }()

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	bad := strings.Replace(goodPolicy, "agent.name", "agent.nmae", 1)
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("the bad file to be refused", func() bool { return pf.state().Error != "" })
	st := pf.state()
	if st.Digest != first || rec.count() != 1 || !strings.Contains(st.Error, `rule "named"`) {
		t.Fatalf("after a bad reload: state %+v, %d policies set", st, rec.count())
	}

	fixed := strings.Replace(goodPolicy, "name it", "name the agent", 1)
	if err := os.WriteFile(path, []byte(fixed), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor("the changed file to load", func() bool { return rec.count() == 2 })
	st = pf.state()
	if st.Error != "" || st.Digest == first || st.Digest != rec.last().Digest() || st.Rules != 1 {
		t.Errorf("after a good change: state %+v", st)
	}
}

// TestServeRefusesByPolicy registers, through the API of a running serve
// with --policy, a card a reject rule refuses: 422 policy_refused naming
// the rule, nothing stored; /readyz shows the policy in force.
func TestServeRefusesByPolicy(t *testing.T) {
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, plainHTTPCard)
	}))
	defer agent.Close()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(`rules:
  - id: https-only
    expression: agent.interfaces.all(i, i.url.startsWith("https://"))
    action: reject
    message: every interface over https
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{
		{"sqlite", catalogtest.SQLiteDSN},
		{"postgres", catalogtest.PostgresDSN},
	} {
		t.Run(db.name, func(t *testing.T) {
			base := startServeWith(t, db.dsn(t), func(c *config.Config) { c.Listing.Policy = path })
			resp, err := http.Post(base+"/api/v1/agents", "application/json", strings.NewReader(`{"url":"`+agent.URL+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Error struct{ Code, Rule, Message string }
			}
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusUnprocessableEntity || body.Error.Code != "policy_refused" || body.Error.Rule != "https-only" {
				t.Fatalf("register: %d %+v, %v", resp.StatusCode, body, err)
			}
			resp, err = http.Get(base + "/api/v1/agents")
			if err != nil {
				t.Fatal(err)
			}
			var page struct{ Total int }
			err = json.NewDecoder(resp.Body).Decode(&page)
			resp.Body.Close()
			if err != nil || page.Total != 0 {
				t.Errorf("after the refusal the catalog lists %d agents (%v)", page.Total, err)
			}
			resp, err = http.Get(base + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			var ready readyBody
			err = json.NewDecoder(resp.Body).Decode(&ready)
			resp.Body.Close()
			if err != nil || ready.Policy == nil || ready.Policy.Rules != 1 || ready.Policy.Digest == "" || ready.Policy.Error != "" {
				t.Errorf("readyz policy = %+v (%v)", ready.Policy, err)
			}
		})
	}
}

// TestImportRefusesByPolicy: `registry import --policy` prints an error
// line naming the rule for each card a reject rule refuses, stores the
// others, and fails.
func TestImportRefusesByPolicy(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "reg.db")
	pol := filepath.Join(dir, "policy.yaml")
	plain := filepath.Join(dir, "plain.json")
	secure := filepath.Join(dir, "secure.json")
	for path, body := range map[string]string{
		pol: `rules:
  - id: https-only
    expression: agent.interfaces.all(i, i.url.startsWith("https://"))
    action: reject
    message: every interface over https
`,
		plain:  plainHTTPCard,
		secure: strings.ReplaceAll(strings.ReplaceAll(plainHTTPCard, "http://", "https://"), "Open Echo", "Closed Echo"),
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut strings.Builder
	code := run(context.Background(), []string{"import", "--db", db, "--policy", pol, plain, secure}, &out, &errOut, func(string) string { return "" })
	if code != exitFail {
		t.Errorf("exit %d, want %d", code, exitFail)
	}
	var plainLine, secureLine string
	for _, l := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(l, plain+":"):
			plainLine = l
		case strings.HasPrefix(l, secure+":"):
			secureLine = l
		}
	}
	if !strings.Contains(plainLine, "error") || !strings.Contains(plainLine, `"https-only"`) {
		t.Errorf("refused card's line = %q", plainLine)
	}
	if strings.Contains(secureLine, "error") || secureLine == "" {
		t.Errorf("complying card's line = %q", secureLine)
	}
	s := catalogtest.Open(t, db)
	if n, err := s.Count(context.Background()); err != nil || n != 1 {
		t.Errorf("stored %d agents (%v), want the complying one", n, err)
	}
}
