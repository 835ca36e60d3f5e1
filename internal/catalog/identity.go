package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/card"
)

// Filter-only fields of an agent's identity, for doors that name agents by
// their card rather than by the registry's id (ARD's identifier and
// publisher filters; ARD's publisher is the identifier's host, where the
// registry's FieldPublisher is the registrable domain). They are neither facets nor in FilterFields: the
// JSON API and the console do not offer them. Values are matched ignoring
// case, like every term of the index.
const (
	// FilterCardURL values are canonical card URLs.
	FilterCardURL = "card_url"
	// FilterURNPublisher values are card.PublisherOf the card URL: the
	// publisher segment of its ARD identifier.
	FilterURNPublisher = "urn_publisher"
)

// identityFacets are the terms of the agent at cardURL its identity
// gives: the filter-only card URL and ARD publisher, and the publisher
// facet.
func identityFacets(cardURL string) []facetRecord {
	out := []facetRecord{{Field: FilterCardURL, Value: cardURL}}
	if p, err := card.PublisherOf(cardURL); err == nil {
		out = append(out, facetRecord{Field: FilterURNPublisher, Value: p})
	}
	if p, err := card.PublisherOfCard(cardURL); err == nil {
		out = append(out, facetRecord{Field: FieldPublisher, Value: p})
	}
	return out
}

// AgentIDOf is the id of the agent ref names — its registry id, its ARD
// identifier (card.URNOf its card URL, IsAgentRef) or its card URL in any
// spelling card.CanonicalCardURL reads the same — as the scope sees it:
// ErrNotFound for an agent it does not see, a removed or unknown one, or
// an identifier the registry does not make; an error wrapping
// card.ErrMalformedURN or card.ErrInvalidURL for a ref that looks like
// an identifier or a URL and is not one.
func (s *Store) AgentIDOf(ctx context.Context, sc Scope, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	column, value := "id", ref
	switch {
	case card.IsURN(ref):
		u, err := card.CardURLOfURN(ref)
		if errors.Is(err, card.ErrNotAgentURN) {
			return "", fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		if err != nil {
			return "", err
		}
		column, value = "card_url", u
	case isURLRef(ref):
		u, err := card.CanonicalCardURL(ref)
		if err != nil {
			return "", err
		}
		column, value = "card_url", u
	}
	var (
		id, listing, visibility string
		removed                 bool
	)
	err := s.db.WithContext(ctx).Raw("SELECT id, listing, visibility, removed_at IS NOT NULL FROM agents WHERE "+column+" = ?", value).
		Row().Scan(&id, &listing, &visibility, &removed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("agent %s: %w", ref, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", ref, err)
	}
	ok, err := sc.sees(listing, visibility, removed)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", ref, err)
	}
	if !ok {
		return "", fmt.Errorf("agent %s: %w", ref, ErrNotFound)
	}
	return id, nil
}

// IsAgentRef reports whether ref names an agent by its ARD identifier or
// its card URL (AgentIDOf) rather than by the registry's id.
func IsAgentRef(ref string) bool {
	ref = strings.TrimSpace(ref)
	return card.IsURN(ref) || isURLRef(ref)
}

func isURLRef(ref string) bool {
	return len(ref) > 8 && (strings.EqualFold(ref[:7], "http://") || strings.EqualFold(ref[:8], "https://"))
}

// Published selects the agents a publisher manifest lists: the approved
// ones, or the members of one collection (approved or deprecated).
type Published struct {
	// Collection, when set, lists that collection's members instead of
	// every approved agent.
	Collection string
}

// PublishedAgent is one agent of a publisher manifest.
type PublishedAgent struct {
	Summary
	// Examples are up to MaxPublishedExamples example prompts of the
	// card's first skills, in skill order.
	Examples []string
}

// MaxPublishedExamples bounds PublishedAgent.Examples (ARD's
// representativeQueries are 2 to 5).
const MaxPublishedExamples = 5

// PublishedVersion changes whenever the manifest of sel for any scope may
// have changed: every write to an agent takes a new seq from one
// sequence, so the highest seq and the number of agents move with every
// change (a removal included). It is one indexed aggregate, for ETags.
func (s *Store) PublishedVersion(ctx context.Context) (string, error) {
	var (
		maxSeq sql.NullInt64
		n      int64
	)
	if err := s.db.WithContext(ctx).Raw("SELECT MAX(seq), COUNT(*) FROM agents").Row().Scan(&maxSeq, &n); err != nil {
		return "", fmt.Errorf("reading catalog version: %w", err)
	}
	return fmt.Sprintf("%d.%d", maxSeq.Int64, n), nil
}

// EachPublished calls fn with each agent of sel the scope sees, in pk
// order, reading rows one by one so that memory stays flat whatever the
// catalog size. It stops at fn's first error and returns it.
func (s *Store) EachPublished(ctx context.Context, sc Scope, sel Published, fn func(PublishedAgent) error) error {
	// The first three skills' examples: scalar subqueries read the same on
	// SQLite and PostgreSQL, where an aggregate would not.
	q := `SELECT a.id, a.card_url, a.summary, a.signature_status, a.signature_trust, a.health, a.listing,
		a.collections, a.visibility, a.updated_at,
		(SELECT examples FROM skills k WHERE k.agent_pk = a.pk ORDER BY k.ordinal LIMIT 1 OFFSET 0),
		(SELECT examples FROM skills k WHERE k.agent_pk = a.pk ORDER BY k.ordinal LIMIT 1 OFFSET 1),
		(SELECT examples FROM skills k WHERE k.agent_pk = a.pk ORDER BY k.ordinal LIMIT 1 OFFSET 2)
		FROM agents a WHERE a.removed_at IS NULL AND a.health <> ? AND a.listing IN (?, ?) ORDER BY a.pk`
	rows, err := s.queryRows(s.stmtCtx(ctx), q, HealthRemoved, ListingApproved, ListingDeprecated)
	if err != nil {
		return fmt.Errorf("listing published agents: %w", err)
	}
	defer rows.Close()
	for i := 0; rows.Next(); i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var (
			a                              PublishedAgent
			raw, trust, listing, cols, vis string
			updated                        time.Time
			ex1, ex2, ex3                  sql.NullString
		)
		if err := rows.Scan(&a.ID, &a.CardURL, &raw, &a.SignatureStatus, &trust, &a.Health, &listing, &cols, &vis, &updated,
			&ex1, &ex2, &ex3); err != nil {
			return fmt.Errorf("listing published agents: %w", err)
		}
		if sel.Collection == "" && listing != ListingApproved {
			continue
		}
		if ok, err := sc.sees(listing, vis, false); err != nil || !ok {
			if err != nil {
				return fmt.Errorf("agent %s: %w", a.ID, err)
			}
			continue
		}
		if sel.Collection != "" {
			names, err := decodeStrings(cols)
			if err != nil {
				return fmt.Errorf("collections of agent %s: %w", a.ID, err)
			}
			if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, sel.Collection) }) {
				continue
			}
		}
		sum, err := decodeSummary(raw)
		if err != nil {
			return fmt.Errorf("summary of agent %s: %w", a.ID, err)
		}
		id, url, sig, health := a.ID, a.CardURL, a.SignatureStatus, a.Health
		a.Summary = sum
		a.ID, a.CardURL, a.SignatureStatus, a.SignatureTrust, a.Health = id, url, sig, trust, health
		a.Listing, a.UpdatedAt = listing, updated.UTC()
		for _, ex := range []sql.NullString{ex1, ex2, ex3} {
			if !ex.Valid || len(a.Examples) >= MaxPublishedExamples {
				continue
			}
			list, err := decodeStrings(ex.String)
			if err != nil {
				return fmt.Errorf("skill examples of agent %s: %w", a.ID, err)
			}
			for _, e := range list {
				if len(a.Examples) < MaxPublishedExamples && e != "" {
					a.Examples = append(a.Examples, e)
				}
			}
		}
		if err := fn(a); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing published agents: %w", err)
	}
	return nil
}
