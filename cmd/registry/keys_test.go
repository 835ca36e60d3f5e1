package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

func TestKeysAddListRevoke(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// A private JWK, as an operator might carelessly pass: only its public
	// half may be stored.
	jwk, err := json.Marshal(jose.JSONWebKey{Key: priv, KeyID: "k1", Algorithm: "ES256"})
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "k1.jwk")
	if err := os.WriteFile(keyFile, jwk, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"REGISTRY_DB": catalogtest.SQLiteDSN(t)}

	code, _, stderr := runCmd(t, env, "keys", "add", keyFile)
	if code != exitUsage || !strings.Contains(stderr, "origins") {
		t.Fatalf("add without --origin: code %d, stderr %q", code, stderr)
	}
	code, stdout, stderr := runCmd(t, env, "keys", "add", "--origin", "https://agent.example.com", "--not-after", "2030-01-01T00:00:00Z", keyFile)
	if code != exitOK {
		t.Fatalf("add: code %d, stderr %q", code, stderr)
	}
	id := regexp.MustCompile(`^added (\S+) \(kid k1,`).FindStringSubmatch(stdout)
	if id == nil {
		t.Fatalf("add printed %q", stdout)
	}
	if code, _, stderr := runCmd(t, env, "keys", "add", "--origin", "*", keyFile); code != exitFail || !strings.Contains(stderr, "pinned already") {
		t.Errorf("adding the same key twice: code %d, stderr %q", code, stderr)
	}

	code, stdout, stderr = runCmd(t, env, "keys", "list", "--json")
	if code != exitOK {
		t.Fatalf("list: code %d, stderr %q", code, stderr)
	}
	// The names clients rely on, spelled out rather than taken from the
	// type that encodes them.
	var keys []struct {
		ID        string          `json:"id"`
		KID       string          `json:"kid"`
		JWK       json.RawMessage `json:"jwk"`
		Origins   []string        `json:"origins"`
		NotAfter  *time.Time      `json:"not_after"`
		RevokedAt *time.Time      `json:"revoked_at"`
	}
	if err := json.Unmarshal([]byte(stdout), &keys); err != nil {
		t.Fatalf("list --json: %v: %s", err, stdout)
	}
	if len(keys) != 1 || keys[0].ID != id[1] || keys[0].KID != "k1" || keys[0].NotAfter == nil ||
		keys[0].RevokedAt != nil || strings.Join(keys[0].Origins, ",") != "https://agent.example.com" {
		t.Fatalf("listed %+v", keys)
	}
	if strings.Contains(string(keys[0].JWK), `"d"`) {
		t.Errorf("the private key reached the database: %s", keys[0].JWK)
	}

	if code, _, stderr := runCmd(t, env, "keys", "revoke", "nope"); code != exitFail || !strings.Contains(stderr, "no trusted key") {
		t.Errorf("revoking an unknown key: code %d, stderr %q", code, stderr)
	}
	if code, stdout, stderr := runCmd(t, env, "keys", "revoke", id[1]); code != exitOK || !strings.HasPrefix(stdout, "revoked "+id[1]) {
		t.Fatalf("revoke: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runCmd(t, env, "keys", "list")
	if code != exitOK || !strings.Contains(stdout, id[1]) || strings.Count(stdout, "\n") != 2 {
		t.Fatalf("list after revoke: code %d, %q", code, stdout)
	}
	if strings.HasSuffix(strings.TrimSpace(stdout), "-") {
		t.Errorf("revoked key listed without revocation time: %q", stdout)
	}
	// Revoked, the same key may be pinned again.
	if code, _, stderr := runCmd(t, env, "keys", "add", "--origin", "*", keyFile); code != exitOK {
		t.Errorf("re-adding a revoked key: code %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCmd(t, env, "keys", "frob"); code != exitUsage || !strings.Contains(stderr, "unknown action") {
		t.Errorf("unknown action: code %d, stderr %q", code, stderr)
	}
	// Each change of the trust store is in the audit log, the refused
	// ones not.
	store := catalogtest.Open(t, env["REGISTRY_DB"])
	log, err := store.AuditLog(context.Background(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log.Entries {
		actions = append(actions, e.Subject+" "+e.Action)
	}
	if got, want := strings.Join(actions, ", "), "cli key.add, cli key.revoke, cli key.add"; got != want {
		t.Errorf("audit log newest first: %s, want %s", got, want)
	}
}
