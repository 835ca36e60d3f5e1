package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/proxy/proxytest"
)

// startJSAgent runs testdata/jsagent/agent.mjs, an agent served by the
// official A2A JavaScript SDK, on a loopback port, and returns the card it
// serves, parsed as the registry parses any card. It needs node and the
// directory's node_modules (npm ci); without them the test is skipped,
// unless REGISTRY_TEST_REQUIRE_NODE=1 (CI) makes that a failure.
func startJSAgent(t *testing.T) *card.Card {
	t.Helper()
	dir := filepath.Join("testdata", "jsagent")
	_, nodeErr := exec.LookPath("node")
	_, sdkErr := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk"))
	_, expressErr := os.Stat(filepath.Join(dir, "node_modules", "express"))
	if nodeErr != nil || sdkErr != nil || expressErr != nil {
		msg := "node or internal/proxy/testdata/jsagent/node_modules missing; run (cd internal/proxy/testdata/jsagent && npm ci)"
		if os.Getenv("REGISTRY_TEST_REQUIRE_NODE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command("node", "agent.mjs", "0")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Closing stdin ends the agent; a hung one is killed.
	t.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				port <- p
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var base string
	select {
	case p := <-port:
		base = "http://127.0.0.1:" + p
	case <-time.After(30 * time.Second):
		t.Fatalf("the JS agent did not start: %s", stderr.String())
	}
	resp, err := http.Get(base + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Parse(raw, card.DefaultLimits())
	if err != nil {
		t.Fatalf("the JS SDK's card: %v\n%s", err, raw)
	}
	return c
}

// TestJSSDKAgent runs tasks through the proxy against the official A2A
// JavaScript SDK's server: over JSON-RPC and HTTP+JSON in v1.0 and over
// JSON-RPC in v0.3 (the SDK's compatibility layer), blocking and
// streamed, then a multi-turn conversation, a declared-vs-working check
// and a cancel. Every exchange
// must be free of protocol violations.
func TestJSSDKAgent(t *testing.T) {
	c := startJSAgent(t)
	p := New(Options{Client: proxytest.Loopback()})
	if len(c.Interfaces) != 3 {
		t.Fatalf("the JS agent's card declares %d interfaces, want 3: %+v", len(c.Interfaces), c.Interfaces)
	}
	noViolations := func(t *testing.T, x *Exchange) {
		t.Helper()
		if len(x.Violations) > 0 {
			t.Errorf("violations: %+v", x.Violations)
		}
	}
	for _, in := range c.Interfaces {
		choice := Choice{URL: in.URL, Binding: in.Binding, Version: in.ProtocolVersion}
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%s/stream=%v", in.Binding, in.ProtocolVersion, stream), func(t *testing.T) {
				var relayed int
				x, err := p.Send(t.Context(), Call{Card: c, Choice: choice}, proxytest.Text("hello"), stream, func(Event) { relayed++ })
				if err != nil {
					t.Fatalf("send: %v (attempts %+v)", err, x.Attempts)
				}
				noViolations(t, x)
				if x.Endpoint.URL != in.URL || x.Endpoint.Speaks != in.ProtocolVersion {
					t.Errorf("answered by %+v, want %s in %s", x.Endpoint, in.URL, in.ProtocolVersion)
				}
				if x.State() != string(a2a.TaskStateCompleted) || !strings.Contains(string(x.Result), "echo: hello") {
					t.Errorf("state %q, result %s", x.State(), x.Result)
				}
				if stream && relayed < 3 {
					t.Errorf("a stream relayed %d events, want the task, working, artifact, completed", relayed)
				}
			})
		}
	}

	for _, in := range c.Interfaces {
		choice := Choice{URL: in.URL, Binding: in.Binding, Version: in.ProtocolVersion}
		t.Run(fmt.Sprintf("multi-turn/%s/%s", in.Binding, in.ProtocolVersion), func(t *testing.T) {
			x, err := p.Send(t.Context(), Call{Card: c, Choice: choice}, proxytest.Text(proxytest.SayAsk), true, nil)
			if err != nil {
				t.Fatal(err)
			}
			noViolations(t, x)
			if x.State() != string(a2a.TaskStateInputRequired) {
				t.Fatalf("first turn state %q, want input-required", x.State())
			}
			reply := proxytest.Text("Paris")
			reply.TaskID, reply.ContextID = x.Task.ID, x.Task.ContextID
			y, err := p.Send(t.Context(), Call{Card: c, Choice: choice}, reply, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			noViolations(t, y)
			if y.State() != string(a2a.TaskStateCompleted) || y.Task.ID != x.Task.ID || !strings.Contains(string(y.Result), "echo: Paris") {
				t.Errorf("second turn: state %q on task %s (first %s), result %s", y.State(), y.Task.ID, x.Task.ID, y.Result)
			}
		})
	}

	t.Run("declared vs working", func(t *testing.T) {
		checks := p.Check(t.Context(), c, Credentials{}, nil)
		if w := Works(checks); w != "all" {
			t.Errorf("check of the JS agent: works %q: %+v", w, checks)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		in := c.Interfaces[0]
		choice := Choice{URL: in.URL, Binding: in.Binding, Version: in.ProtocolVersion}
		taskID := make(chan a2a.TaskID, 1)
		done := make(chan *Exchange, 1)
		go func() {
			x, _ := p.Send(t.Context(), Call{Card: c, Choice: choice}, proxytest.Text(proxytest.SayWait), true, func(e Event) {
				if e.TaskID != "" {
					select {
					case taskID <- a2a.TaskID(e.TaskID):
					default:
					}
				}
			})
			done <- x
		}()
		var id a2a.TaskID
		select {
		case id = <-taskID:
		case <-time.After(10 * time.Second):
			t.Fatal("the waiting task never started")
		}
		x, err := p.Cancel(t.Context(), Call{Card: c, Choice: choice}, string(id))
		if err != nil {
			t.Fatal(err)
		}
		if x.State() != string(a2a.TaskStateCanceled) {
			t.Errorf("cancel answered state %q", x.State())
		}
		select {
		case s := <-done:
			if s == nil || s.State() != string(a2a.TaskStateCanceled) {
				t.Errorf("the stream ended in state %v", s)
			}
		case <-time.After(10 * time.Second):
			t.Error("the stream did not end after the cancel")
		}
	})
}
