// Package query reads a search request: the one parser every door (the
// JSON API, the console, and any door to come) maps its input onto, so
// that the same words and filters find the same agents whichever way a
// caller comes in.
package query

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// Parameter names of a search.
const (
	ParamText   = "q"
	ParamLimit  = "limit"
	ParamCursor = "cursor"
	// ParamExplain, "true", asks each hit of the page why it matched.
	ParamExplain = "explain"
	// ParamKeyChangedSince, a UTC day (YYYY-MM-DD), keeps the agents whose
	// current card came signed by a new key on that day or later
	// (catalog.KeyChangedSince).
	ParamKeyChangedSince = "key_changed_since"
)

// Input bounds beyond those of catalog. Filter values are short tokens
// (tags, media types, scheme names); the bounds keep one request's work
// small.
const (
	MaxFilterValues   = 20
	MaxFilterValueLen = 200
	MaxCursorLen      = 1024
)

// enumFilters lists the filters whose values the registry itself
// assigns, so any other value is a typo rather than a search that
// matches nothing.
var enumFilters = map[string][]string{
	catalog.FieldSignature: {
		catalog.SignatureUnchecked, catalog.SignatureVerified, catalog.SignatureInvalid,
		catalog.SignatureUnsigned, catalog.SignatureKeyUnavailable,
	},
	catalog.FieldHealth:            {catalog.HealthUnknown, catalog.HealthUp, catalog.HealthDown, catalog.HealthStale, catalog.HealthRemoved},
	catalog.FieldWorks:             {catalog.WorksAll, catalog.WorksSome, catalog.WorksNone, catalog.WorksUnchecked},
	catalog.FieldListing:           catalog.ListingStates,
	catalog.FieldPublisherVerified: {"true", "false"},
	catalog.FieldSeverity:          catalog.Severities,
	// The provenance facet's values are the registry's own words.
	catalog.FieldProvenance: catalog.ProvenanceValues,
}

// EnumValues is every value filter field accepts when the registry
// assigns them; nil for a free-form field.
func EnumValues(field string) []string {
	return slices.Clone(enumFilters[field])
}

// EnumFields are the filter fields whose values the registry assigns.
func EnumFields() []string {
	fields := make([]string, 0, len(enumFilters))
	for f := range enumFilters {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	return fields
}

// Request is a search as a caller asked for it, before the door adds who
// is asking (Query takes the scope).
type Request struct {
	Text    string
	Filters map[string][]string
	Limit   int
	Cursor  string
	// Explain asks each hit why it matched the text.
	Explain bool
	// KeyChangedSince, when not zero, is ParamKeyChangedSince's day.
	KeyChangedSince time.Time
}

// Query is the catalog query of r for a caller who sees sc.
func (r Request) Query(sc catalog.Scope) catalog.Query {
	q := catalog.Query{Text: r.Text, Filters: r.Filters, Limit: r.Limit, Cursor: r.Cursor, Scope: sc, Explain: r.Explain}
	if !r.KeyChangedSince.IsZero() {
		q.AnyOf = []catalog.FilterGroup{catalog.KeyChangedSince(r.KeyChangedSince, time.Now())}
	}
	return q
}

// Error is a search the registry refuses, in words for people. Err, when
// set, is the sentinel it amounts to (catalog.ErrInvalidCursor), so a door
// answers it as it answers the catalog's own.
type Error struct {
	// Parameter names the offending parameter; empty when the request as
	// a whole is malformed.
	Parameter string
	Message   string
	Err       error
}

func (e *Error) Error() string { return e.Message }

func (e *Error) Unwrap() error { return e.Err }

func invalid(param, format string, args ...any) *Error {
	return &Error{Parameter: param, Message: fmt.Sprintf(format, args...)}
}

// ParseString is Parse of a raw query string.
func ParseString(rawQuery string) (Request, error) {
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return Request{}, &Error{Message: "malformed query string"}
	}
	return Parse(values)
}

// Parse is strict: an unknown or repeated parameter is an error rather
// than silently ignored, so a misspelled filter (tags=…) does not return
// unfiltered results that look filtered. Its errors are *Error.
func Parse(values url.Values) (Request, error) {
	var r Request
	filters, err := parseFilters(values)
	if err != nil {
		return r, err
	}
	if len(filters) > 0 {
		r.Filters = filters
	}
	r.Text = values.Get(ParamText)
	if !utf8.ValidString(r.Text) || utf8.RuneCountInString(r.Text) > catalog.MaxQueryTextLen {
		return r, invalid(ParamText, "q must be UTF-8 text of at most %d characters", catalog.MaxQueryTextLen)
	}
	r.Limit = catalog.DefaultLimit
	if s := values.Get(ParamLimit); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || !isDigits(s) || n < 1 || n > catalog.MaxLimit {
			return r, invalid(ParamLimit, "limit must be an integer from 1 to %d", catalog.MaxLimit)
		}
		r.Limit = n
	}
	switch values.Get(ParamExplain) {
	case "", "false":
	case "true":
		r.Explain = true
	default:
		return r, invalid(ParamExplain, "explain must be true or false")
	}
	if s := values.Get(ParamKeyChangedSince); s != "" {
		day, err := time.Parse(catalog.KeyChangedDayLayout, s)
		if err != nil {
			return r, invalid(ParamKeyChangedSince, "key_changed_since must be a day, YYYY-MM-DD")
		}
		r.KeyChangedSince = day
	}
	r.Cursor = values.Get(ParamCursor)
	if len(r.Cursor) > MaxCursorLen {
		e := invalid(ParamCursor, "cursor is invalid or expired; repeat the search without it")
		e.Err = catalog.ErrInvalidCursor
		return r, e
	}
	return r, nil
}

// parseFilters checks every parameter but the text, limit and cursor as a
// filter field.
func parseFilters(values url.Values) (map[string][]string, error) {
	filters := make(map[string][]string)
	for name, vals := range values {
		switch name {
		case ParamText, ParamLimit, ParamCursor, ParamExplain, ParamKeyChangedSince:
			if len(vals) > 1 {
				return nil, invalid(name, "parameter %s given %d times; give it once", name, len(vals))
			}
			continue
		}
		if err := checkFilter(name, vals); err != nil {
			return nil, err
		}
		if name == catalog.FieldPublisher {
			norm, err := publishers(vals)
			if err != nil {
				return nil, err
			}
			vals = norm
		}
		filters[name] = vals
	}
	return filters, nil
}

func checkFilter(name string, vals []string) error {
	if !slices.Contains(catalog.FilterFields, name) {
		return invalid(name, "unknown parameter %q", name)
	}
	if len(vals) > MaxFilterValues {
		return invalid(name, "at most %d values of %s", MaxFilterValues, name)
	}
	for _, v := range vals {
		if v == "" || len(v) > MaxFilterValueLen || !utf8.ValidString(v) {
			return invalid(name, "each %s value must be 1 to %d bytes of UTF-8", name, MaxFilterValueLen)
		}
	}
	if name == catalog.FieldLabel {
		for _, v := range vals {
			if _, _, ok := catalog.ParseLabelFilter(v); !ok {
				return invalid(name, "label must be key or key:value, the key 1 to %d characters of a-z, 0-9, '.', '_', '-', '/'",
					catalog.MaxLabelKeyLen)
			}
		}
	}
	if allowed, ok := enumFilters[name]; ok {
		for _, v := range vals {
			if !slices.Contains(allowed, v) {
				return invalid(name, "%s must be one of %s", name, strings.Join(allowed, ", "))
			}
		}
	}
	return nil
}

// publishers writes each publisher value as the index holds it
// (card.NormalizePublisher): a Unicode domain in ASCII, a host on the
// domain as the domain.
func publishers(vals []string) ([]string, error) {
	out := make([]string, len(vals))
	for i, v := range vals {
		if out[i] = card.NormalizePublisher(v); out[i] == "" {
			return nil, invalid(catalog.FieldPublisher, "publisher %q is not a domain name or IP address", v)
		}
	}
	return out, nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
