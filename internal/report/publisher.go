package report

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// ErrNoPublisher is returned for a publisher that cannot be one (not a
// domain name or an IP address).
var ErrNoPublisher = errors.New("not a publisher: give a domain name or an IP address")

// PublisherAgentsLimit is how many of a publisher's agents its report
// lists; Search lists them all.
const PublisherAgentsLimit = catalog.MaxLimit

// Publisher is one publisher as the caller sees it: its agents, how many
// are signed and by whom vouched for, their findings and health. Counts
// and agents are the caller's search in their scope, so an agent hidden
// from them is neither counted nor listed.
type Publisher struct {
	// Domain is the publisher (card.NormalizePublisher of what was
	// asked).
	Domain string
	// Agents counts the publisher's agents the caller sees; Verified
	// those whose publisher proved it holds their signing key.
	Agents   int
	Verified Count
	// Signature, Findings and Health count the agents per signature
	// status, finding code and health.
	Signature, Findings, Health []Count
	// Items are the first PublisherAgentsLimit agents, by name.
	Items []catalog.Summary
	// Search is the search filter listing every one of the agents.
	Search string
}

// PublisherReport reports on publisher domain in sc. A publisher none of
// whose agents the caller sees is catalog.ErrNotFound, exactly as one
// with no agents at all: the answer never tells that hidden agents exist.
func PublisherReport(ctx context.Context, s Searcher, sc catalog.Scope, domain string) (Publisher, error) {
	d := card.NormalizePublisher(domain)
	if d == "" {
		return Publisher{}, fmt.Errorf("%q: %w", domain, ErrNoPublisher)
	}
	filter := map[string][]string{catalog.FieldPublisher: {d}}
	page, err := s.Search(ctx, catalog.Query{Filters: filter, Limit: PublisherAgentsLimit, FacetLimit: facetLimit, Scope: sc})
	if errors.Is(err, catalog.ErrInvalidQuery) {
		// A host the search refuses as a filter (longer than any DNS
		// name) is no publisher either.
		return Publisher{}, fmt.Errorf("%q: %w", domain, ErrNoPublisher)
	}
	if err != nil {
		return Publisher{}, fmt.Errorf("reporting on publisher %s: %w", d, err)
	}
	if page.Total == 0 {
		return Publisher{Domain: d}, fmt.Errorf("publisher %s: %w", d, catalog.ErrNotFound)
	}
	within := func(field string, fc []catalog.FacetCount) []Count {
		out := counts(field, fc)
		for i := range out {
			out[i].Query = url.Values{catalog.FieldPublisher: {d}, field: {out[i].Value}}.Encode()
		}
		return out
	}
	p := Publisher{
		Domain:    d,
		Agents:    page.Total,
		Signature: within(catalog.FieldSignature, page.Facets[catalog.FieldSignature]),
		Findings:  within(catalog.FieldAudit, page.Facets[catalog.FieldAudit]),
		Health:    within(catalog.FieldHealth, page.Facets[catalog.FieldHealth]),
		Verified: Count{Value: "true", Count: countOf(page.Facets[catalog.FieldPublisherVerified], "true"),
			Query: url.Values{catalog.FieldPublisher: {d}, catalog.FieldPublisherVerified: {"true"}}.Encode()},
		Items:  page.Items,
		Search: queryOf(catalog.FieldPublisher, d),
	}
	for i, c := range p.Findings {
		p.Findings[i].Kind = findingKind(c.Value)
	}
	return p, nil
}
