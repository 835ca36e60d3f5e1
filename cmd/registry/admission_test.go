package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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
