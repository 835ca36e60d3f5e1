package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
)

// signedCard returns cardJSON with a signature by key under kid, made as
// the A2A specification says (JCS payload, detached JWS).
func signedCard(t testing.TB, key *ecdsa.PrivateKey, kid, cardJSON string) string {
	t.Helper()
	payload, err := jcs.Transform([]byte(cardJSON))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", kid))
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
	entry, _ := json.Marshal(map[string]string{"protected": prot, "signature": sig})
	return strings.TrimSuffix(strings.TrimSpace(cardJSON), "}") + `,"signatures":[` + string(entry) + `]}`
}

func ecKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// cardServer serves the card it holds at its well-known path.
func cardServer(t *testing.T, body *atomic.Value) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		io.WriteString(w, body.Load().(string))
	}))
	t.Cleanup(srv.Close)
	return srv
}

const signedPolicyCard = `{"name": "Signed Echo", "description": "Echoes, signed.", "version": "1",
  "supportedInterfaces": [{"url": "https://echo.signed.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
  "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
  "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": ["echo"]}]}`

// TestServeJudgesSignaturesAtAdmission runs serve with a policy that
// rejects cards not signed by a trusted key, through the API, on both
// databases: registration prechecks the card's signatures before the
// write, so a card signed by the pinned key is admitted and an unsigned
// one refused (422 naming the rule); a crawl of the admitted agent that
// brings a card signed by an unknown key keeps the last compliant version
// and goes stale, the rule named.
func TestServeJudgesSignaturesAtAdmission(t *testing.T) {
	pinned, stranger := ecKey(t), ecKey(t)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(`rules:
  - id: trusted-signature
    expression: agent.signature_status == "verified" && agent.signed_by_trusted_key
    action: reject
    message: sign the card with a key we pinned
`), 0o600); err != nil {
		t.Fatal(err)
	}
	jwk, err := json.Marshal(jose.JSONWebKey{Key: &pinned.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"})
	if err != nil {
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
			base := startServeWith(t, db.dsn(t), func(c *config.Config) {
				c.Listing.Policy = path
				c.Crawl.MinInterval = 10 * time.Millisecond
			})
			post := func(path, body string) (int, map[string]any) {
				t.Helper()
				resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var out map[string]any
				if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
					t.Fatalf("POST %s: %d, %v", path, resp.StatusCode, err)
				}
				return resp.StatusCode, out
			}
			if code, out := post("/api/v1/keys", `{"jwk":`+string(jwk)+`,"origins":["*"]}`); code != http.StatusCreated {
				t.Fatalf("pinning the key: %d %v", code, out)
			}

			var signed, unsigned atomic.Value
			signed.Store(signedCard(t, pinned, "k1", signedPolicyCard))
			unsigned.Store(strings.Replace(signedPolicyCard, "Signed Echo", "Unsigned Echo", 1))
			good, bad := cardServer(t, &signed), cardServer(t, &unsigned)

			code, out := post("/api/v1/agents", `{"url":"`+good.URL+`"}`)
			if code != http.StatusCreated {
				t.Fatalf("registering the card signed by the pinned key: %d %v", code, out)
			}
			id, _ := out["id"].(string)
			code, out = post("/api/v1/agents", `{"url":"`+bad.URL+`"}`)
			e, _ := out["error"].(map[string]any)
			if code != http.StatusUnprocessableEntity || e["code"] != "policy_refused" || e["rule"] != "trusted-signature" {
				t.Fatalf("registering the unsigned card: %d %v", code, out)
			}

			// The listed agent's next card is signed by a key nobody
			// pinned: the crawl refuses it.
			signed.Store(signedCard(t, stranger, "k2", strings.Replace(signedPolicyCard, `"version": "1"`, `"version": "2"`, 1)))
			// The registration's own check may be less than the minimum
			// interval old on a fast machine; a throttled refresh is
			// retried once the interval has passed, not counted as a failure.
			for deadline := time.Now().Add(5 * time.Second); ; {
				code, out := post("/api/v1/agents/"+id+"/refresh", "")
				if code == http.StatusOK {
					break
				}
				if code != http.StatusTooManyRequests || time.Now().After(deadline) {
					t.Fatalf("refresh: %d %v", code, out)
				}
				time.Sleep(20 * time.Millisecond)
			}
			resp, err := http.Get(base + "/api/v1/agents/" + id)
			if err != nil {
				t.Fatal(err)
			}
			var d struct {
				Health         string `json:"health"`
				CurrentVersion int    `json:"current_version"`
				Signature      string `json:"signature"`
				Policy         *struct {
					RefusedBy string `json:"refused_by"`
				} `json:"policy"`
			}
			err = json.NewDecoder(resp.Body).Decode(&d)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if d.Health != "stale" || d.CurrentVersion != 1 || d.Policy == nil || d.Policy.RefusedBy != "trusted-signature" {
				t.Errorf("after the crawl of a card signed by an unknown key: health %q, version %d, policy %+v",
					d.Health, d.CurrentVersion, d.Policy)
			}
			if d.Signature != "verified" {
				t.Errorf("the kept version's signature is %q, want verified", d.Signature)
			}
		})
	}
}

// TestImportJudgesSignatures: `registry import --policy` prechecks each
// card's signatures against the keys pinned in the catalog, so a reject
// rule on the signature refuses the unsigned card and admits the signed
// one.
func TestImportJudgesSignatures(t *testing.T) {
	key := ecKey(t)
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "reg.db")
	s := catalogtest.Open(t, db)
	jwk := jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}
	raw, err := json.Marshal(jwk)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.AddTrustedKey(t.Context(), catalog.System("test"), catalog.TrustedKey{KID: "k1", JWK: raw,
		Thumbprint: base64.RawURLEncoding.EncodeToString(tp), Origins: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(dir, "policy.yaml")
	signed := filepath.Join(dir, "signed.json")
	unsigned := filepath.Join(dir, "unsigned.json")
	for p, body := range map[string]string{
		pol: `rules:
  - id: trusted-signature
    expression: agent.signed_by_trusted_key
    action: reject
    message: sign the card with a key we pinned
`,
		signed:   signedCard(t, key, "k1", signedPolicyCard),
		unsigned: strings.Replace(signedPolicyCard, "Signed Echo", "Unsigned Echo", 1),
	} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut strings.Builder
	code := run(t.Context(), []string{"import", "--db", db, "--policy", pol, signed, unsigned}, &out, &errOut, func(string) string { return "" })
	if code != exitFail {
		t.Errorf("exit %d, want %d (%s)", code, exitFail, errOut.String())
	}
	for _, l := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(l, signed+":") && strings.Contains(l, "error"):
			t.Errorf("the signed card was refused: %q", l)
		case strings.HasPrefix(l, unsigned+":") && !strings.Contains(l, `"trusted-signature"`):
			t.Errorf("the unsigned card's line = %q", l)
		}
	}
	if n, err := s.Count(t.Context()); err != nil || n != 1 {
		t.Errorf("stored %d agents (%v), want the signed one", n, err)
	}
}

// TestServeRejudgesOnReload: a policy changed on disk judges the catalog
// already there — the agent a new hold rule fails goes to pending with
// the rule's message — and a policy refused on reload changes nothing.
func TestServeRejudgesOnReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(goodPolicy)
	var body atomic.Value
	body.Store(plainHTTPCard)
	agent := cardServer(t, &body)
	base := startServeWith(t, catalogtest.SQLiteDSN(t), func(c *config.Config) { c.Listing.Policy = path })
	resp, err := http.Post(base+"/api/v1/agents", "application/json", strings.NewReader(`{"url":"`+agent.URL+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d, %v", resp.StatusCode, err)
	}
	listing := func() (state, reason string) {
		t.Helper()
		resp, err := http.Get(base + "/api/v1/agents/" + created.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var d struct {
			Listing struct{ State, Reason string }
		}
		if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
			t.Fatal(err)
		}
		return d.Listing.State, d.Listing.Reason
	}
	if st, _ := listing(); st != "approved" {
		t.Fatalf("under the first policy the agent is %s", st)
	}
	// A refused file changes nothing; the poll (every 5 s) reads it, and
	// /readyz says so. Waiting for that, not for a fixed time, keeps the
	// check from passing unchecked on a machine too slow to poll in time.
	write("rules:\n  - id: broken\n    expression: agent.nmae == ''\n    action: hold\n    message: m\n")
	refusal := func() string {
		t.Helper()
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ready readyBody
		if err := json.NewDecoder(resp.Body).Decode(&ready); err != nil || ready.Policy == nil {
			t.Fatalf("readyz policy = %+v (%v)", ready.Policy, err)
		}
		return ready.Policy.Error
	}
	for deadline := time.Now().Add(4 * policyPollInterval); refusal() == ""; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the refused policy is not shown in /readyz")
		}
	}
	if st, _ := listing(); st != "approved" {
		t.Fatalf("after a refused policy the agent is %s", st)
	}
	write(`rules:
  - id: https-only
    expression: agent.interfaces.all(i, i.url.startsWith("https://"))
    action: hold
    message: every interface over https
`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, reason := listing()
		if st == "pending" && strings.Contains(reason, `"https-only"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the new policy the agent is %s (%q), want held", st, reason)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
