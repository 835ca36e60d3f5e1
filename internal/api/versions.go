package api

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
)

func (a *API) getRawCard(c echo.Context) error {
	id, err := agentID(c)
	if err != nil {
		return err
	}
	raw, err := a.catalog.RawCard(c.Request().Context(), a.scope(c), id)
	if errors.Is(err, catalog.ErrNotFound) {
		return agentNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("loading raw card of agent %s: %w", id, err)
	}
	// The current card changes on refresh: caches must revalidate
	// (RFC 9111 §5.2.2.4), which the ETag makes cheap.
	return serveRaw(c, raw, "no-cache")
}

func (a *API) listVersions(c echo.Context) error {
	id, err := agentID(c)
	if err != nil {
		return err
	}
	vs, err := a.catalog.Versions(c.Request().Context(), a.scope(c), id)
	// Every catalogued agent has at least one version, so an empty list
	// means the agent does not exist.
	if errors.Is(err, catalog.ErrNotFound) || (err == nil && len(vs) == 0) {
		return agentNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("listing versions of agent %s: %w", id, err)
	}
	return c.JSON(http.StatusOK, newVersionList(vs))
}

func (a *API) getVersion(c echo.Context) error {
	id, err := agentID(c)
	if err != nil {
		return err
	}
	s := c.Param("n")
	if strings.Contains(s, "/") {
		// echo lets a route's last parameter run to the end of the path.
		return echo.ErrNotFound
	}
	n, err := strconv.Atoi(s)
	if err != nil || !isDigits(s) || n < 1 {
		return invalidParameter("n", "version number must be a positive integer")
	}
	v, err := a.catalog.Version(c.Request().Context(), a.scope(c), id, n)
	if errors.Is(err, catalog.ErrNotFound) {
		return newError(http.StatusNotFound, CodeNotFound, "version %d of agent %s not found", n, id)
	}
	if err != nil {
		return fmt.Errorf("loading version %d of agent %s: %w", n, id, err)
	}
	// A stored version never changes.
	return serveRaw(c, v.Raw, "private, max-age=31536000, immutable")
}

// rawCardCSP forbids everything a document could load or run: the bytes
// are third-party content and must stay inert even if a browser were
// tricked into rendering them.
const rawCardCSP = "default-src 'none'"

// serveRaw writes card bytes exactly as received. The type is fixed to
// application/json whatever the bytes hold; nosniff keeps browsers from
// second-guessing it (https://fetch.spec.whatwg.org/#x-content-type-options-header).
// The ETag is the strong validator sha256 of the bytes (RFC 9110 §8.8.3).
func serveRaw(c echo.Context, raw []byte, cacheControl string) error {
	sum := sha256.Sum256(raw)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	h := c.Response().Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", cacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", rawCardCSP)
	if etagMatches(strings.Join(c.Request().Header.Values("If-None-Match"), ","), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, raw)
}

// etagMatches applies If-None-Match's weak comparison (RFC 9110 §13.1.2).
func etagMatches(ifNoneMatch, etag string) bool {
	if ifNoneMatch == "" {
		return false
	}
	for _, candidate := range strings.Split(ifNoneMatch, ",") {
		candidate = strings.TrimSpace(candidate)
		if candidate == "*" || strings.TrimPrefix(candidate, "W/") == etag {
			return true
		}
	}
	return false
}
