package ard

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/ardentry"
	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// manifestMaxAge is how long a shared cache may keep the anonymous
// manifest (RFC 9111 §5.2.2.1); revalidation is a cheap 304.
const manifestMaxAge = 300

// registryQueries are the representative queries of the registry's own
// entry: the kinds of need its search answers.
var registryQueries = []string{
	"find an agent that extracts invoice data from a PDF as JSON",
	"which agents accept image input and answer in text",
	"agents with a signed card that support the JSON-RPC binding",
}

// manifestHead is the manifest up to its entries (spec/ard.md §4.1).
type manifestHead struct {
	SpecVersion string `json:"specVersion"`
	Host        struct {
		DisplayName string `json:"displayName"`
		Identifier  string `json:"identifier"`
	} `json:"host"`
}

// manifest serves /.well-known/ard.json: the registry itself (its search
// base as an application/ai-registry+json entry) and, when the operator
// publishes agents, every published agent the caller sees. It streams
// entries as the catalog reads them, so memory stays flat at any catalog
// size, and answers 304 to a matching If-None-Match before reading any.
func (d *Door) manifest(c echo.Context) error {
	ctx := c.Request().Context()
	sc := d.scope(c)
	origin := d.origin(c)
	version, err := d.catalog.PublishedVersion(ctx)
	if err != nil {
		return err
	}
	etag := d.manifestETag(version, origin, sc)
	h := c.Response().Header()
	h.Set("ETag", etag)
	h.Set("Vary", "Authorization, Cookie")
	h.Set("X-Content-Type-Options", "nosniff")
	if d.authz != nil && !auth.FromContext(ctx).SignedIn() && !d.devMode(c) {
		h.Set("Cache-Control", fmt.Sprintf("public, max-age=%d", manifestMaxAge))
	} else {
		h.Set("Cache-Control", "private, no-cache")
	}
	if etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	c.Response().WriteHeader(http.StatusOK)
	if c.Request().Method == http.MethodHead {
		return nil
	}
	w := bufio.NewWriterSize(c.Response(), 32<<10)
	enc := json.NewEncoder(w)
	var head manifestHead
	head.SpecVersion = ardentry.SpecVersion
	head.Host.DisplayName = d.name
	head.Host.Identifier = registryURN(origin)
	b, _ := json.Marshal(head) // strings only
	w.Write(b[:len(b)-1])
	w.WriteString(`,"entries":[`)
	if err := enc.Encode(entry{Identifier: registryURN(origin), DisplayName: d.name, Type: ardentry.TypeRegistry,
		URL:                   origin + BasePath + "/",
		Description:           "Search this registry's A2A agents (ARD v0.91 registry API: POST search, POST explore, GET agents).",
		Tags:                  []string{"registry", "a2a", "search"},
		RepresentativeQueries: registryQueries, Metadata: d.registryMetadata(origin)}); err != nil {
		return abort(err)
	}
	if d.publish.Agents {
		err := d.catalog.EachPublished(ctx, sc, catalog.Published{Collection: d.publish.Collection}, func(a catalog.PublishedAgent) error {
			w.WriteByte(',')
			e, _ := d.entry(origin, a.Summary, 0, a.Examples)
			return enc.Encode(e)
		})
		if err != nil {
			// The status is sent: break the response rather than end it as
			// if it were whole.
			d.log.Error("streaming the ARD manifest", "err", err)
			return abort(err)
		}
	}
	w.WriteString("]}\n")
	return w.Flush()
}

// registryMetadata is the metadata of the registry's own entry; nil when
// there is nothing to advertise.
func (d *Door) registryMetadata(origin string) any {
	if d.selfID == "" && d.feedPath == "" {
		return nil
	}
	m := &registryMetadata{RegistryID: d.selfID}
	if d.feedPath != "" {
		m.ChangeFeed = origin + d.feedPath
	}
	return m
}

// abort ends a response whose status is sent by breaking the connection
// (net/http's ErrAbortHandler), so the client sees a failure, not a
// truncated manifest that parses.
func abort(error) error {
	panic(http.ErrAbortHandler)
}

// devMode tells whether the caller is the local user of development mode.
func (d *Door) devMode(c echo.Context) bool {
	return auth.FromContext(c.Request().Context()).Source == auth.SourceDev
}

// manifestETag names one manifest: the catalog's version, what is
// published, where, and what the caller's scope sees.
func (d *Door) manifestETag(version, origin string, sc catalog.Scope) string {
	groups := make([]string, 0, len(sc.Groups))
	for _, g := range sc.Groups {
		groups = append(groups, strings.ToLower(strings.TrimSpace(g)))
	}
	slices.Sort(groups)
	h := sha256.New()
	fmt.Fprintf(h, "v1\x00%s\x00%s\x00%t\x00%s\x00%s\x00%t\x00%t\x00%s", version, origin, d.publish.Agents, d.publish.Collection,
		d.name, sc.All, sc.Review, strings.Join(groups, "\x00"))
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// registryURN is the registry's own identifier: urn:air:<its host>:registry:ard.
func registryURN(origin string) string {
	p, err := card.PublisherOf(origin)
	if err != nil {
		p = "localhost"
	}
	return "urn:air:" + p + ":registry:ard"
}
