package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/safehttp/safehttptest"
)

// TestServeNeverReachesItself: a serving registry with loopback opened
// refuses, with the class self, to register a card at its own address
// (the port it was given at start, 0 in the configuration), at its public
// URL, or at a name that resolves to its address.
func TestServeNeverReachesItself(t *testing.T) {
	res := safehttptest.NewResolver(t, map[string][]string{"rebind.corp.internal": {"127.0.0.1"}})
	cfg := config.Default()
	cfg.Server.Listen = "127.0.0.1:0"
	cfg.Server.PublicURL = "https://registry.corp.internal"
	cfg.Server.ShutdownTimeout = 5 * time.Second
	cfg.Storage.DB = "sqlite:" + filepath.Join(t.TempDir(), "reg.db")
	cfg.Verify.Fetch = false
	cfg.Outbound.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Outbound.Resolver = res.Net()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, cfg, slog.New(slog.DiscardHandler), func(a net.Addr) { addrc <- a }) }()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-errc:
		t.Fatalf("serve: %v", err)
	case <-time.After(serveStartLimit):
		t.Fatal("server did not start")
	}
	base := (&url.URL{Scheme: "http", Host: addr.String()}).String()
	_, port, _ := net.SplitHostPort(addr.String())

	for _, card := range []string{
		base + "/.well-known/agent-card.json",
		"http://rebind.corp.internal:" + port + "/api/v1/agents",
		// Not the card URL its A2A agent declares: that one is the
		// exception (TestServeListsItself).
		"https://registry.corp.internal/cards/agent-card.json",
	} {
		body, _ := json.Marshal(map[string]string{"url": card})
		resp, err := http.Post(base+"/api/v1/agents", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		var refusal struct {
			Error struct {
				Code, Class, Message string
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&refusal)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusUnprocessableEntity || refusal.Error.Code != "blocked_address" ||
			refusal.Error.Class != safehttp.CauseSelf || !strings.Contains(refusal.Error.Message, "this registry itself") {
			t.Errorf("registering %s: %d %+v (%v), want 422 blocked_address with class %s", card, resp.StatusCode, refusal, err, safehttp.CauseSelf)
		}
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestServeListsItself: with its A2A agent on and a public URL, the
// registry may register its own card and try its own JSON-RPC interface
// — the one exception, exactly those URLs and without credentials —
// while any other URL of its own is still refused as self.
func TestServeListsItself(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(free.Addr().String())
	free.Close()
	public := "http://registry.corp.internal:" + port
	res := safehttptest.NewResolver(t, map[string][]string{"registry.corp.internal": {"127.0.0.1"}})
	cfg := config.Default()
	cfg.Server.Listen = "127.0.0.1:" + port
	cfg.Server.PublicURL = public
	cfg.Server.ShutdownTimeout = 5 * time.Second
	cfg.Storage.DB = "sqlite:" + filepath.Join(t.TempDir(), "reg.db")
	cfg.Doors.Agent = true
	cfg.Doors.SigningKey = writeSigningKey(t)
	cfg.Outbound.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Outbound.Resolver = res.Net()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, cfg, slog.New(slog.DiscardHandler), func(a net.Addr) { addrc <- a }) }()
	select {
	case <-addrc:
	case err := <-errc:
		t.Skipf("serve on a port picked beforehand: %v", err)
	case <-time.After(serveStartLimit):
		t.Fatal("server did not start")
	}
	base := "http://127.0.0.1:" + port
	post := func(path, body string, out any) int {
		t.Helper()
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return resp.StatusCode
	}

	var agent struct{ ID string }
	if code := post("/api/v1/agents", `{"url":"`+public+`/.well-known/agent-card.json"}`, &agent); code != http.StatusCreated || agent.ID == "" {
		t.Fatalf("registering the registry's own card: %d %+v", code, agent)
	}
	var run struct {
		State string
		Error *struct{ Code, Message string }
	}
	if code := post("/api/v1/agents/"+agent.ID+"/runs", `{"message": {"role": "user", "parts": [{"text": "find agents"}]}}`, &run); code/100 != 2 || run.Error != nil {
		t.Errorf("a run against the registry's own JSON-RPC interface: %d %+v", code, run)
	}
	for _, card := range []string{public + "/api/v1/agents", base + "/.well-known/agent-card.json"} {
		var refusal struct{ Error struct{ Code, Class string } }
		if code := post("/api/v1/agents", `{"url":"`+card+`"}`, &refusal); code != http.StatusUnprocessableEntity || refusal.Error.Class != safehttp.CauseSelf {
			t.Errorf("registering %s: %d %+v, want class self", card, code, refusal)
		}
	}
	// --signing-key signs the card the registry serves (here over plain
	// http, so its verifier trusts no jku: that needs https).
	resp, err := http.Get(base + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var own struct{ Signatures []json.RawMessage }
	err = json.NewDecoder(resp.Body).Decode(&own)
	resp.Body.Close()
	if err != nil || len(own.Signatures) != 1 {
		t.Errorf("the registry's own card with --signing-key: %d signatures (%v), want 1", len(own.Signatures), err)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// writeSigningKey writes a fresh P-256 key as PKCS#8 PEM and returns its path.
func writeSigningKey(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "signing.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
