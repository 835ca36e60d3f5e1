package verify

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenKey is a fixed P-256 key, so that the report's thumbprint is the
// same on every run. It signs nothing but this test's card.
func goldenKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	d, err := hex.DecodeString("5f1c1a3e8d2b4c6a7e9f0b1d2c3e4f5061728394a5b6c7d8e9f0a1b2c3d4e5f6")
	if err != nil {
		t.Fatal(err)
	}
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// goldenCard is unsigned text that gives the report something in every
// part: its API key travels in the query string (a security finding) and
// it declares one interface.
const goldenCard = `{"name":"Golden agent","description":"Answers questions about invoices.","version":"3",` +
	`"supportedInterfaces":[{"url":"https://golden.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
	`"provider":{"organization":"Golden Org","url":"https://golden.example"},` +
	`"securitySchemes":{"k":{"apiKeySecurityScheme":{"name":"key","location":"query"}}},"security":[{"k":[]}],` +
	`"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["application/json"],` +
	`"skills":[{"id":"ask","name":"Ask","description":"Answers a question.","tags":["invoices"]}]}`

const goldenURL = "https://golden.example/.well-known/agent-card.json"

// goldenSigned is goldenCard with two signatures: one by the pinned key,
// one naming a kid nobody knows.
func goldenSigned(t *testing.T, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	payload, err := jcs.Transform([]byte(goldenCard))
	if err != nil {
		t.Fatal(err)
	}
	var entries []map[string]string
	for _, kid := range []string{"golden-1", "golden-unknown"} {
		opts := (&jose.SignerOptions{}).WithHeader("kid", kid).WithHeader("typ", "JOSE")
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, opts)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := s.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		compact, err := obj.DetachedCompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		prot, sig, _ := strings.Cut(compact, "..")
		entries = append(entries, map[string]string{"protected": prot, "signature": sig})
	}
	sigs, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.TrimSuffix(goldenCard, "}") + `,"signatures":` + string(sigs) + `}`)
}

// TestStoredReportGolden holds the verification report the catalog
// stores for a card version to the bytes in testdata: the report's JSON
// is a stable API (see the package comment), read back by the console,
// the API and `registry verify --json`. A change shows as a diff here;
// accept it with `go test ./internal/verify -run TestStoredReportGolden
// -update`.
func TestStoredReportGolden(t *testing.T) {
	golden := filepath.Join("testdata", "stored_report.golden.json")
	key := goldenKey(t)
	raw := goldenSigned(t, key)
	checked := time.Date(2026, 11, 27, 1, 2, 3, 456000000, time.UTC)
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := t.Context()
		jwk, err := json.Marshal(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "golden-1", Algorithm: "ES256", Use: "sig"})
		if err != nil {
			t.Fatal(err)
		}
		k, err := NewTrustedKey(jwk, "", []string{"https://golden.example"}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddTrustedKey(ctx, testActor, k); err != nil {
			t.Fatal(err)
		}
		res := storeCard(t, s, goldenURL, raw)
		v := New(Options{Keys: CatalogKeys{Store: s}, Now: func() time.Time { return checked }})
		r := NewRunner(v, s, RunnerOptions{})
		err = r.VerifyStored(ctx, catalog.VerifyTarget{AgentID: res.Agent.ID, CardURL: goldenURL,
			Version: res.Agent.CurrentVersion, Raw: raw})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.Verification(ctx, res.Agent.ID)
		if err != nil || stored == nil {
			t.Fatalf("stored report: %+v, %v", stored, err)
		}
		got := []byte(stored.Report)
		if *updateGolden {
			// Indented in the file, so a diff reads; the stored bytes
			// are compared compacted.
			var out bytes.Buffer
			if err := json.Indent(&out, got, "", "  "); err != nil {
				t.Fatal(err)
			}
			out.WriteByte('\n')
			if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to write it)", err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, want); err != nil {
			t.Fatalf("%s: %v", golden, err)
		}
		if !bytes.Equal(got, compact.Bytes()) {
			t.Errorf("stored report differs from %s (run with -update to accept):\n got %s\nwant %s", golden, got, compact.Bytes())
		}
	})
}
