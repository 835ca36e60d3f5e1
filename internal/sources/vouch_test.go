package sources

import (
	"context"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// TestManifestListingsVouches: the rule of a publisher vouching through
// its ARD manifest, entry by entry.
func TestManifestListingsVouches(t *testing.T) {
	good := catalog.SourceEntry{ManifestURL: "https://www.acme.com/.well-known/ard.json", Outcome: catalog.EntryCatalogued,
		TrustManifest: `{"identity":"https://acme.com"}`}
	tests := []struct {
		name   string
		mutate func(*catalog.SourceEntry)
		want   bool
	}{
		{"manifest and identity on the domain", func(*catalog.SourceEntry) {}, true},
		{"unchanged entry", func(e *catalog.SourceEntry) { e.Outcome = catalog.EntryUnchanged }, true},
		{"did:web identity", func(e *catalog.SourceEntry) { e.TrustManifest = `{"identity":"did:web:agents.acme.com"}` }, true},
		{"bare domain identity", func(e *catalog.SourceEntry) { e.TrustManifest = `{"identity":"acme.com"}` }, true},
		{"identity elsewhere", func(e *catalog.SourceEntry) { e.TrustManifest = `{"identity":"https://other.dev"}` }, false},
		{"no trust manifest", func(e *catalog.SourceEntry) { e.TrustManifest = "" }, false},
		{"trust manifest without identity", func(e *catalog.SourceEntry) { e.TrustManifest = `{"attestations":[]}` }, false},
		{"manifest on another domain", func(e *catalog.SourceEntry) { e.ManifestURL = "https://directory.example/ard.json" }, false},
		{"manifest over http", func(e *catalog.SourceEntry) { e.ManifestURL = "http://acme.com/.well-known/ard.json" }, false},
		{"skipped entry", func(e *catalog.SourceEntry) { e.Outcome = catalog.EntrySkipped }, false},
		{"flagged entry", func(e *catalog.SourceEntry) { e.TrustFlag = ReasonPublisherMismatch }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := good
			tc.mutate(&e)
			if got := vouches(e, "acme.com"); got != tc.want {
				t.Errorf("vouches = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestManifestListingsFromStoredEntries: a source's stored entry, read
// back from the catalog on both databases by the card URL it lists (the
// card not stored yet), vouches for the publisher; another card is not
// vouched for.
func TestManifestListingsFromStoredEntries(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		src, err := s.CreateSource(ctx, catalog.System("test"), catalog.NewSource{URL: "https://acme.com/"})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		if _, ok, err := s.ClaimSource(ctx, src.ID, "me", now, time.Minute); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		manifest := "https://acme.com/.well-known/ard.json"
		cardURL := "https://agents.acme.com/.well-known/agent-card.json"
		_, err = s.RecordSourceCheck(ctx, catalog.System("test"), catalog.SourceCheck{SourceID: src.ID, Owner: "me", At: now,
			Status: catalog.SourceOK, NextCheckAt: now.Add(time.Hour), Changed: true,
			Entries: []catalog.SourceEntry{{Position: 0, ManifestURL: manifest, Identifier: "urn:agent:acme.com:billing",
				Type: "a2a-agent-card", URL: cardURL, Outcome: catalog.EntryCatalogued,
				TrustManifest: `{"identity":"https://acme.com"}`}}})
		if err != nil {
			t.Fatal(err)
		}
		ml := ManifestListings{Store: s}
		if u, ok, err := ml.VouchedBy(ctx, "acme.com", cardURL); err != nil || !ok || u != manifest {
			t.Errorf("VouchedBy(listed card) = %q, %v, %v", u, ok, err)
		}
		if _, ok, err := ml.VouchedBy(ctx, "acme.com", "https://agents.acme.com/other.json"); err != nil || ok {
			t.Errorf("VouchedBy(unlisted card) = %v, %v", ok, err)
		}
	})
}
