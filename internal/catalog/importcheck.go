package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/a2aregistry/registry/internal/card"
)

// ErrInvalidImport marks an exported entry that a live write could never
// have produced: an export always writes what the catalog holds, in its
// canonical forms, so anything else means the file was altered or made by
// hand, and an import refuses it before it writes anything.
var ErrInvalidImport = errors.New("catalog: invalid import entry")

var (
	importHealths = []string{HealthUnknown, HealthUp, HealthDown, HealthStale, HealthRemoved}
	importSources = []string{SourceURL, SourceImport, SourceCrawl}
)

// CheckID reports whether id is an agent or key id as the catalog makes
// them: a UUID in its canonical, lower-case hyphenated spelling
// (uuid.Parse also takes braces, "urn:uuid:" and upper case).
func CheckID(id string) error {
	u, err := uuid.Parse(id)
	if err != nil || u.String() != id {
		return fmt.Errorf("%w: id %q is not a UUID in canonical form", ErrInvalidImport, id)
	}
	return nil
}

// ImportedCardURNPrefix starts the card URL of an agent imported from a
// card file without the URL it is served at: the prefix, then the
// SHA-256 of the file in lower-case hex (importer.CardURL).
const ImportedCardURNPrefix = "urn:a2a-registry:import:"

// CheckCardURL reports whether u is a card URL in the canonical form the
// catalog stores: card.CanonicalCardURL's, or an imported card's URN.
func CheckCardURL(u string) error {
	if digest, ok := strings.CutPrefix(u, ImportedCardURNPrefix); ok {
		if len(digest) != 64 || strings.Trim(digest, "0123456789abcdef") != "" {
			return fmt.Errorf("%w: card URL %q: want %s and 64 lower-case hex digits", ErrInvalidImport, u, ImportedCardURNPrefix)
		}
		return nil
	}
	c, err := card.CanonicalCardURL(u)
	switch {
	case err != nil:
		return fmt.Errorf("%w: card URL %q: %w", ErrInvalidImport, u, err)
	case c != u:
		return fmt.Errorf("%w: card URL %q is not in canonical form (%q)", ErrInvalidImport, u, c)
	}
	return nil
}

// Check validates an exported agent as a live write would: its id, card
// URL, health, versions (numbered from 1, a known source, each card
// parsing under lim), listing and annotations. ImportAgent writes only
// what passes; an import checks every entry first so that a bad line
// leaves the catalog untouched.
func (a ExportedAgent) Check(lim card.Limits) error {
	if err := CheckID(a.ID); err != nil {
		return err
	}
	if err := CheckCardURL(a.CardURL); err != nil {
		return err
	}
	if !slices.Contains(importHealths, a.Health) {
		return fmt.Errorf("%w: agent %s: unknown health %q", ErrInvalidImport, a.ID, a.Health)
	}
	if len(a.Versions) == 0 {
		return fmt.Errorf("%w: agent %s has no versions", ErrInvalidImport, a.ID)
	}
	for i, v := range a.Versions {
		switch {
		case v.Number != i+1:
			return fmt.Errorf("%w: agent %s: version %d where %d was expected", ErrInvalidImport, a.ID, v.Number, i+1)
		case !slices.Contains(importSources, v.Source):
			return fmt.Errorf("%w: agent %s version %d: unknown source %q", ErrInvalidImport, a.ID, v.Number, v.Source)
		}
		if _, err := card.Parse(v.Raw, lim); err != nil {
			return fmt.Errorf("%w: agent %s version %d: %w", ErrInvalidImport, a.ID, v.Number, err)
		}
	}
	if a.Crawl.ConsecutiveFailures < 0 {
		return fmt.Errorf("%w: agent %s: negative consecutive failures", ErrInvalidImport, a.ID)
	}
	if a.Removed != nil && a.Removed.By == "" {
		return fmt.Errorf("%w: agent %s: a removal names no actor", ErrInvalidImport, a.ID)
	}
	if _, err := importedListing(a); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidImport, err)
	}
	if a.Annotations != nil {
		if _, err := NormalizeAnnotations(*a.Annotations); err != nil {
			return fmt.Errorf("%w: agent %s: %w", ErrInvalidImport, a.ID, err)
		}
	}
	for _, p := range a.Provenance {
		if err := p.Check(); err != nil {
			return fmt.Errorf("agent %s: %w", a.ID, err)
		}
	}
	return nil
}

// Check validates orphan annotations (kept for a removed agent's return)
// as a live write would.
func (e ExportedAnnotations) Check() error {
	if err := CheckCardURL(e.CardURL); err != nil {
		return err
	}
	if _, err := NormalizeAnnotations(e.Annotations); err != nil {
		return fmt.Errorf("%w: annotations of %s: %w", ErrInvalidImport, e.CardURL, err)
	}
	return nil
}

// Check validates an exported collection as a live write would: its
// name, description and groups, and members named by canonical agent ids,
// each once.
func (e ExportedCollection) Check() error {
	c := Collection{Name: e.Name, Description: e.Description, Groups: e.Groups}
	if err := c.validate(); err != nil {
		return fmt.Errorf("%w: collection %q: %w", ErrInvalidImport, e.Name, err)
	}
	seen := make(map[string]bool, len(e.Members))
	for _, m := range e.Members {
		if err := CheckID(m.AgentID); err != nil {
			return fmt.Errorf("collection %q: member: %w", e.Name, err)
		}
		if seen[m.AgentID] {
			return fmt.Errorf("%w: collection %q names agent %s twice", ErrInvalidImport, e.Name, m.AgentID)
		}
		seen[m.AgentID] = true
	}
	return nil
}
