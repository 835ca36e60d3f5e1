package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"
)

// Change feed parameters and bounds. A seq is a positive int64, so 19
// digits hold every one; the bound keeps huge digit strings from reaching
// the parser.
const (
	paramSince          = "since"
	defaultChangesLimit = 100
	maxChangesLimit     = 1000
	maxSinceDigits      = 19
)

// listChanges serves the change feed. The catalog assigns seqs in commit
// order (one writer at a time on SQLite, an advisory lock on PostgreSQL),
// so a poller that passes the last seq it saw never skips an entry that
// commits later with a smaller seq.
func (a *API) listChanges(c echo.Context) error {
	since, limit, err := parseChanges(c.Request().URL.RawQuery)
	if err != nil {
		return err
	}
	items, err := a.catalog.Changes(c.Request().Context(), a.scope(c), since, limit)
	if err != nil {
		return fmt.Errorf("reading change feed after %d: %w", since, err)
	}
	l := ChangeList{Items: make([]Change, len(items)), NextSince: since, RegistryID: a.registryID}
	for i, ch := range items {
		l.Items[i] = newChange(ch)
		// The largest seq rather than the last one: the cursor must never
		// move back, whatever order a store returns.
		l.NextSince = max(l.NextSince, ch.Seq)
	}
	return c.JSON(http.StatusOK, l)
}

// parseChanges is strict like parseSearch: a mirror that misspells since
// must not silently restart from the beginning of the feed.
func parseChanges(rawQuery string) (since int64, limit int, err error) {
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return 0, 0, newError(http.StatusBadRequest, CodeInvalidParameter, "malformed query string")
	}
	for name, vals := range values {
		switch name {
		case paramSince, paramLimit:
			if len(vals) > 1 {
				return 0, 0, invalidParameter(name, "parameter %s given %d times; give it once", name, len(vals))
			}
		default:
			return 0, 0, invalidParameter(name, "unknown parameter %q", name)
		}
	}

	if vals, ok := values[paramSince]; ok {
		s := vals[0]
		bad := invalidParameter(paramSince, "since must be a non-negative integer: the next_since of the previous answer, or 0")
		if len(s) > maxSinceDigits || !isDigits(s) {
			return 0, 0, bad
		}
		n, perr := strconv.ParseInt(s, 10, 64)
		if perr != nil {
			// Above the int64 range: no seq can be that large.
			return 0, 0, bad
		}
		since = n
	}

	limit = defaultChangesLimit
	if vals, ok := values[paramLimit]; ok {
		s := vals[0]
		n, perr := strconv.Atoi(s)
		if !isDigits(s) || perr != nil || n < 1 || n > maxChangesLimit {
			return 0, 0, invalidParameter(paramLimit, "limit must be an integer from 1 to %d", maxChangesLimit)
		}
		limit = n
	}
	return since, limit, nil
}
