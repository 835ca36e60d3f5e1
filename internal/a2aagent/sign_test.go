package a2aagent

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/verify"
)

func testKeys(t *testing.T) map[string]crypto.Signer {
	t.Helper()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]crypto.Signer{"ES256": ec, "EdDSA": ed, "RS256": rs}
}

// TestSignedCardVerifies signs the card with each kind of key and checks
// it under the registry's own verifier (the key pinned) and, when node is
// there, the official JS SDK's verifyAgentCardSignature.
func TestSignedCardVerifies(t *testing.T) {
	dir := filepath.Join("testdata", "jsclient")
	_, nodeErr := exec.LookPath("node")
	_, sdkErr := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk"))
	js := nodeErr == nil && sdkErr == nil
	if !js && os.Getenv("REGISTRY_TEST_REQUIRE_NODE") == "1" {
		t.Fatal("node or internal/a2aagent/testdata/jsclient/node_modules missing")
	}
	st := catalogtest.SQLite(t)
	for alg, key := range testKeys(t) {
		t.Run(alg, func(t *testing.T) {
			ag, err := New(Options{Catalog: st, BaseURL: "https://registry.example", SigningKey: key, Open: true})
			if err != nil {
				t.Fatal(err)
			}
			raw := ag.Card()
			c, err := card.Parse(raw, card.DefaultLimits())
			if err != nil || len(c.Signatures) != 1 {
				t.Fatalf("signed card: %v, %d signatures", err, len(c.Signatures))
			}
			var set jose.JSONWebKeySet
			if err := json.Unmarshal(ag.signer.jwks, &set); err != nil || len(set.Keys) != 1 {
				t.Fatalf("jwks %s: %v", ag.signer.jwks, err)
			}
			v := verify.New(verify.Options{Keys: verify.StaticKeys{{KID: set.Keys[0].KeyID, Key: set.Keys[0], Origins: []string{"*"}, Source: verify.KeySourceCLI}}})
			if rep := v.VerifySignatures(context.Background(), raw, nil); rep.Status != verify.StatusVerified {
				t.Errorf("registry's verifier: %+v", rep)
			}
			tampered := []byte(strings.Replace(string(raw), "Finds A2A agents", "Finds B2B agents", 1))
			if rep := v.VerifySignatures(context.Background(), tampered, nil); rep.Status == verify.StatusVerified {
				t.Error("a tampered card verifies")
			}
			if !js {
				t.Skip("node or testdata/jsclient/node_modules missing: the JS SDK's check is skipped")
			}
			tmp := t.TempDir()
			for name, b := range map[string][]byte{"card.json": raw, "tampered.json": tampered, "jwks.json": ag.signer.jwks} {
				if err := os.WriteFile(filepath.Join(tmp, name), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out, err := exec.CommandContext(t.Context(), "node", filepath.Join(dir, "verify.mjs"), filepath.Join(tmp, "card.json"), filepath.Join(tmp, "jwks.json")).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "verified" {
				t.Errorf("JS SDK: %v %s", err, out)
			}
			out, err = exec.CommandContext(t.Context(), "node", filepath.Join(dir, "verify.mjs"), filepath.Join(tmp, "tampered.json"), filepath.Join(tmp, "jwks.json")).CombinedOutput()
			if err == nil {
				t.Errorf("JS SDK verified a tampered card: %s", out)
			}
		})
	}
}

func TestJWKSServedWhenSigned(t *testing.T) {
	st := catalogtest.SQLite(t)
	ag, err := New(Options{Catalog: st, BaseURL: "https://registry.example", SigningKey: testKeys(t)["ES256"], Open: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptestServer(t, http.HandlerFunc(ag.ServeJWKS))
	resp, err := http.Get(srv)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"kid"`) || strings.Contains(string(b), `"d"`) {
		t.Errorf("jwks: %d %s", resp.StatusCode, b)
	}
	var c struct {
		Signatures []struct{ Protected string } `json:"signatures"`
	}
	if err := json.Unmarshal(ag.Card(), &c); err != nil || len(c.Signatures) != 1 {
		t.Fatalf("signatures: %v", err)
	}
	hdr, err := base64.RawURLEncoding.DecodeString(c.Signatures[0].Protected)
	if err != nil || !strings.Contains(string(hdr), `"jku":"https://registry.example`+JWKSPath+`"`) || !strings.Contains(string(hdr), `"typ":"JOSE"`) {
		t.Errorf("protected header %s: %v", hdr, err)
	}
}

func httptestServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
