package ardentry

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// Filter paths of ARD search (spec/ard.md §7.1): keys are dot-paths into
// an entry, values OR within a key, AND across keys.
const (
	PathType          = "type"
	PathIdentifier    = "identifier"
	PathPublisher     = "publisher"
	PathPublisherID   = "publisherId" // Appendix A's name of the same
	PathTags          = "tags"
	PathCapabilities  = "capabilities"
	PathTrustIdentity = "trustManifest.identity"
	PathTrustType     = "trustManifest.identityType"
	// PathMetadata prefixes every catalog filter field (catalog.FilterFields):
	// metadata.input_mode, metadata.security_scheme, metadata.listing…
	PathMetadata = "metadata."
)

// Bounds of one filter: a search's work stays small.
const (
	MaxFilterKeys   = 20
	MaxFilterValues = 20
	MaxValueLen     = 1024
)

// ErrFilter is wrapped by Filter's errors: the filter is the caller's
// mistake (400 INVALID_ARGUMENT), and the message names the path.
var ErrFilter = errors.New("invalid filter")

// Paths lists every filter path Filter accepts, for documentation and
// error messages.
func Paths() []string {
	out := []string{PathType, PathIdentifier, PathPublisher, PathPublisherID, PathTags, PathCapabilities,
		PathTrustIdentity, PathTrustType}
	for _, f := range catalog.FilterFields {
		out = append(out, PathMetadata+f)
	}
	return out
}

// Filter turns an ARD filter into catalog filter groups. none reports a
// filter no agent of this registry can match (a type other than A2A agent
// cards), so the door can answer an empty page without searching.
func Filter(filter map[string][]string) (groups []catalog.FilterGroup, none bool, err error) {
	if len(filter) > MaxFilterKeys {
		return nil, false, fmt.Errorf("%w: at most %d filter keys", ErrFilter, MaxFilterKeys)
	}
	keys := make([]string, 0, len(filter))
	for k := range filter {
		keys = append(keys, k)
	}
	slices.Sort(keys) // one error for one request, whichever key Go's map gives first
	for _, path := range keys {
		vals := filter[path]
		if len(vals) > MaxFilterValues {
			return nil, false, fmt.Errorf("%w: %s: at most %d values", ErrFilter, path, MaxFilterValues)
		}
		for _, v := range vals {
			if len(v) > MaxValueLen {
				return nil, false, fmt.Errorf("%w: %s: a value longer than %d bytes", ErrFilter, path, MaxValueLen)
			}
		}
		g, matchesNone, err := groupOf(path, vals)
		if err != nil {
			return nil, false, err
		}
		none = none || matchesNone
		groups = append(groups, g...)
	}
	return groups, none, nil
}

func groupOf(path string, vals []string) ([]catalog.FilterGroup, bool, error) {
	switch path {
	case PathType:
		// Every entry of this registry is an A2A agent card.
		return nil, !slices.ContainsFunc(vals, func(v string) bool { return strings.EqualFold(strings.TrimSpace(v), TypeA2ACard) }), nil
	case PathIdentifier:
		urls := make([]string, 0, len(vals))
		for _, v := range vals {
			u, err := card.CardURLOfURN(v)
			if errors.Is(err, card.ErrMalformedURN) {
				return nil, false, fmt.Errorf("%w: %s: %q is not an ARD identifier (urn:air:<publisher>[:<namespace>]:<name>)", ErrFilter, path, v)
			}
			if err == nil {
				urls = append(urls, u)
			}
		}
		return []catalog.FilterGroup{{Field: catalog.FilterCardURL, Values: urls}}, false, nil
	case PathPublisher, PathPublisherID:
		return []catalog.FilterGroup{{Field: catalog.FilterURNPublisher, Values: vals}}, false, nil
	case PathTags:
		return []catalog.FilterGroup{{Field: catalog.FieldTag, Values: vals}}, false, nil
	case PathCapabilities:
		return []catalog.FilterGroup{{Field: catalog.FieldSkill, Values: vals}}, false, nil
	case PathTrustIdentity:
		// An identity is https://<publisher> of an agent whose signature a
		// trusted key verified (trustManifestOf).
		var pubs []string
		for _, v := range vals {
			if p, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(v)), "https://"); ok && p != "" && !strings.ContainsAny(p, "/:?#") {
				pubs = append(pubs, p)
			}
		}
		return []catalog.FilterGroup{
			{Field: catalog.FilterURNPublisher, Values: pubs},
			{Field: catalog.FieldSignatureTrust, Values: TrustedSignatureTrusts()},
		}, false, nil
	case PathTrustType:
		if !slices.ContainsFunc(vals, func(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "https") }) {
			return nil, true, nil
		}
		return []catalog.FilterGroup{{Field: catalog.FieldSignatureTrust, Values: TrustedSignatureTrusts()}}, false, nil
	}
	if f, ok := strings.CutPrefix(path, PathMetadata); ok && slices.Contains(catalog.FilterFields, f) {
		if f == catalog.FieldLabel {
			for _, v := range vals {
				if _, _, ok := catalog.ParseLabelFilter(v); !ok {
					return nil, false, fmt.Errorf("%w: %s: %q is not key or key:value", ErrFilter, path, v)
				}
			}
		}
		return []catalog.FilterGroup{{Field: f, Values: vals}}, false, nil
	}
	return nil, false, fmt.Errorf("%w: unknown filter path %q; this registry filters on %s", ErrFilter, path, strings.Join(Paths(), ", "))
}

// FacetField is the catalog facet an explore facet path counts; ok is
// false for a path that has no facet here ("type" is counted by the door:
// every entry has the one type).
func FacetField(path string) (string, bool) {
	switch path {
	case PathTags:
		return catalog.FieldTag, true
	case PathCapabilities:
		return catalog.FieldSkill, true
	}
	if f, ok := strings.CutPrefix(path, PathMetadata); ok && slices.Contains(catalog.FilterFields, f) {
		return f, true
	}
	return "", false
}
