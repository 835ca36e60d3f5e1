package verify

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// testActor is who the tests write as.
var testActor = catalog.System("test")

// apiKeyCard is unsigned and sends its API key in the query string.
const apiKeyCard = `{"name":"Open door","description":"d","version":"1","supportedInterfaces":[{"url":"https://door.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"securitySchemes":{"k":{"apiKeySecurityScheme":{"name":"key","location":"query"}}},"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`

const (
	signedURL   = "https://agent.example.com/.well-known/agent-card.json"
	tamperedURL = "https://agent.example.com/tampered/.well-known/agent-card.json"
	unsignedURL = "https://door.example.com/.well-known/agent-card.json"
)

func storeCard(t *testing.T, s *catalog.Store, url string, raw []byte) catalog.UpsertResult {
	t.Helper()
	c, err := card.Parse(raw, card.DefaultLimits())
	if err != nil {
		t.Fatalf("parsing card for %s: %v", url, err)
	}
	res, err := s.Upsert(t.Context(), testActor, catalog.UpsertInput{CardURL: url, Card: c})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func pinKey(t *testing.T, s *catalog.Store) catalog.TrustedKey {
	t.Helper()
	jwk, err := json.Marshal(testJWK("k1"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewTrustedKey(jwk, "", []string{"https://AGENT.example.com:443"}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	added, err := s.AddTrustedKey(t.Context(), testActor, k)
	if err != nil {
		t.Fatal(err)
	}
	return added
}

// searchIDs returns the ids of agents matching one filter, and its facet.
func searchIDs(t *testing.T, s *catalog.Store, field, value string) ([]string, map[string][]catalog.FacetCount) {
	t.Helper()
	page, err := s.Search(t.Context(), catalog.Query{Filters: map[string][]string{field: {value}}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range page.Items {
		ids = append(ids, it.ID)
	}
	slices.Sort(ids)
	return ids, page.Facets
}

func sorted(ids ...string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

func runOnce(t *testing.T, r *Runner, want int) {
	t.Helper()
	n, err := r.RunOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("RunOnce verified %d cards, want %d", n, want)
	}
}

func wantStatus(t *testing.T, s *catalog.Store, id, want string, version int) {
	t.Helper()
	ag, err := s.Agent(t.Context(), catalog.ScopeAll, id)
	if err != nil {
		t.Fatal(err)
	}
	if ag.SignatureStatus != want {
		t.Errorf("agent %s signature %q, want %q", ag.CardURL, ag.SignatureStatus, want)
	}
	v, err := s.Verification(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if v == nil {
		t.Fatalf("agent %s has no report", ag.CardURL)
	}
	var rep Report
	if err := json.Unmarshal(v.Report, &rep); err != nil {
		t.Fatal(err)
	}
	if string(rep.Signatures.Status) != want || v.Status != want || v.Version != version {
		t.Errorf("agent %s report: status %q (row %q) version %d, want %q version %d",
			ag.CardURL, rep.Signatures.Status, v.Status, v.Version, want, version)
	}
}

func TestRunnerKeepsCatalogVerdictsCurrent(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := t.Context()
		// Search first, so the in-memory index exists and must follow.
		if err := s.WarmIndex(ctx); err != nil {
			t.Fatal(err)
		}
		signedRaw := signJCS(t, baseCard, map[string]any{"kid": "k1", "typ": "JOSE"})
		signed := storeCard(t, s, signedURL, signedRaw).Agent.ID
		tampered := storeCard(t, s, tamperedURL,
			[]byte(strings.Replace(string(signedRaw), "Attack target", "Attack targeT", 1))).Agent.ID
		unsigned := storeCard(t, s, unsignedURL, []byte(apiKeyCard)).Agent.ID
		if v, err := s.Verification(ctx, signed); err != nil || v != nil {
			t.Fatalf("report before any run: %+v, %v", v, err)
		}
		if ids, _ := searchIDs(t, s, catalog.FieldSignature, catalog.SignatureUnchecked); len(ids) != 3 {
			t.Fatalf("unchecked before the run: %v", ids)
		}
		key := pinKey(t, s)

		now := time.Now()
		v := New(Options{Keys: CatalogKeys{Store: s}, Now: func() time.Time { return now }})
		r := NewRunner(v, s, RunnerOptions{Batch: 2}) // two batches
		runOnce(t, r, 3)
		wantStatus(t, s, signed, catalog.SignatureVerified, 1)
		wantStatus(t, s, tampered, catalog.SignatureInvalid, 1)
		wantStatus(t, s, unsigned, catalog.SignatureUnsigned, 1)
		runOnce(t, r, 0) // nothing due
		if ids, _ := searchIDs(t, s, catalog.FieldSignatureTrust, string(TrustPinned)); !slices.Equal(ids, []string{signed}) {
			t.Errorf("signature_trust=pinned found %v, want %v", ids, []string{signed})
		}

		ids, facets := searchIDs(t, s, catalog.FieldSignature, catalog.SignatureVerified)
		if !slices.Equal(ids, []string{signed}) {
			t.Errorf("signature=verified found %v, want %v", ids, []string{signed})
		}
		if got := facets[catalog.FieldSignature]; !slices.Equal(got, []catalog.FacetCount{{Value: "verified", Count: 1}}) {
			t.Errorf("signature facet within signature=verified: %v", got)
		}
		if ids, _ := searchIDs(t, s, catalog.FieldAudit, FindingAPIKeyInQuery); !slices.Equal(ids, []string{unsigned}) {
			t.Errorf("audit=%s found %v, want %v", FindingAPIKeyInQuery, ids, []string{unsigned})
		}
		ids, facets = searchIDs(t, s, catalog.FieldAudit, FindingNoSecurity)
		if want := sorted(signed, tampered); !slices.Equal(ids, want) {
			t.Errorf("audit=%s found %v, want %v", FindingNoSecurity, ids, want)
		}
		if got := facets[catalog.FieldAudit]; !slices.Equal(got, []catalog.FacetCount{{Value: FindingNoSecurity, Count: 2}}) {
			t.Errorf("audit facet within audit=no_security: %v", got)
		}
		// The severity facet holds the severities of each agent's stored
		// findings, security audit and content scan alike.
		wantSev := map[string][]string{}
		for _, id := range sorted(signed, tampered, unsigned) {
			stored, err := s.Verification(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var rep Report
			if err := json.Unmarshal(stored.Report, &rep); err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Security {
				wantSev[string(f.Severity)] = append(wantSev[string(f.Severity)], id)
			}
			for _, f := range rep.Content {
				wantSev[string(f.Severity)] = append(wantSev[string(f.Severity)], id)
			}
		}
		if len(wantSev) == 0 {
			t.Fatal("the fixtures' reports hold no findings")
		}
		for _, sev := range catalog.Severities {
			want := slices.Compact(wantSev[sev])
			if ids, _ := searchIDs(t, s, catalog.FieldSeverity, sev); !slices.Equal(ids, want) {
				t.Errorf("severity=%s found %v, want %v", sev, ids, want)
			}
		}

		// Revoking the key re-verifies exactly the cards that name its kid.
		if _, err := s.RevokeTrustedKey(ctx, testActor, key.ID, now.Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		runOnce(t, r, 2)
		wantStatus(t, s, signed, catalog.SignatureInvalid, 1)
		if ids, _ := searchIDs(t, s, catalog.FieldSignature, catalog.SignatureVerified); len(ids) != 0 {
			t.Errorf("signature=verified after revocation found %v", ids)
		}
		if ids, _ := searchIDs(t, s, catalog.FieldSignature, catalog.SignatureInvalid); !slices.Equal(ids, sorted(signed, tampered)) {
			t.Errorf("signature=invalid after revocation found %v", ids)
		}

		// Pinning it again (allowed: the old row is revoked) restores it.
		pinKey(t, s)
		runOnce(t, r, 2)
		wantStatus(t, s, signed, catalog.SignatureVerified, 1)

		// A new card version is unchecked until it gets a report of its own.
		v2 := signJCS(t, strings.Replace(baseCard, `"version":"1"`, `"version":"2"`, 1), map[string]any{"kid": "k1"})
		storeCard(t, s, signedURL, v2)
		if ag, _ := s.Agent(ctx, catalog.ScopeAll, signed); ag.SignatureStatus != catalog.SignatureUnchecked {
			t.Errorf("new version signature %q, want unchecked", ag.SignatureStatus)
		}
		if rep, err := s.Verification(ctx, signed); err != nil || rep != nil {
			t.Errorf("new version has a report before the run: %+v, %v", rep, err)
		}
		if ids, _ := searchIDs(t, s, catalog.FieldSignature, catalog.SignatureVerified); len(ids) != 0 {
			t.Errorf("signature=verified with an unchecked new version found %v", ids)
		}
		runOnce(t, r, 1)
		wantStatus(t, s, signed, catalog.SignatureVerified, 2)
		if ids, _ := searchIDs(t, s, catalog.FieldAudit, FindingNoSecurity); !slices.Equal(ids, sorted(signed, tampered)) {
			t.Errorf("audit facet of the new version: %v", ids)
		}

		// Reports age out.
		due, err := s.DueVerifications(ctx, now.Add(DefaultRunnerMaxAge+time.Minute), 10)
		if err != nil || len(due) != 3 {
			t.Errorf("due after max age: %d, %v", len(due), err)
		}
	})
}

// A key change that commits while a report is being made leaves that
// report stale, whichever order the two commit in.
func TestReportUnderOldTrustIsStale(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := t.Context()
		id := storeCard(t, s, signedURL, signJCS(t, baseCard, map[string]any{"kid": "k1"})).Agent.ID
		gen, err := s.TrustGeneration(ctx)
		if err != nil {
			t.Fatal(err)
		}
		record := func(g int64) {
			t.Helper()
			now := time.Now()
			if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: id, Version: 1,
				Status: catalog.SignatureKeyUnavailable, Report: json.RawMessage(`{}`), VerifiedAt: now,
				RecheckAt: now.Add(time.Hour), TrustGeneration: g, KIDs: []string{"k1"}}}); err != nil {
				t.Fatal(err)
			}
		}
		isDue := func() bool {
			t.Helper()
			due, err := s.DueVerifications(ctx, time.Now(), 10)
			if err != nil {
				t.Fatal(err)
			}
			return len(due) == 1
		}
		record(gen)
		if isDue() {
			t.Fatal("fresh report due")
		}
		// Key change after the report was stored: marked through its kid.
		key := pinKey(t, s)
		if !isDue() {
			t.Fatal("report naming a changed kid not due")
		}
		// Key change before the report was stored: its generation is old.
		gen, _ = s.TrustGeneration(ctx)
		if _, err := s.RevokeTrustedKey(ctx, testActor, key.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		record(gen)
		if !isDue() {
			t.Fatal("report made under an older trust generation not due")
		}
		// A key under another kid leaves the report alone.
		gen, _ = s.TrustGeneration(ctx)
		record(gen)
		otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		other, err := NewTrustedKey(mustJSON(t, jose.JSONWebKey{Key: &otherKey.PublicKey, KeyID: "other"}), "", []string{"*"}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddTrustedKey(ctx, testActor, other); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddTrustedKey(ctx, testActor, other); !errors.Is(err, catalog.ErrConflict) {
			t.Fatalf("adding an active key twice: %v, want ErrConflict", err)
		}
		if isDue() {
			t.Fatal("report due after a change of an unrelated kid")
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewTrustedKey(t *testing.T) {
	pub := mustJSON(t, testJWK("k1"))
	priv := mustJSON(t, testJWKPrivate("k1"))
	tests := []struct {
		name    string
		jwk     []byte
		kid     string
		origins []string
		wantErr bool
	}{
		{"public key", pub, "", []string{"https://agent.example.com"}, false},
		{"private key reduced to public", priv, "k1", []string{"*"}, false},
		{"kid disagrees", pub, "k2", []string{"*"}, true},
		{"no origins", pub, "", nil, true},
		{"bad origin", pub, "", []string{"agent.example.com"}, true},
		{"symmetric", []byte(`{"kty":"oct","k":"c2VjcmV0","kid":"k1"}`), "", []string{"*"}, true},
		{"two keys", jwksJSON(t, testJWK("a"), testJWK("b")), "", []string{"*"}, true},
		{"not json", []byte(`{`), "", []string{"*"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := NewTrustedKey(tc.jwk, tc.kid, tc.origins, time.Time{})
			if tc.wantErr {
				if !errors.Is(err, ErrTrustedKey) {
					t.Fatalf("err = %v, want ErrTrustedKey", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(k.JWK), `"d"`) {
				t.Errorf("stored JWK keeps private material: %s", k.JWK)
			}
			want := describeKey("k1", testJWK("k1"), KeySourcePinned, "").Thumbprint
			if k.KID != "k1" || k.Thumbprint != want {
				t.Errorf("kid %q thumbprint %q, want k1 %q", k.KID, k.Thumbprint, want)
			}
			keys, err := CatalogKeys{Store: lookupFunc(func(string) []catalog.TrustedKey { return []catalog.TrustedKey{k} })}.
				PinnedKeys(t.Context(), "k1")
			if err != nil || len(keys) != 1 || describeKey("k1", keys[0].Key, KeySourcePinned, "").Thumbprint != want {
				t.Errorf("stored key does not read back: %+v, %v", keys, err)
			}
		})
	}
}

type lookupFunc func(kid string) []catalog.TrustedKey

func (f lookupFunc) TrustedKeysByKID(_ context.Context, kid string) ([]catalog.TrustedKey, error) {
	return f(kid), nil
}

func testJWKPrivate(kid string) jose.JSONWebKey {
	return jose.JSONWebKey{Key: testKey, KeyID: kid, Algorithm: "ES256", Use: "sig"}
}

// TestVerifyStoredAnswersAtOnce: a registration verifies its new version in
// the same step, so the agent never reads "unchecked" after it (issue 10
// finding 13); the background pass then has nothing left to do.
func TestVerifyStoredAnswersAtOnce(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		const url = "https://unsigned.example.com/.well-known/agent-card.json"
		res := storeCard(t, s, url, []byte(apiKeyCard))
		r := NewRunner(New(Options{Keys: CatalogKeys{Store: s}}), s, RunnerOptions{})
		err := r.VerifyStored(t.Context(), catalog.VerifyTarget{AgentID: res.Agent.ID, CardURL: url,
			Version: res.Agent.CurrentVersion, Raw: []byte(apiKeyCard)})
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, s, res.Agent.ID, catalog.SignatureUnsigned, 1)
		runOnce(t, r, 0)
	})
}
