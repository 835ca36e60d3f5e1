package sources

import (
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
)

// TestOriginsFor holds what each audience reads of an agent's provenance:
// a viewer never a URL, an id or a name that only an operator may read.
func TestOriginsFor(t *testing.T) {
	const secret = "s3cret"
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	ps := []catalog.Provenance{
		{Kind: catalog.ProvenanceRegistered, By: "alice@example.com", FirstAt: at, LastAt: at},
		{Kind: catalog.ProvenanceSource, SourceID: "src-1", SourceURL: "https://u:" + secret + "@Pub.Example:8443/ard.json?token=" + secret,
			ManifestURL: "https://Pub.Example:8443/nested.json?token=" + secret, EntryID: "urn:air:pub.example:a", Relation: catalog.RelationPublishedFrom,
			FirstAt: at, LastAt: at},
	}
	es := []catalog.SourceEntry{{ManifestURL: "https://Pub.Example:8443/nested.json?token=" + secret, Identifier: "urn:air:pub.example:a",
		URL: "https://pub.example/card?k=" + secret, Outcome: catalog.EntryCatalogued, Message: "fetched https://pub.example/?k=" + secret,
		Tags: []string{"t"}, RepresentativeQueries: []string{"q"}, AgentID: "a1"}}
	for _, tc := range []struct {
		who  Audience
		leak bool
	}{{AudienceViewer, false}, {AudienceOperator, true}} {
		o := originsFor(ps, es, tc.who)
		var all []string
		for _, p := range o.Provenance {
			all = append(all, p.By, p.SourceID, p.SourceURL, p.ManifestURL)
		}
		for _, e := range o.Entries {
			all = append(all, e.ManifestURL, e.URL, e.Message)
		}
		joined := strings.Join(all, " ")
		if got := strings.Contains(joined, secret) || strings.Contains(joined, "alice") || strings.Contains(joined, "src-1"); got != tc.leak {
			t.Errorf("audience %d reads URLs, ids or names: %v, want %v (%q)", tc.who, got, tc.leak, joined)
		}
		p, e := o.Provenance[1], o.Entries[0]
		if p.ManifestHost != "pub.example" || e.ManifestHost != "pub.example" || p.Relation != catalog.RelationPublishedFrom ||
			p.EntryID != "urn:air:pub.example:a" || e.Identifier != "urn:air:pub.example:a" || len(e.RepresentativeQueries) != 1 ||
			o.Provenance[0].Kind != catalog.ProvenanceRegistered || e.AgentID != "a1" {
			t.Errorf("audience %d: provenance %+v, entry %+v", tc.who, p, e)
		}
	}
	if h := urlHost("not a url"); h != "" {
		t.Errorf("urlHost of a non-URL = %q", h)
	}
}
