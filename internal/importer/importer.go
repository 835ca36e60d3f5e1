// Package importer puts agent cards read from files into the catalog: the
// `registry import` command and the example cards loaded on a first start.
//
// Each card is parsed completely before one catalog upsert (a single
// transaction), so a file is either imported whole or not at all.
package importer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// ErrTooLarge is returned for a file bigger than the card size limit.
var ErrTooLarge = errors.New("card file too large")

// Outcome tells what an import did to the catalog.
type Outcome string

// Outcomes.
const (
	Created   Outcome = "created"
	Updated   Outcome = "updated"
	Unchanged Outcome = "unchanged"
)

// WellKnownPath is where A2A v0.3+ agents serve their card (A2A v0.3
// §5.3, v1.0 §8.2).
const WellKnownPath = "/.well-known/agent-card.json"

// Store is the part of the catalog an import writes to.
type Store interface {
	Upsert(ctx context.Context, actor catalog.Actor, in catalog.UpsertInput) (catalog.UpsertResult, error)
}

// importActor is who the catalog records as storing imported cards.
var importActor = catalog.System("import")

// Importer parses card files and upserts them. Its zero value is not
// usable: Store is required.
type Importer struct {
	Store Store
	// Limits bound parsing; Limits.MaxBytes also caps how much of a file is
	// read. Zero fields take card.DefaultLimits() values.
	Limits card.Limits
	// Now stamps ReceivedAt; nil means time.Now.
	Now func() time.Time
}

// Result is the outcome of importing one card.
type Result struct {
	CardURL string
	AgentID string
	Name    string
	Outcome Outcome
}

// File reads the card at path (at most Limits.MaxBytes) and imports it.
func (im *Importer) File(ctx context.Context, path string) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	raw, err := im.read(f)
	if err != nil {
		return Result{}, fmt.Errorf("reading %s: %w", path, err)
	}
	return im.Card(ctx, raw)
}

// FS imports every file of fsys matching pattern (see fs.Glob), in lexical
// order. A file that fails does not stop the others; the returned error
// joins every failure.
func (im *Importer) FS(ctx context.Context, fsys fs.FS, pattern string) ([]Result, error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", pattern, err)
	}
	var (
		results []Result
		errs    []error
	)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		res, err := im.fsFile(ctx, fsys, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		results = append(results, res)
	}
	return results, errors.Join(errs...)
}

func (im *Importer) fsFile(ctx context.Context, fsys fs.FS, name string) (Result, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	raw, err := im.read(f)
	if err != nil {
		return Result{}, err
	}
	return im.Card(ctx, raw)
}

// read stops one byte past the limit, so a huge (or endless, such as
// /dev/zero) file costs no more memory than the largest acceptable card.
func (im *Importer) read(r io.Reader) ([]byte, error) {
	limit := int64(im.limits().MaxBytes)
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return raw, nil
}

func (im *Importer) limits() card.Limits {
	lim := im.Limits
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = card.DefaultLimits().MaxBytes
	}
	return lim
}

// Card parses raw and upserts it under the card URL CardURL derives.
func (im *Importer) Card(ctx context.Context, raw []byte) (Result, error) {
	c, err := card.Parse(raw, im.limits())
	if err != nil {
		return Result{}, fmt.Errorf("parsing card: %w", err)
	}
	now := time.Now
	if im.Now != nil {
		now = im.Now
	}
	cardURL := CardURL(c, raw)
	res, err := im.Store.Upsert(ctx, importActor, catalog.UpsertInput{
		CardURL: cardURL,
		Card:    c,
		Source:  catalog.SourceImport,
		// An imported card may be an offline copy of an agent this
		// registry cannot reach: it is not crawled until registered by URL.
		Paused:     true,
		ReceivedAt: now().UTC(),
	})
	if err != nil {
		return Result{}, fmt.Errorf("storing card %s: %w", cardURL, err)
	}
	out := Result{CardURL: cardURL, AgentID: res.Agent.ID, Name: c.Name, Outcome: Unchanged}
	switch {
	case res.Created:
		out.Outcome = Created
	case res.NewVersion:
		out.Outcome = Updated
	}
	return out, nil
}

// CardURL names the agent an imported card belongs to. It is the
// well-known card URL at the origin of the first HTTP(S) interface, so that
// registering or crawling the agent later updates the same catalog entry.
// A card with no such interface is named by the SHA-256 of its bytes, so
// importing the same file again is idempotent.
func CardURL(c *card.Card, raw []byte) string {
	for _, iface := range c.Interfaces {
		if origin, ok := httpOrigin(iface.URL); ok {
			return origin + WellKnownPath
		}
	}
	sum := sha256.Sum256(raw)
	return "urn:a2a-registry:import:" + hex.EncodeToString(sum[:])
}

// httpOrigin returns the RFC 6454 origin of an http or https URL in its
// canonical form: lower-case scheme and host, default port dropped,
// userinfo, path and query removed.
func httpOrigin(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", false
	}
	port := u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host, true
}
