package ard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/ardentry"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// listParams are the parameters GET /agents takes (spec/ard.md §7.4).
var listParams = []string{"filter", "orderBy", "pageSize", "pageToken"}

// listAgents serves GET /agents: every agent the caller sees, by display
// name, filtered by a filter expression (Appendix A).
func (d *Door) listAgents(c echo.Context) error {
	values, err := url.ParseQuery(c.Request().URL.RawQuery)
	if err != nil {
		return invalid("malformed query string")
	}
	for name, vals := range values {
		if !slices.Contains(listParams, name) {
			return invalid("unknown parameter %q; GET /agents takes %s", name, strings.Join(listParams, ", "))
		}
		if len(vals) > 1 {
			return invalid("parameter %s given %d times; give it once", name, len(vals))
		}
	}
	filter, err := parseFilterExpr(values.Get("filter"))
	if err != nil {
		return invalid("filter: %v", err)
	}
	switch strings.ToLower(strings.Join(strings.Fields(values.Get("orderBy")), " ")) {
	case "", "displayname", "displayname asc":
		// The catalog orders a search without text by name.
	default:
		return invalid("orderBy: this registry orders by displayName (ascending) only")
	}
	var size *int
	if s := values.Get("pageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return invalid("pageSize must be an integer from 1 to %d", maxPageSize)
		}
		size = &n
	}
	n, err := pageSize(size, defaultListPageSize)
	if err != nil {
		return err
	}
	page, _, next, err := d.find(c, routeList, "", filter, n, values.Get("pageToken"))
	if err != nil {
		return err
	}
	resp := listResponse{Items: make([]entry, 0, len(page.Items)), Total: page.Total, PageToken: next}
	for _, s := range page.Items {
		e, _ := d.entry(d.origin(c), s, 0, nil)
		resp.Items = append(resp.Items, e)
	}
	return c.JSON(http.StatusOK, resp)
}

// getAgent serves GET /agents/{identifier}: the one agent whose identifier
// is exactly the path segment, percent-decoded once (ADR 0010), without
// score or source; ETag and If-None-Match as RFC 9110 §8.8.3, §13.1.2.
func (d *Door) getAgent(c echo.Context) error {
	raw, err := url.PathUnescape(c.Param("identifier"))
	if err != nil || !utf8Valid(raw) {
		return invalid("the identifier is not a valid percent-encoded path segment")
	}
	cardURL, err := card.CardURLOfURN(raw)
	switch {
	case errors.Is(err, card.ErrMalformedURN):
		return invalid("%q is not an ARD identifier (urn:air:<publisher>[:<namespace>]:<name>)", raw)
	case err != nil:
		return errNotFound("no agent %s", raw)
	}
	q := catalog.Query{Limit: 1, FacetLimit: 1, Scope: d.scope(c),
		AnyOf: []catalog.FilterGroup{{Field: catalog.FilterCardURL, Values: []string{cardURL}}}}
	page, err := d.catalog.Search(c.Request().Context(), q)
	if err := searchError(c, err); err != nil {
		return err
	}
	// The index matches card URLs ignoring case; the identifier is exact.
	i := slices.IndexFunc(page.Items, func(s catalog.Summary) bool { return s.CardURL == cardURL })
	if i < 0 {
		return errNotFound("no agent %s", raw)
	}
	sum := page.Items[i]
	a, err := d.catalog.Agent(c.Request().Context(), d.scope(c), sum.ID)
	if errors.Is(err, catalog.ErrNotFound) {
		return errNotFound("no agent %s", raw)
	}
	if err != nil {
		return fmt.Errorf("loading agent %s: %w", sum.ID, err)
	}
	e, _ := d.entry(d.origin(c), sum, 0, ardentry.ExamplesOf(a.Card))
	body, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding agent %s: %w", sum.ID, err)
	}
	sha := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sha[:16]) + `"`
	h := c.Response().Header()
	h.Set("ETag", etag)
	// What a caller sees depends on who they are.
	h.Set("Cache-Control", "private, no-cache")
	h.Set("Vary", "Authorization, Cookie")
	if etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, body)
}

func utf8Valid(s string) bool { return s != "" && strings.ToValidUTF8(s, "\uFFFD") == s }

// etagMatches reports whether an If-None-Match field matches etag with the
// weak comparison RFC 9110 §13.1.2 prescribes for it.
func etagMatches(field, etag string) bool {
	field = strings.TrimSpace(field)
	if field == "" {
		return false
	}
	if field == "*" {
		return true
	}
	for _, t := range strings.Split(field, ",") {
		if strings.TrimPrefix(strings.TrimSpace(t), "W/") == etag {
			return true
		}
	}
	return false
}

// parseFilterExpr reads GET /agents' filter (spec/ard.md Appendix A):
// clauses joined by AND, each `path = value` where value is a bare word
// or a quoted string ('…' or "…") of comma-separated alternatives (OR).
// Paths are those of search filters (ardentry.Paths).
func parseFilterExpr(s string) (map[string][]string, error) {
	out := map[string][]string{}
	rest := strings.TrimSpace(s)
	for rest != "" {
		i := strings.IndexAny(rest, "=")
		if i <= 0 {
			return nil, errors.New(`want path = 'value' clauses joined by AND`)
		}
		path := strings.TrimSpace(rest[:i])
		if path == "" || strings.ContainsAny(path, " \t'\"") {
			return nil, fmt.Errorf("bad field path %q", path)
		}
		rest = strings.TrimSpace(rest[i+1:])
		var value string
		if rest != "" && (rest[0] == '\'' || rest[0] == '"') {
			end := strings.IndexByte(rest[1:], rest[0])
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote after %s", path)
			}
			value, rest = rest[1:1+end], strings.TrimSpace(rest[2+end:])
		} else {
			end := strings.IndexAny(rest, " \t")
			if end < 0 {
				end = len(rest)
			}
			value, rest = rest[:end], strings.TrimSpace(rest[end:])
		}
		if value == "" {
			return nil, fmt.Errorf("empty value of %s", path)
		}
		if _, dup := out[path]; dup {
			return nil, fmt.Errorf("%s given twice; list its alternatives in one clause, separated by commas", path)
		}
		for _, v := range strings.Split(value, ",") {
			if v = strings.TrimSpace(v); v != "" {
				out[path] = append(out[path], v)
			}
		}
		if rest == "" {
			break
		}
		word, after, ok := strings.Cut(rest, " ")
		if !ok || !strings.EqualFold(word, "AND") {
			return nil, fmt.Errorf("expected AND after the value of %s", path)
		}
		rest = strings.TrimSpace(after)
		if rest == "" {
			return nil, errors.New("nothing after AND")
		}
	}
	return out, nil
}
