package verify

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"

	"github.com/a2aregistry/registry/internal/safehttp"
)

// signInput signs protected + "." + body with key the way JWS ES256 does
// (R||S), or in ASN.1 DER when der is set, and returns the card with that
// signature. body is the signing input's second half as the signer wrote
// it: encoded or not.
func signInput(t *testing.T, key *ecdsa.PrivateKey, protected string, body []byte, der bool) []byte {
	t.Helper()
	digest := sha256.Sum256(append([]byte(protected+"."), body...))
	var sig []byte
	if der {
		var err error
		if sig, err = ecdsa.SignASN1(rand.Reader, key, digest[:]); err != nil {
			t.Fatal(err)
		}
	} else {
		r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
		if err != nil {
			t.Fatal(err)
		}
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
	}
	return withSignature(baseCard, protected, base64.RawURLEncoding.EncodeToString(sig))
}

// TestSignatureFormsA2ADoesNotUse: a signature in a form the spec does not
// allow is reported as that form, never as a tampered card, and never as
// verified either.
func TestSignatureFormsA2ADoesNotUse(t *testing.T) {
	pinned := StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{"*"}}}
	payload, err := jcs.Transform([]byte(baseCard))
	if err != nil {
		t.Fatal(err)
	}
	encoded := []byte(base64.RawURLEncoding.EncodeToString(payload))

	// go-jose's own RFC 7797 signer: "b64": false with crit ["b64"].
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: testKey},
		(&jose.SignerOptions{}).WithBase64(false).WithHeader("kid", "k1"))
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
	rfc7797 := withSignature(baseCard, prot, sig)

	tests := []struct {
		name       string
		raw        []byte
		want       Result
		wantStatus Status
		problem    string
	}{
		{"RFC 7797 b64 false with crit", rfc7797, ResultUnencodedPayload, StatusInvalid, "signed with an unencoded payload (RFC 7797"},
		{"b64 false without crit", signInput(t, testKey, b64(`{"alg":"ES256","kid":"k1","b64":false}`), payload, false),
			ResultUnencodedPayload, StatusInvalid, "which A2A does not use"},
		{"unencoded payload, header silent", signInput(t, testKey, b64(`{"alg":"ES256","kid":"k1"}`), payload, false),
			ResultUnencodedPayload, StatusInvalid, "without even the RFC 7797"},
		{"DER-encoded ECDSA", signInput(t, testKey, b64(`{"alg":"ES256","kid":"k1"}`), encoded, true),
			ResultDEREncodedSignature, StatusInvalid, "RFC 7518 §3.4"},
		{"the spec's form verifies", signInput(t, testKey, b64(`{"alg":"ES256","kid":"k1"}`), encoded, false),
			ResultVerified, StatusVerified, ""},
		{"b64 false over a tampered card", []byte(strings.Replace(string(rfc7797), "Attack target", "Attack targe7", 1)),
			ResultBadSignature, StatusInvalid, "unencoded payload its header asks for"},
		{"DER over a tampered card", []byte(strings.Replace(string(signInput(t, testKey, b64(`{"alg":"ES256","kid":"k1"}`), encoded, true)), "Attack target", "Attack targe7", 1)),
			ResultBadSignature, StatusInvalid, "changed after it was signed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := New(Options{Keys: pinned}).VerifySignatures(t.Context(), tt.raw, []string{"https://agent.example.com"})
			if len(rep.Entries) != 1 {
				t.Fatalf("entries %+v", rep.Entries)
			}
			e := rep.Entries[0]
			if e.Result != tt.want || rep.Status != tt.wantStatus {
				t.Errorf("result %s, status %s (%s); want %s, %s", e.Result, rep.Status, e.Problem, tt.want, tt.wantStatus)
			}
			if !strings.Contains(e.Problem, tt.problem) {
				t.Errorf("problem %q lacks %q", e.Problem, tt.problem)
			}
			if tt.want != ResultBadSignature && tt.want != ResultVerified && e.Form != FormJCS {
				t.Errorf("form %q, want the form the signature matched (jcs)", e.Form)
			}
		})
	}
}

// TestKeyChange: a card newly signed by another key under the pinned kid,
// whose trusted jku publishes that key, is a key change, not a tampered
// card; the same with a jku the registry does not trust, or a card
// changed after signing, is still a bad signature.
func TestKeyChange(t *testing.T) {
	next, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	nextJWK := jose.JSONWebKey{Key: &next.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}
	srv := jwksServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			w.Write(jwksJSON(t, testJWK("k1")))
			return
		}
		w.Write(jwksJSON(t, nextJWK))
	})
	client := safehttp.New(safehttp.Config{AllowNetworks: loopback})
	pinned := StaticKeys{{KID: "k1", Key: testJWK("k1"), Origins: []string{srv.URL, "https://agent.example.com"}}}
	payload, err := jcs.Transform([]byte(baseCard))
	if err != nil {
		t.Fatal(err)
	}
	encoded := []byte(base64.RawURLEncoding.EncodeToString(payload))
	signedBy := func(key *ecdsa.PrivateKey, jku string) []byte {
		return signInput(t, key, b64(`{"alg":"ES256","kid":"k1","jku":"`+jku+`"}`), encoded, false)
	}
	tests := []struct {
		name       string
		raw        []byte
		origins    []string
		want       Result
		wantStatus Status
		wantTrust  Trust
	}{
		{"new key from the card's origin", signedBy(next, srv.URL+"/jwks"), []string{srv.URL}, ResultKeyChanged, StatusVerified, TrustOriginOnly},
		{"new key from an untrusted origin", signedBy(next, srv.URL+"/jwks"), []string{"https://agent.example.com"}, ResultBadSignature, StatusInvalid, ""},
		{"old key, card altered", []byte(strings.Replace(string(signedBy(testKey, srv.URL+"/old")), "Attack target", "Attack targe7", 1)),
			[]string{srv.URL}, ResultBadSignature, StatusInvalid, ""},
		{"new key, card altered", []byte(strings.Replace(string(signedBy(next, srv.URL+"/jwks")), "Attack target", "Attack targe7", 1)),
			[]string{srv.URL}, ResultBadSignature, StatusInvalid, ""},
		{"pinned key still signs", signedBy(testKey, srv.URL+"/jwks"), []string{srv.URL}, ResultVerified, StatusVerified, TrustPinned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := New(Options{Keys: pinned, Client: client, AllowInsecureJKU: true})
			rep := v.VerifySignatures(t.Context(), tt.raw, tt.origins)
			e := rep.Entries[0]
			if e.Result != tt.want || rep.Status != tt.wantStatus || rep.Trust != tt.wantTrust {
				t.Fatalf("result %s, status %s, trust %q (%s); want %s, %s, %q", e.Result, rep.Status, rep.Trust, e.Problem, tt.want, tt.wantStatus, tt.wantTrust)
			}
			if tt.want != ResultKeyChanged {
				return
			}
			if !strings.Contains(e.Problem, "the signer changed keys") || strings.Contains(e.Problem, "altered") {
				t.Errorf("problem %q", e.Problem)
			}
			if e.ReplacedKey == nil || e.ReplacedKey.Source != KeySourcePinned || e.Signer == nil || e.Signer.Source != KeySourceJKU ||
				e.Signer.Thumbprint == e.ReplacedKey.Thumbprint || rep.Signer == nil {
				t.Errorf("signer %+v, replaced %+v, report signer %+v", e.Signer, e.ReplacedKey, rep.Signer)
			}
		})
	}
}

// TestLeftoverSignatureAfterRotation: a card re-signed with a new key that
// keeps the old key's signature over the old card verifies, and the old
// entry says why it fails instead of suggesting tampering.
func TestLeftoverSignatureAfterRotation(t *testing.T) {
	next, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keys := StaticKeys{
		{KID: "old", Key: testJWK("old"), Origins: []string{"*"}},
		{KID: "new", Key: jose.JSONWebKey{Key: &next.PublicKey, KeyID: "new", Algorithm: "ES256", Use: "sig"}, Origins: []string{"*"}},
	}
	oldCard := strings.Replace(baseCard, `"version":"1"`, `"version":"0"`, 1)
	sign := func(key *ecdsa.PrivateKey, kid, cardJSON string) map[string]any {
		payload, err := jcs.Transform([]byte(cardJSON))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		raw := signInput(t, key, b64(`{"alg":"ES256","kid":"`+kid+`"}`), []byte(base64.RawURLEncoding.EncodeToString(payload)), false)
		raw = []byte(strings.Replace(string(raw), baseCard[:len(baseCard)-1], cardJSON[:len(cardJSON)-1], 1))
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m["signatures"].([]any)[0].(map[string]any)
	}
	var c map[string]any
	if err := json.Unmarshal([]byte(baseCard), &c); err != nil {
		t.Fatal(err)
	}
	c["signatures"] = []any{sign(testKey, "old", oldCard), sign(next, "new", baseCard)}
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	rep := New(Options{Keys: keys}).VerifySignatures(t.Context(), raw, nil)
	if rep.Status != StatusVerified || len(rep.Entries) != 2 || rep.Entries[0].Result != ResultBadSignature || rep.Entries[1].Result != ResultVerified {
		t.Fatalf("status %s, entries %+v", rep.Status, rep.Entries)
	}
	if notes := strings.Join(rep.Entries[0].Notes, " "); !strings.Contains(notes, "left from before a key change") {
		t.Errorf("the old entry says nothing of the key change: %+v", rep.Entries[0])
	}
}
