package ard

import (
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/ardentry"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/query"
)

// Page sizes (spec/ard.md §7.2, §7.4).
const (
	defaultSearchPageSize = 10
	defaultListPageSize   = 20
	maxPageSize           = catalog.MaxLimit // 100
)

// Federation modes (spec/ard.md §8).
const (
	federationAuto      = "auto"
	federationReferrals = "referrals"
	federationNone      = "none"
)

// retryAfter is the Retry-After, in seconds, of a search refused while the
// index is being built.
const retryAfter = "5"

// Routes a page token belongs to.
const (
	routeSearch = "search"
	routeList   = "list"
)

// search serves POST /search. Federation (spec/ard.md §8): every mode
// searches this registry's own catalog; "referrals" and "auto" list the
// peer registries it federates from as referrals for the client to
// follow. "auto" fans out to none of them: their agents that this
// registry may show are federated into its catalog already
// (docs/sources.md#federation), and a fan-out would wait on every peer.
func (d *Door) search(c echo.Context) error {
	var req searchRequest
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	if req.Query == nil || req.Query.Text == nil {
		return invalid("query.text is required")
	}
	text := *req.Query.Text
	if !utf8.ValidString(text) || utf8.RuneCountInString(text) > catalog.MaxQueryTextLen {
		return invalid("query.text must be UTF-8 text of at most %d characters", catalog.MaxQueryTextLen)
	}
	switch req.Federation {
	case "", federationAuto, federationReferrals, federationNone:
	default:
		return invalid("federation must be auto, referrals or none")
	}
	size, err := pageSize(req.PageSize, defaultSearchPageSize)
	if err != nil {
		return err
	}
	resp := searchResponse{Results: []result{}}
	if req.Federation == federationReferrals || req.Federation == federationAuto {
		refs, err := d.referrals(c)
		if err != nil {
			return err
		}
		resp.Referrals = &refs
	}
	page, top, next, err := d.find(c, routeSearch, text, req.Query.filter(), size, req.PageToken)
	if err != nil {
		return err
	}
	src := d.searchBase(c)
	for _, s := range page.Items {
		e, score := d.entry(d.origin(c), s, top, nil)
		resp.Results = append(resp.Results, result{entry: e, Score: score, Source: src})
	}
	resp.PageToken = next
	return c.JSON(http.StatusOK, resp)
}

// referrals are the peer registries this registry federates from.
func (d *Door) referrals(c echo.Context) ([]referral, error) {
	out := []referral{}
	if d.peers == nil {
		return out, nil
	}
	peers, err := d.peers.Peers(c.Request().Context())
	if err != nil {
		return nil, fmt.Errorf("listing peer registries: %w", err)
	}
	for _, p := range peers {
		origin, err := card.CanonicalOrigin(p.PeerURL)
		if err != nil {
			continue
		}
		name := p.PeerName
		if name == "" {
			name = origin
		}
		out = append(out, referral{Identifier: registryURN(origin), DisplayName: name, Type: ardentry.TypeRegistry, URL: p.PeerURL})
	}
	return out, nil
}

// find runs one page of a search for the door's routes: the ARD filter
// turned into catalog groups, the page token checked and opened, the
// catalog's errors turned into ARD ones. top is the best relevance of the
// search, from its first page; next the token of the following page.
func (d *Door) find(c echo.Context, route, text string, filter map[string][]string, size int, token string) (catalog.Page, float64, string, error) {
	groups, none, err := ardentry.Filter(filter)
	if errors.Is(err, ardentry.ErrFilter) {
		return catalog.Page{}, 0, "", invalid("%v", err)
	}
	if err != nil {
		return catalog.Page{}, 0, "", err
	}
	pg, err := d.tokens.decode(token, route)
	if err != nil {
		return catalog.Page{}, 0, "", invalid("pageToken is invalid or belongs to another request; repeat the request without it")
	}
	if none {
		return catalog.Page{}, 0, "", nil
	}
	// The same request type as the JSON API's and the console's searches.
	q := query.Request{Text: text, Limit: size, Cursor: pg.Cursor}.Query(d.scope(c))
	q.AnyOf, q.NoFacets = groups, true // results show entries, not facets
	res, err := d.catalog.Search(c.Request().Context(), q)
	if err := searchError(c, err); err != nil {
		return catalog.Page{}, 0, "", err
	}
	top := pg.Top
	if token == "" {
		for _, s := range res.Items {
			top = max(top, s.Score)
		}
	}
	next := ""
	if res.NextCursor != "" {
		next = d.tokens.encode(page{Route: route, Cursor: res.NextCursor, Top: top})
	}
	return res, top, next, nil
}

// searchError is the ARD error of a catalog search error; nil for nil.
func searchError(c echo.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, catalog.ErrInvalidCursor):
		return invalid("pageToken is invalid or belongs to another request; repeat the request without it")
	case errors.Is(err, catalog.ErrInvalidQuery):
		return invalid("%v", err)
	case errors.Is(err, catalog.ErrIndexNotReady):
		// Starting up: answer at once rather than hold the request for the
		// whole build (RFC 9110 §15.6.4, §10.2.3).
		c.Response().Header().Set("Retry-After", retryAfter)
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the search index is still being built; retry shortly")
	}
	return fmt.Errorf("searching: %w", err)
}

// pageSize reads a pageSize: absent or 0 is the default, above the
// maximum is the maximum (the spec caps it), negative is refused.
func pageSize(n *int, def int) (int, error) {
	switch {
	case n == nil || *n == 0:
		return def, nil
	case *n < 0:
		return 0, invalid("pageSize must be from 1 to %d", maxPageSize)
	}
	return min(*n, maxPageSize), nil
}

// explore serves POST /explore: facet counts over the whole matched set,
// scoped as every read (spec/ard.md §7.3). Explore never federates.
func (d *Door) explore(c echo.Context) error {
	var req exploreRequest
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	if req.ResultType == nil {
		return invalid("resultType is required")
	}
	text := ""
	if req.Query != nil && req.Query.Text != nil {
		text = *req.Query.Text
	}
	if !utf8.ValidString(text) || utf8.RuneCountInString(text) > catalog.MaxQueryTextLen {
		return invalid("query.text must be UTF-8 text of at most %d characters", catalog.MaxQueryTextLen)
	}
	if len(req.ResultType.Facets) > ardentry.MaxFilterKeys {
		return invalid("at most %d facets", ardentry.MaxFilterKeys)
	}
	facetLimit := 1
	for _, f := range req.ResultType.Facets {
		if f.Field != ardentry.PathType {
			if _, ok := ardentry.FacetField(f.Field); !ok {
				return invalid("cannot count facet %q; this registry counts type, tags, capabilities and metadata.<field>", f.Field)
			}
		}
		if f.Limit != nil && (*f.Limit < 1 || *f.Limit > maxPageSize) {
			return invalid("facet %s: limit must be from 1 to %d", f.Field, maxPageSize)
		}
		if f.MinCount != nil && *f.MinCount < 0 {
			return invalid("facet %s: minCount must not be negative", f.Field)
		}
		facetLimit = max(facetLimit, limitOf(f))
	}
	groups, none, err := ardentry.Filter(req.Query.filter())
	if errors.Is(err, ardentry.ErrFilter) {
		return invalid("%v", err)
	}
	if err != nil {
		return err
	}
	var page catalog.Page
	if !none {
		q := query.Request{Text: text, Limit: 1}.Query(d.scope(c))
		q.AnyOf, q.FacetLimit = groups, facetLimit
		page, err = d.catalog.Search(c.Request().Context(), q)
		if err := searchError(c, err); err != nil {
			return err
		}
	}
	resp := exploreResponse{ResultType: "facets", Facets: make(map[string]facetResult, len(req.ResultType.Facets))}
	for _, f := range req.ResultType.Facets {
		minCount := 1
		if f.MinCount != nil {
			minCount = *f.MinCount
		}
		buckets := []bucket{}
		if f.Field == ardentry.PathType {
			if page.Total > 0 && page.Total >= minCount {
				buckets = append(buckets, bucket{Value: ardentry.TypeA2ACard, Count: page.Total})
			}
		} else {
			field, _ := ardentry.FacetField(f.Field)
			for _, fc := range page.Facets[field] {
				if len(buckets) < limitOf(f) && fc.Count >= minCount && fc.Count > 0 {
					buckets = append(buckets, bucket{Value: fc.Value, Count: fc.Count})
				}
			}
		}
		resp.Facets[f.Field] = facetResult{Buckets: buckets}
	}
	return c.JSON(http.StatusOK, resp)
}

func limitOf(f facetRequest) int {
	if f.Limit == nil {
		return catalog.DefaultFacetLimit
	}
	return *f.Limit
}
