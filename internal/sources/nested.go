package sources

import (
	"context"
	"fmt"
	"net/http"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
)

// A 304 of a source's manifest says nothing of the catalogs it nests:
// each is a document of its own, changed on its own (ARD spec/ard.md
// §4.1 lets a manifest link catalogs by URL). So a check whose manifest
// answers 304 asks every nested catalog the last read followed with its
// own validators; when all answer 304 the check changes nothing, and when
// one changed (or is gone) the source is read again whole, the bodies
// already fetched reused.

// nestedSweep is what the conditional requests to a source's nested
// catalogs found.
type nestedSweep struct {
	// changed: a catalog answered with a body, or is gone.
	changed bool
	// fetched holds the bodies that answered, by canonical URL.
	fetched map[string]*crawler.Result
	asked   int
	// failed counts catalogs that could not be asked (a timeout, a 5xx):
	// they are left as the last read left them.
	failed int
}

// sweepNested asks the nested catalogs of src's last read, each with its
// own conditional request, in the order they were read.
func (s *Service) sweepNested(ctx context.Context, src catalog.Source) (nestedSweep, error) {
	entries, err := s.store.SourceEntries(ctx, src.ID)
	if err != nil {
		return nestedSweep{}, fmt.Errorf("entries of source %s: %w", src.ID, err)
	}
	sw := nestedSweep{fetched: map[string]*crawler.Result{}}
	asked := map[string]bool{}
	for _, e := range entries {
		if !recheckable(e) {
			continue
		}
		canon, err := card.CanonicalCardURL(e.URL)
		if err != nil || asked[canon] {
			continue
		}
		asked[canon] = true
		sw.asked++
		res, err := s.fetcher.FetchURL(ctx, canon, crawler.Conditional{ETag: e.ETag, LastModified: e.LastModified})
		switch {
		case err == nil && res.NotModified:
		case err == nil:
			sw.changed = true
			sw.fetched[canon] = res
			// The rest are read again with the whole source.
			return sw, nil
		case e.Outcome == EntryFollowed && res != nil && (res.Status == http.StatusNotFound || res.Status == http.StatusGone):
			sw.changed = true
			return sw, nil
		case e.Outcome != EntryFollowed:
			// It failed last time and still does: nothing new.
		default:
			sw.failed++
		}
	}
	return sw, nil
}

// recheckable tells whether a stored entry is a nested catalog a 304 of
// its parent must not hide: one that was read, or one whose fetch failed
// (it may answer now). A catalog skipped for what it is (too deep, a
// loop, no url, not a manifest) is read again only with its parent.
func recheckable(e catalog.SourceEntry) bool {
	if mediaType(e.Type) != TypeCatalog || e.URL == "" {
		return false
	}
	switch {
	case e.Outcome == EntryFollowed:
		return true
	case e.Outcome != catalog.EntrySkipped:
		return false
	}
	switch e.Reason {
	case ReasonDepthLimit, ReasonLoop, ReasonInvalidEntry, ReasonInvalidURN, ProblemNotManifest, crawler.ClassBlockedAddress,
		crawler.ClassInvalidURL:
		return false
	}
	return true
}

// unchangedMessage says what a check that changed nothing asked.
func (sw nestedSweep) unchangedMessage() string {
	switch {
	case sw.asked == 0:
		return "unchanged since the last check (304)"
	case sw.failed == 0:
		return fmt.Sprintf("unchanged since the last check (304), and its %d nested catalogs too", sw.asked)
	}
	return fmt.Sprintf("unchanged since the last check (304); of its %d nested catalogs, %d could not be asked and stay as last read",
		sw.asked, sw.failed)
}
