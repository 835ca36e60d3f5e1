package ardentry

import (
	"errors"
	"slices"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
)

// TestTrustManifestOnlyWhenVerified: an unverified or self-vouched
// signature earns no trustManifest.
func TestTrustManifestOnlyWhenVerified(t *testing.T) {
	base := catalog.Summary{ID: "a", CardURL: "https://x.example/card.json", Name: "X"}
	for _, tc := range []struct {
		status, trust string
		want          string
	}{
		{catalog.SignatureVerified, "pinned", AttestationPinnedKey},
		{catalog.SignatureVerified, "trusted_origin", AttestationTrustedOrigin},
		{catalog.SignatureVerified, "origin_only", ""},
		{catalog.SignatureUnsigned, "", ""},
		{catalog.SignatureInvalid, "pinned", ""},
	} {
		s := base
		s.SignatureStatus, s.SignatureTrust = tc.status, tc.trust
		tm := FromSummary(s, 0).Trust
		switch {
		case tc.want == "" && tm != nil:
			t.Errorf("%s/%s: trustManifest %+v", tc.status, tc.trust, tm)
		case tc.want != "" && (tm == nil || tm.Identity != "https://x.example" || tm.Attestations[0].Type != tc.want):
			t.Errorf("%s/%s: trustManifest %+v", tc.status, tc.trust, tm)
		}
	}
	imported := base
	imported.CardURL = "urn:a2a-registry:import:ab"
	imported.SignatureStatus, imported.SignatureTrust = catalog.SignatureVerified, "pinned"
	if tm := FromSummary(imported, 0).Trust; tm != nil {
		t.Errorf("an imported card has no publisher to vouch for: %+v", tm)
	}
}

func TestRepresentativeQueries(t *testing.T) {
	s := catalog.Summary{CardURL: "https://x.example/c", Name: "X"}
	for _, tc := range []struct {
		in   []string
		want int
	}{{nil, 0}, {[]string{"a"}, 0}, {[]string{"a", "b"}, 2}, {[]string{"a", "b", "c", "d", "e", "f"}, 5}} {
		if got := len(FromSummary(s, 0).WithExamples(tc.in).RepresentativeQueries); got != tc.want {
			t.Errorf("%d examples: %d queries, want %d", len(tc.in), got, tc.want)
		}
	}
}

func TestFilter(t *testing.T) {
	groups, none, err := Filter(map[string][]string{"tags": {"a", "b"}, "metadata.binding": {"GRPC"}, "publisher": {"x.example"}})
	if err != nil || none || len(groups) != 3 {
		t.Fatalf("groups %+v none %t err %v", groups, none, err)
	}
	want := []catalog.FilterGroup{{Field: catalog.FieldBinding, Values: []string{"GRPC"}},
		{Field: catalog.FilterURNPublisher, Values: []string{"x.example"}}, {Field: catalog.FieldTag, Values: []string{"a", "b"}}}
	for i, g := range groups {
		if g.Field != want[i].Field || !slices.Equal(g.Values, want[i].Values) {
			t.Errorf("group %d = %+v, want %+v", i, g, want[i])
		}
	}
	if _, none, _ := Filter(map[string][]string{"type": {"application/mcp-server-card+json"}}); !none {
		t.Error("an MCP type filter matches A2A agents")
	}
	for _, bad := range []map[string][]string{{"colour": {"x"}}, {"metadata.colour": {"x"}}, {"identifier": {"urn:x"}},
		{"metadata.label": {"Bad Key"}}} {
		if _, _, err := Filter(bad); !errors.Is(err, ErrFilter) {
			t.Errorf("Filter(%v) = %v, want ErrFilter", bad, err)
		}
	}
}
