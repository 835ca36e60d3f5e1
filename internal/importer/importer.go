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
	// Prechecker, when set, checks each card before it is stored, for the
	// admission policy to judge its signatures (catalog.Precheck).
	Prechecker Prechecker
}

// Prechecker checks a card before the write that would store it
// (*verify.Verifier implements it).
type Prechecker interface {
	Precheck(ctx context.Context, c *card.Card, cardURL string) *catalog.Precheck
}

// Result is the outcome of importing one card.
type Result struct {
	CardURL string
	AgentID string
	Name    string
	Outcome Outcome
}

// FileAt reads the card at path (at most Limits.MaxBytes) and imports it.
// servedAt is the card URL the operator says it is served at ("" when
// unknown: the card is filed under its content hash, see CardURL): the card is filed under that agent, so that
// registering or crawling the URL later updates the same catalog entry.
func (im *Importer) FileAt(ctx context.Context, path, servedAt string) (Result, error) {
	cardURL, err := CardURL(nil, servedAt)
	if err != nil {
		return Result{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	raw, err := im.read(f)
	if err != nil {
		return Result{}, fmt.Errorf("reading %s: %w", path, err)
	}
	if cardURL == "" {
		return im.Card(ctx, raw)
	}
	return im.CardAt(ctx, raw, cardURL)
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

// Card parses raw and upserts it under its content hash (see CardURL).
func (im *Importer) Card(ctx context.Context, raw []byte) (Result, error) {
	return im.CardAt(ctx, raw, "")
}

// CardAt parses raw and upserts it under the canonical form of servedAt,
// the card URL the operator says it is served at, or under its content
// hash when servedAt is "". Errors: card.ErrInvalid (a *card.ParseError,
// not_a_card among its codes) when raw is not a card, ErrInvalidURL for a
// bad servedAt, else the store's.
func (im *Importer) CardAt(ctx context.Context, raw []byte, servedAt string) (Result, error) {
	c, err := card.Parse(raw, im.limits())
	if err != nil {
		return Result{}, fmt.Errorf("parsing card: %w", err)
	}
	cardURL, err := CardURL(raw, servedAt)
	if err != nil {
		return Result{}, err
	}
	now := time.Now
	if im.Now != nil {
		now = im.Now
	}
	var pc *catalog.Precheck
	if im.Prechecker != nil {
		pc = im.Prechecker.Precheck(ctx, c, cardURL)
	}
	res, err := im.Store.Upsert(ctx, importActor, catalog.UpsertInput{
		CardURL:  cardURL,
		Card:     c,
		Source:   catalog.SourceImport,
		Precheck: pc,
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

// ErrInvalidURL is returned for a card URL given with an import that is not
// an absolute http(s) URL; it wraps card.ErrInvalidURL.
var ErrInvalidURL = errors.New("invalid --url")

// CardURL names the agent an imported card belongs to: the canonical form
// (card.CanonicalCardURL) of servedAt, the URL the card is served at, when
// one is given; else a URN of the SHA-256 of raw, so importing the same
// file again is idempotent. No field of any card version names the card's
// own URL, and an interface URL is where the agent answers, not where its
// card lives: a hub serves many cards for one origin, so deriving a card
// URL from an interface merged distinct agents. With raw nil and servedAt
// "", CardURL returns "".
func CardURL(raw []byte, servedAt string) (string, error) {
	if strings.TrimSpace(servedAt) != "" {
		u, err := card.CanonicalCardURL(servedAt)
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrInvalidURL, err)
		}
		return u, nil
	}
	if raw == nil {
		return "", nil
	}
	sum := sha256.Sum256(raw)
	return catalog.ImportedCardURNPrefix + hex.EncodeToString(sum[:]), nil
}
