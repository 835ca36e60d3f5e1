package verify

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

func TestKeyChangeFinding(t *testing.T) {
	signed := func(entries ...SignatureResult) SignatureReport {
		return SignatureReport{Status: StatusVerified, Entries: entries}
	}
	byKey := func(kid, thumb string) SignatureResult {
		return SignatureResult{Result: ResultVerified, KID: kid, Signer: &Signer{KID: kid, Thumbprint: thumb}}
	}
	unknown := func(kid string) SignatureResult { return SignatureResult{Result: ResultUnknownKey, KID: kid} }
	tests := []struct {
		name      string
		prev, cur SignatureReport
		want      bool
	}{
		{"same key", signed(byKey("k1", "T1")), signed(byKey("k1", "T1")), false},
		{"new key", signed(byKey("k1", "T1")), signed(byKey("k2", "T2")), true},
		// The kid reused for another key: the thumbprint decides.
		{"same kid, other key", signed(byKey("k1", "T1")), signed(byKey("k1", "T9")), true},
		{"whatever the verdict: unknown kids", signed(unknown("k1")), signed(unknown("k2")), true},
		{"kid unchanged, key now unavailable", signed(byKey("k1", "T1")), signed(unknown("k1")), false},
		{"rotation: both keys, then the new one", signed(byKey("k1", "T1"), byKey("k2", "T2")), signed(byKey("k2", "T2")), false},
		{"rotation: the new key added", signed(byKey("k1", "T1")), signed(byKey("k1", "T1"), byKey("k2", "T2")), false},
		{"previous unsigned", SignatureReport{Status: StatusUnsigned}, signed(byKey("k1", "T1")), false},
		{"now unsigned", signed(byKey("k1", "T1")), SignatureReport{Status: StatusUnsigned}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := keyChange(tc.prev, tc.cur, 3)
			if (f != nil) != tc.want {
				t.Fatalf("finding %+v, want one: %v", f, tc.want)
			}
			if f != nil && (f.Code != FindingSigningKeyChanged || f.Severity != SeverityWarning || !strings.Contains(f.Message, "version 3")) {
				t.Errorf("finding %+v", f)
			}
		})
	}
}

// A new version signed under another kid carries the finding in its
// report and the audit facet, though neither key verifies; the version
// after it, signed by the same key as it, does not.
func TestRunnerFindsKeyChange(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		r := NewRunner(New(Options{Keys: CatalogKeys{Store: s}}), s, RunnerOptions{})
		version := func(name, kid string) []byte {
			return signJCS(t, strings.Replace(baseCard, "Attack target", name, 1), map[string]any{"kid": kid, "typ": "JOSE"})
		}
		id := storeCard(t, s, signedURL, version("First", "k1")).Agent.ID
		runOnce(t, r, 1)
		storeCard(t, s, signedURL, version("Second", "k2"))
		runOnce(t, r, 1)
		codes := func() []string {
			v, err := s.Verification(t.Context(), id)
			if err != nil || v == nil {
				t.Fatalf("report: %+v, %v", v, err)
			}
			var rep Report
			if err := json.Unmarshal(v.Report, &rep); err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, f := range rep.Security {
				out = append(out, f.Code)
			}
			return out
		}
		if c := codes(); !slices.Contains(c, FindingSigningKeyChanged) {
			t.Errorf("version 2 findings %v lack %s", c, FindingSigningKeyChanged)
		}
		if ids, _ := searchIDs(t, s, catalog.FieldAudit, FindingSigningKeyChanged); !slices.Equal(ids, []string{id}) {
			t.Errorf("audit=%s finds %v, want [%s]", FindingSigningKeyChanged, ids, id)
		}
		storeCard(t, s, signedURL, version("Third", "k2"))
		runOnce(t, r, 1)
		if c := codes(); slices.Contains(c, FindingSigningKeyChanged) {
			t.Errorf("version 3, signed as version 2 was, has %s: %v", FindingSigningKeyChanged, c)
		}
	})
}
