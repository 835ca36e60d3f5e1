package sources

import (
	"context"
	"encoding/json"
	"net/url"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// EntryStore is what ManifestListings reads: the stored entries of the
// sources' last manifests that name a card (*catalog.Store).
type EntryStore interface {
	EntriesNamingCard(ctx context.Context, cardURL string) ([]catalog.SourceEntry, error)
}

// ManifestListings is the publisher proof of ARD manifests
// (verify.ManifestListings), read from the sources' stored entries: a
// publisher vouches for an agent when a manifest served over https on
// the publisher's own registrable domain lists the agent's card with a
// trustManifest whose identity is on that domain too (the identity's
// trust domain, as ARD's publisher-authority rule reads it, §4.5.1). An
// entry the registry skipped, or flagged for a trustManifest disagreeing
// with its identifier, vouches for nothing.
//
// Only manifests a source of this registry read count: the verifier
// never fetches a manifest to prove a publisher, so the proof is as
// fresh as the source's last check.
type ManifestListings struct {
	Store EntryStore
}

// VouchedBy answers whether a manifest on domain lists the card at
// cardURL with a trustManifest identity on domain, and that manifest's
// URL when one does.
func (m ManifestListings) VouchedBy(ctx context.Context, domain, cardURL string) (string, bool, error) {
	if domain == "" {
		return "", false, nil
	}
	entries, err := m.Store.EntriesNamingCard(ctx, cardURL)
	if err != nil {
		return "", false, err
	}
	for _, e := range entries {
		if vouches(e, domain) {
			return e.ManifestURL, true, nil
		}
	}
	return "", false, nil
}

// vouches is the rule of ManifestListings for one entry.
func vouches(e catalog.SourceEntry, domain string) bool {
	if e.Outcome != catalog.EntryCatalogued && e.Outcome != catalog.EntryUnchanged {
		return false
	}
	if e.TrustFlag != "" || e.TrustManifest == "" {
		return false
	}
	u, err := url.Parse(e.ManifestURL)
	if err != nil || u.Scheme != "https" || card.RegistrableDomain(u.Hostname()) != domain {
		return false
	}
	var tm struct {
		Identity string `json:"identity"`
	}
	if err := json.Unmarshal([]byte(e.TrustManifest), &tm); err != nil {
		return false
	}
	id := identityDomain(tm.Identity)
	return id != "" && card.RegistrableDomain(id) == domain
}
