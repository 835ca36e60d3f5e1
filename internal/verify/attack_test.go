package verify

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/safehttp"
)

const baseCard = `{"name":"Attack target","description":"d","version":"1","supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`

var testKey = func() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}()

func testJWK(kid string) jose.JSONWebKey {
	return jose.JSONWebKey{Key: &testKey.PublicKey, KeyID: kid, Algorithm: "ES256", Use: "sig"}
}

func jwksJSON(t testing.TB, keys ...jose.JSONWebKey) []byte {
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// signJCS signs cardJSON the way the specification says (JCS payload,
// computed here by gowebpki/jcs, independently of the verifier's own
// writer) and returns the card with the signature appended.
func signJCS(t testing.TB, cardJSON string, hdr map[string]any) []byte {
	t.Helper()
	payload, err := jcs.Transform([]byte(cardJSON))
	if err != nil {
		t.Fatal(err)
	}
	opts := &jose.SignerOptions{}
	for k, v := range hdr {
		opts.WithHeader(jose.HeaderKey(k), v)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: testKey}, opts)
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
	return withSignature(cardJSON, prot, sig)
}

func withSignature(cardJSON, prot, sig string) []byte {
	entry, _ := json.Marshal(map[string]string{"protected": prot, "signature": sig})
	return []byte(strings.TrimSuffix(cardJSON, "}") + `,"signatures":[` + string(entry) + `]}`)
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func jwksServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func TestAttackCorpus(t *testing.T) {
	pinned := StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{"https://agent.example.com"}}}
	good := signJCS(t, baseCard, map[string]any{"kid": "k1", "typ": "JOSE"})

	// The public key, as an attacker would use it for HS256.
	pubJSON, _ := json.Marshal(testJWK("k1"))
	hsProt := b64(`{"alg":"HS256","kid":"k1"}`)
	hsPayload, _ := jcs.Transform([]byte(baseCard))
	mac := hmac.New(sha256.New, pubJSON)
	mac.Write([]byte(hsProt + "." + base64.RawURLEncoding.EncodeToString(hsPayload)))
	hsSig := base64.RawURLEncoding.EncodeToString(mac.Sum(nil))

	jwksOK := jwksJSON(t, testJWK("k1"))
	same := jwksServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/jwks":
			w.Write(jwksOK)
		case "/huge":
			w.Write([]byte(`{"keys":[` + strings.Repeat(`{"kty":"oct","k":"AAAA"},`, 5000) + `{}]}`))
		case "/redirect":
			http.Redirect(w, r, "https://evil.example.net/jwks", http.StatusFound)
		case "/dupkid":
			w.Write(jwksJSON(t, testJWK("k1"), testJWK("k1")))
		case "/wrongalg":
			k := testJWK("k1")
			k.Algorithm = "RS256"
			w.Write(jwksJSON(t, k))
		}
	})
	client := safehttp.New(safehttp.Config{AllowNetworks: loopback})
	cardURL := same.URL + "/.well-known/agent-card.json"

	tests := []struct {
		name       string
		raw        []byte
		opts       Options
		origins    []string
		wantResult Result
		wantStatus Status
	}{
		{"honest pinned", good, Options{Keys: pinned}, []string{"https://agent.example.com"}, ResultVerified, StatusVerified},
		{"alg none", withSignature(baseCard, b64(`{"alg":"none","kid":"k1"}`), "AA"), Options{Keys: pinned}, nil, ResultUnsupportedAlgorithm, StatusInvalid},
		{"HS256 keyed with the public key", withSignature(baseCard, hsProt, hsSig), Options{Keys: pinned}, nil, ResultUnsupportedAlgorithm, StatusInvalid},
		{"tampered field", []byte(strings.Replace(string(good), `"name":"Attack target"`, `"name":"Attack targe7"`, 1)),
			Options{Keys: pinned}, []string{"https://agent.example.com"}, ResultBadSignature, StatusInvalid},
		{"tampered: field added", []byte(strings.Replace(string(good), `"version":"1"`, `"version":"1","url":"https://evil.example.net"`, 1)),
			Options{Keys: pinned}, []string{"https://agent.example.com"}, ResultBadSignature, StatusInvalid},
		{"wrong kid", signJCS(t, baseCard, map[string]any{"kid": "k2"}), Options{Keys: pinned}, []string{"https://agent.example.com"}, ResultUnknownKey, StatusKeyUnavailable},
		{"pinned for another origin", good, Options{Keys: pinned}, []string{"https://other.example.com"}, ResultUnknownKey, StatusKeyUnavailable},
		{"no kid", signJCS(t, baseCard, nil), Options{Keys: pinned}, nil, ResultMalformed, StatusInvalid},
		{"crit", signJCS(t, baseCard, map[string]any{"kid": "k1", "crit": []string{"exp"}, "exp": 1}), Options{Keys: pinned}, []string{"https://agent.example.com"}, ResultUnsupportedCritical, StatusInvalid},
		{"duplicate header key", withSignature(baseCard, b64(`{"alg":"ES256","kid":"k1","kid":"k2"}`), "AA"), Options{Keys: pinned}, nil, ResultMalformed, StatusInvalid},
		{"duplicate card key", []byte(strings.Replace(string(good), `"version":"1"`, `"version":"1","version":"2"`, 1)), Options{Keys: pinned}, nil, ResultMalformed, StatusInvalid},
		{"revoked pinned key", good, Options{Keys: StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{"*"}, RevokedAt: time.Now().Add(-time.Hour)}}}, nil, ResultKeyRevoked, StatusInvalid},
		{"expired pinned key", good, Options{Keys: StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{"*"}, NotAfter: time.Now().Add(-time.Hour)}}}, nil, ResultKeyExpired, StatusInvalid},
		{"jku same origin", signJCS(t, baseCard, map[string]any{"kid": "k1", "jku": same.URL + "/jwks"}),
			Options{Client: client, AllowInsecureJKU: true}, []string{origin(cardURL)}, ResultVerified, StatusVerified},
		{"jku on another origin", signJCS(t, baseCard, map[string]any{"kid": "k1", "jku": "https://evil.example.net/jwks"}),
			Options{Client: client}, []string{"https://agent.example.com"}, ResultUntrustedKeySource, StatusKeyUnavailable},
		{"jku on an operator-trusted origin", signJCS(t, baseCard, map[string]any{"kid": "k1", "jku": same.URL + "/jwks"}),
			Options{Client: client, AllowInsecureJKU: true, TrustedJWKSOrigins: []string{same.URL}}, []string{"https://agent.example.com"}, ResultVerified, StatusVerified},
		{"jku plain http in production", signJCS(t, baseCard, map[string]any{"kid": "k1", "jku": same.URL + "/jwks"}),
			Options{Client: client}, []string{origin(cardURL)}, ResultUntrustedKeySource, StatusKeyUnavailable},
		{"jku on a private address (SSRF)", signJCS(t, baseCard, map[string]any{"kid": "k1", "jku": same.URL + "/jwks"}),
			Options{Client: safehttp.New(safehttp.Config{}), AllowInsecureJKU: true}, []string{origin(cardURL)}, ResultKeyFetchFailed, StatusKeyUnavailable},
		{"oversized JWKS", signJCS(t, baseCard, map[string]any{"kid": "k1", "jku": same.URL + "/huge"}),
			Options{Client: client, AllowInsecureJKU: true}, []string{origin(cardURL)}, ResultKeyFetchFailed, StatusKeyUnavailable},
		{"jku redirecting to another origin", signJCS(t, baseCard, map[string]any{"kid": "k1", "jku": same.URL + "/redirect"}),
			Options{Client: client, AllowInsecureJKU: true}, []string{origin(cardURL)}, ResultKeyFetchFailed, StatusKeyUnavailable},
		{"kid selecting two keys", signJCS(t, baseCard, map[string]any{"kid": "k1", "jku": same.URL + "/dupkid"}),
			Options{Client: client, AllowInsecureJKU: true}, []string{origin(cardURL)}, ResultUnknownKey, StatusKeyUnavailable},
		{"key published for another alg", signJCS(t, baseCard, map[string]any{"kid": "k1", "jku": same.URL + "/wrongalg"}),
			Options{Client: client, AllowInsecureJKU: true}, []string{origin(cardURL)}, ResultBadSignature, StatusInvalid},
		{"pinned key overrides jku", signJCS(t, baseCard, map[string]any{"kid": "k1", "jku": "https://evil.example.net/jwks"}),
			Options{Keys: pinned}, []string{"https://agent.example.com"}, ResultVerified, StatusVerified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := New(tt.opts).VerifySignatures(t.Context(), tt.raw, tt.origins)
			if rep.Status != tt.wantStatus {
				t.Errorf("status = %s, want %s", rep.Status, tt.wantStatus)
			}
			if len(rep.Entries) != 1 {
				t.Fatalf("%d entries, want 1: %+v", len(rep.Entries), rep.Entries)
			}
			if e := rep.Entries[0]; e.Result != tt.wantResult {
				t.Errorf("result = %s (%s), want %s", e.Result, e.Problem, tt.wantResult)
			}
			// Reports are shown to anyone reading the agent: no socket
			// or resolved addresses from transport errors.
			if p := rep.Entries[0].Problem; strings.Contains(p, "dial tcp") || strings.Contains(p, "safehttp:") {
				t.Errorf("problem %q shows transport internals", p)
			}
		})
	}
}

// TestSSRFRefusedBySafeClient pins the reason: the JWKS fetch is refused
// by the address policy, not by anything else.
func TestSSRFRefusedBySafeClient(t *testing.T) {
	srv := jwksServer(t, func(w http.ResponseWriter, _ *http.Request) { w.Write(jwksJSON(t, testJWK("k1"))) })
	v := New(Options{Client: safehttp.New(safehttp.Config{}), AllowInsecureJKU: true})
	_, err := v.fetchJWKS(t.Context(), srv.URL+"/jwks")
	if !errors.Is(err, safehttp.ErrBlockedAddress) || !errors.Is(err, ErrJWKS) {
		t.Fatalf("err = %v, want ErrJWKS wrapping ErrBlockedAddress", err)
	}
}

func TestDuplicateKeysRefusedByParse(t *testing.T) {
	raw := strings.Replace(baseCard, `"version":"1"`, `"version":"1","version":"2"`, 1)
	if _, err := card.Parse([]byte(raw), card.Limits{}); !errors.Is(err, card.ErrInvalid) {
		t.Fatalf("card.Parse err = %v, want ErrInvalid", err)
	}
	if _, err := decodeStrict([]byte(raw)); !errors.Is(err, ErrCanonical) {
		t.Fatalf("decodeStrict err = %v, want ErrCanonical", err)
	}
}

func TestJWKSCacheTTL(t *testing.T) {
	var hits int
	srv := jwksServer(t, func(w http.ResponseWriter, _ *http.Request) {
		hits++
		w.Header().Set("Cache-Control", "public, max-age=120")
		w.Write(jwksJSON(t, testJWK("k1")))
	})
	now := time.Unix(1_700_000_000, 0)
	v := New(Options{Client: safehttp.New(safehttp.Config{AllowNetworks: loopback}), AllowInsecureJKU: true, Now: func() time.Time { return now }})
	for _, step := range []struct {
		advance  time.Duration
		wantHits int
	}{{0, 1}, {60 * time.Second, 1}, {61 * time.Second, 2}, {10 * time.Second, 2}} {
		now = now.Add(step.advance)
		if _, err := v.fetchJWKS(t.Context(), srv.URL); err != nil {
			t.Fatal(err)
		}
		if hits != step.wantHits {
			t.Fatalf("after +%v: %d fetches, want %d", step.advance, hits, step.wantHits)
		}
	}
}

func TestCacheTTLClamp(t *testing.T) {
	tests := []struct {
		cc   string
		want time.Duration
	}{
		{"", 5 * time.Minute},
		{"max-age=120", 2 * time.Minute},
		{"max-age=1", time.Minute},
		{"max-age=99999999", 24 * time.Hour},
		{"no-store", time.Minute},
		{"max-age=bogus", 5 * time.Minute},
	}
	for _, tt := range tests {
		h := http.Header{}
		h.Set("Cache-Control", tt.cc)
		if got := cacheTTL(h, 5*time.Minute, time.Minute, 24*time.Hour); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.cc, got, tt.want)
		}
	}
}

func TestUnsignedAndRotation(t *testing.T) {
	v := New(Options{Keys: StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{"*"}}}})
	if rep := v.VerifySignatures(t.Context(), []byte(baseCard), nil); rep.Status != StatusUnsigned {
		t.Errorf("unsigned card: %s", rep.Status)
	}
	// One valid signature plus one by an unknown (new) key: verified,
	// both reported.
	good := signJCS(t, baseCard, map[string]any{"kid": "k1"})
	other := signJCS(t, baseCard, map[string]any{"kid": "k-next"})
	var a, b map[string]any
	json.Unmarshal(good, &a)
	json.Unmarshal(other, &b)
	a["signatures"] = append(a["signatures"].([]any), b["signatures"].([]any)...)
	both, _ := json.Marshal(a)
	rep := v.VerifySignatures(t.Context(), both, nil)
	if rep.Status != StatusVerified || len(rep.Entries) != 2 || rep.Entries[1].Result != ResultUnknownKey {
		t.Errorf("rotation: %s %+v", rep.Status, rep.Entries)
	}
}

// TestSignatureTrust: the report says what vouches for a verified key, so
// a security team can tell "verified by a pinned key" from "verified by
// a key the card's own origin published" (A2A #2096: jku is a hint).
func TestSignatureTrust(t *testing.T) {
	jwksOK := jwksJSON(t, testJWK("k1"))
	same := jwksServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(jwksOK) })
	client := safehttp.New(safehttp.Config{AllowNetworks: loopback})
	withJKU := signJCS(t, baseCard, map[string]any{"kid": "k1", "jku": same.URL + "/jwks"})
	pinned := StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{same.URL}}}
	tests := []struct {
		name    string
		opts    Options
		origins []string
		want    Trust
	}{
		{"same-origin jku only", Options{Client: client, AllowInsecureJKU: true}, []string{same.URL}, TrustOriginOnly},
		{"operator-trusted jku origin", Options{Client: client, AllowInsecureJKU: true, TrustedJWKSOrigins: []string{same.URL}},
			[]string{"https://agent.example.com"}, TrustTrustedOrigin},
		{"pinned key wins over the jku", Options{Client: client, AllowInsecureJKU: true, Keys: pinned}, []string{same.URL}, TrustPinned},
		{"nothing verifies", Options{}, []string{same.URL}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := New(tt.opts).VerifySignatures(t.Context(), withJKU, tt.origins)
			if rep.Trust != tt.want {
				t.Errorf("trust = %q (status %s), want %q", rep.Trust, rep.Status, tt.want)
			}
		})
	}
}
