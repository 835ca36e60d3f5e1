package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// vectorFile is what testdata/jssdk/sign.mjs prints.
type vectorFile struct {
	SDK     string          `json:"sdk"`
	JWKS    json.RawMessage `json:"jwks"`
	Vectors []struct {
		Name string          `json:"name"`
		Alg  string          `json:"alg"`
		KID  string          `json:"kid"`
		Card json.RawMessage `json:"card"`
	} `json:"vectors"`
}

func loadVectors(t *testing.T, data []byte) vectorFile {
	t.Helper()
	var vf vectorFile
	if err := json.Unmarshal(data, &vf); err != nil {
		t.Fatalf("vectors: %v", err)
	}
	if len(vf.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	return vf
}

func cliKeys(t *testing.T, jwks []byte) StaticKeys {
	t.Helper()
	keys, err := ParseJWKS(jwks)
	if err != nil {
		t.Fatal(err)
	}
	var s StaticKeys
	for _, k := range keys {
		s = append(s, PinnedKey{KID: k.KeyID, Key: k, Origins: []string{"*"}, Source: KeySourceCLI})
	}
	return s
}

// wantForm is the form each committed vector must verify under. Cards
// without empty values or unknown fields give the same bytes in JCS and
// the JS SDK's form, and JCS is tried first.
func wantForm(name string) Form {
	switch {
	case strings.HasPrefix(name, "empties/"), strings.HasPrefix(name, "mixed/"):
		return FormJSSDK
	}
	return FormJCS
}

// TestJSSDKVectors verifies cards signed by @a2a-js/sdk's
// generateAgentCardSignature (committed output of testdata/jssdk/sign.mjs),
// so real SDK output is checked even where node is not installed.
func TestJSSDKVectors(t *testing.T) {
	data, err := os.ReadFile("testdata/jssdk_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	vf := loadVectors(t, data)
	v := New(Options{Keys: cliKeys(t, vf.JWKS)})
	for _, vec := range vf.Vectors {
		t.Run(vec.Name, func(t *testing.T) {
			rep := v.VerifySignatures(t.Context(), vec.Card, nil)
			if rep.Status != StatusVerified {
				t.Fatalf("status = %s, entries %+v", rep.Status, rep.Entries)
			}
			for _, e := range rep.Entries {
				if e.Result != ResultVerified {
					t.Errorf("entry %d: %s: %s", e.Index, e.Result, e.Problem)
				}
				if e.Form != wantForm(vec.Name) {
					t.Errorf("entry %d verified as %s, want %s", e.Index, e.Form, wantForm(vec.Name))
				}
				if e.Signer == nil || e.Signer.Source != KeySourceCLI || e.Signer.Thumbprint == "" {
					t.Errorf("entry %d signer = %+v", e.Index, e.Signer)
				}
			}
			if vec.Alg == "multi" {
				if len(rep.Entries) != 3 || !rep.Rotation {
					t.Errorf("rotation card: %d entries, rotation=%v; want 3 entries reported as rotation", len(rep.Entries), rep.Rotation)
				}
			}
			if strings.HasPrefix(vec.Name, "empties/") && !contains(rep.Entries[0].UnsignedFields, "$.securityRequirements") {
				// {"schemes":{"bearer":{"list":[]}}} requires the bearer
				// scheme, yet the SDK's emptiness stripping signs it away.
				t.Errorf("unsigned fields %v lack $.securityRequirements", rep.Entries[0].UnsignedFields)
			}
			if strings.HasPrefix(vec.Name, "mixed/") {
				// The JS SDK signs only v1.0 schema fields: the v0.3 fields
				// of a mixed card are not covered, and must be reported.
				e := rep.Entries[0]
				for _, f := range []string{"$.url", "$.protocolVersion", "$.preferredTransport"} {
					if !contains(e.UnsignedFields, f) {
						t.Errorf("unsigned fields %v lack %s", e.UnsignedFields, f)
					}
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestJSSDKVectorsNumberSpelling re-spells numbers of a signed card: the
// payload is canonical, so 1.0 vs 1 and 1e21 vs 1e+21 must not matter,
// while a changed value must.
func TestJSSDKVectorsNumberSpelling(t *testing.T) {
	data, err := os.ReadFile("testdata/jssdk_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	vf := loadVectors(t, data)
	v := New(Options{Keys: cliKeys(t, vf.JWKS)})
	var signed []byte
	for _, vec := range vf.Vectors {
		if vec.Name == "empties/ES256" {
			signed = vec.Card
		}
	}
	if !bytes.Contains(signed, []byte(`"ratio":1,`)) || !bytes.Contains(signed, []byte(`1e+21`)) {
		t.Fatalf("vector does not contain the expected numbers: %s", signed)
	}
	tests := []struct {
		name, from, to string
		want           Status
	}{
		{"1 as 1.0", `"ratio":1,`, `"ratio":1.0,`, StatusVerified},
		{"1 as 1e0", `"ratio":1,`, `"ratio":1e0,`, StatusVerified},
		{"1e+21 as 1e21", `1e+21`, `1e21`, StatusVerified},
		{"1e+21 as 1000000000000000000000", `1e+21`, `1000000000000000000000`, StatusVerified},
		{"1 changed to 2", `"ratio":1,`, `"ratio":2,`, StatusInvalid},
		{"1e+21 changed to 1e22", `1e+21`, `1e22`, StatusInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := bytes.Replace(signed, []byte(tt.from), []byte(tt.to), 1)
			if rep := v.VerifySignatures(t.Context(), c, nil); rep.Status != tt.want {
				t.Errorf("status = %s, want %s (%+v)", rep.Status, tt.want, rep.Entries)
			}
		})
	}
}

// TestJSSDKLive runs the JS SDK now, with a jku on a loopback JWKS server
// that is the card's own origin, and verifies through jku resolution.
// It needs node and testdata/jssdk/node_modules (npm ci); set
// REGISTRY_TEST_REQUIRE_NODE=1 to make their absence a failure (CI).
func TestJSSDKLive(t *testing.T) {
	dir := filepath.Join("testdata", "jssdk")
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk"))
	if nodeErr != nil || modErr != nil {
		msg := "node or testdata/jssdk/node_modules missing; run (cd internal/verify/testdata/jssdk && npm ci)"
		if os.Getenv("REGISTRY_TEST_REQUIRE_NODE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var jwks atomic.Value
	jwks.Store([]byte(`{"keys":[]}`))
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", "max-age=600")
		w.Write(jwks.Load().([]byte))
	}))
	defer srv.Close()
	jku := srv.URL + "/.well-known/jwks.json"

	cmd := exec.CommandContext(t.Context(), "node", "sign.mjs", jku)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node sign.mjs: %v\n%s", err, stderr.String())
	}
	vf := loadVectors(t, out)
	jwks.Store([]byte(vf.JWKS))

	client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	v := New(Options{Client: client, AllowInsecureJKU: true})
	for _, vec := range vf.Vectors {
		t.Run(vec.Name, func(t *testing.T) {
			c, err := card.Parse(vec.Card, card.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			rep := v.Verify(context.Background(), c, srv.URL+"/.well-known/agent-card.json")
			if rep.Signatures.Status != StatusVerified {
				t.Fatalf("status = %s: %+v", rep.Signatures.Status, rep.Signatures.Entries)
			}
			for _, e := range rep.Signatures.Entries {
				if e.Result != ResultVerified || e.Signer.Source != KeySourceJKU || e.Signer.JKU != jku {
					t.Errorf("entry %d: %s via %+v: %s", e.Index, e.Result, e.Signer, e.Problem)
				}
			}
		})
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times, want 1 (cached per max-age)", n)
	}
}

// keyByKID picks a generated key from a JWKS for attack construction.
func keyByKID(t *testing.T, jwks []byte, kid string) jose.JSONWebKey {
	t.Helper()
	keys, err := ParseJWKS(jwks)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.KeyID == kid {
			return k
		}
	}
	t.Fatalf("no key %q", kid)
	return jose.JSONWebKey{}
}
