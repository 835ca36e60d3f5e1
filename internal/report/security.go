// Package report is the application layer of the fleet reports every door
// serves (the JSON API's /reports/security, the console's /security): the
// numbers, computed in the caller's scope, and the search that lists the
// agents behind each. It has no HTTP; a door turns Count.Query into its own
// link.
package report

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/query"
	"github.com/a2aregistry/registry/internal/verify"
)

// Searcher is the catalog's search; *catalog.Store implements it.
type Searcher interface {
	Search(ctx context.Context, q catalog.Query) (catalog.Page, error)
}

// Finding kinds, from the code's origin.
const (
	KindSecurityAudit = "security_audit"
	KindContent       = "content"
)

// KeyChangeDays is the span, today included, of Security.RecentKeyChanges.
const KeyChangeDays = 30

// facetLimit is well above the number of distinct signature statuses,
// security scheme types and audit codes the registry can produce (a few
// dozen), so no value of a field is cut off the report.
const facetLimit = 500

// Count is one number of a report and the search filters (an encoded
// query string, the API's and the console's search parameters) that list
// the agents it counts. Query is empty for the total.
type Count struct {
	Value string
	// Kind is set on findings only (KindSecurityAudit, KindContent).
	Kind  string
	Count int
	Query string
}

// Security is the fleet's security posture as the caller sees it.
type Security struct {
	// Agents counts every agent the caller sees (removed ones aside, as
	// in search).
	Agents int
	// Signature counts agents per signature status of the current card.
	Signature []Count
	// SecurityScheme counts agents per security scheme type; an agent
	// declaring several is counted under each.
	SecurityScheme []Count
	// Anonymous counts agents asking for no security at all.
	Anonymous Count
	// Findings counts agents per finding code of the current card's
	// security audit and content scan.
	Findings []Count
	// Severity counts agents per severity of those findings, error,
	// warning then info, each present (0 when no agent has one); an agent
	// with findings of several severities is counted under each.
	Severity []Count
	// KeyChanges counts agents whose current card is signed by a key
	// other than the previous version's (verify.FindingSigningKeyChanged).
	KeyChanges Count
	// RecentKeyChanges counts, among those, the agents whose current card
	// came within the last KeyChangeDays days (Value is the first day,
	// UTC); its Query is key_changed_since=that day.
	RecentKeyChanges Count
	// PlainHTTP counts agents whose current card declares at least one
	// interface over plain http (verify.FindingPlainHTTPInterface, which
	// the security audit reports once per card). The URL the card was
	// fetched from is not part of this rule: only the interfaces callers
	// are sent to. Agents verified before the finding existed carry it
	// from their next verification on.
	PlainHTTP Count
	// PublisherVerified counts agents whose publisher proved it holds
	// the key that signs the current card (verify.PublisherReport).
	PublisherVerified Count
	// Policy counts agents per admission-policy rule failing (or
	// errored) on the current version.
	Policy []Count
}

// SecurityReport computes the report from one faceted search in sc: the
// index counts every field at once over the caller's agents, so the cost
// does not grow with a scan of the catalog and hidden agents are never
// counted, exactly as search would not list them.
//
// The recent key changes are a second search, of a span of days: the
// days are values of a field of their own, which accumulate over the
// years, so a facet listing could leave some of the last days out.
func SecurityReport(ctx context.Context, s Searcher, sc catalog.Scope, now time.Time) (Security, error) {
	page, err := s.Search(ctx, catalog.Query{Limit: 1, FacetLimit: facetLimit, Scope: sc})
	if err != nil {
		return Security{}, fmt.Errorf("counting the fleet: %w", err)
	}
	since := now.UTC().AddDate(0, 0, -(KeyChangeDays - 1))
	recent, err := s.Search(ctx, catalog.Query{Limit: 1, FacetLimit: 1, Scope: sc,
		AnyOf: []catalog.FilterGroup{catalog.KeyChangedSince(since, now)}})
	if err != nil {
		return Security{}, fmt.Errorf("counting recent key changes: %w", err)
	}
	sinceDay := since.Format(catalog.KeyChangedDayLayout)
	r := Security{
		Agents:         page.Total,
		Signature:      counts(catalog.FieldSignature, page.Facets[catalog.FieldSignature]),
		SecurityScheme: counts(catalog.FieldSecurityScheme, page.Facets[catalog.FieldSecurityScheme]),
		Findings:       counts(catalog.FieldAudit, page.Facets[catalog.FieldAudit]),
		Severity:       make([]Count, 0, len(catalog.Severities)),
		Policy:         counts(catalog.FieldPolicy, page.Facets[catalog.FieldPolicy]),
		Anonymous:      Count{Value: "none", Query: queryOf(catalog.FieldSecurityScheme, "none")},
		KeyChanges:     Count{Value: verify.FindingSigningKeyChanged, Query: queryOf(catalog.FieldAudit, verify.FindingSigningKeyChanged)},
		RecentKeyChanges: Count{Value: sinceDay, Count: recent.Total,
			Query: url.Values{query.ParamKeyChangedSince: {sinceDay}}.Encode()},
		PlainHTTP: Count{Value: verify.FindingPlainHTTPInterface, Query: queryOf(catalog.FieldAudit, verify.FindingPlainHTTPInterface)},
		PublisherVerified: Count{Value: "true", Query: queryOf(catalog.FieldPublisherVerified, "true"),
			Count: countOf(page.Facets[catalog.FieldPublisherVerified], "true")},
	}
	for _, v := range catalog.Severities {
		r.Severity = append(r.Severity, Count{Value: v, Query: queryOf(catalog.FieldSeverity, v),
			Count: countOf(page.Facets[catalog.FieldSeverity], v)})
	}
	for _, c := range r.SecurityScheme {
		if strings.EqualFold(c.Value, "none") {
			r.Anonymous.Count = c.Count
		}
	}
	for i, c := range r.Findings {
		r.Findings[i].Kind = findingKind(c.Value)
		switch c.Value {
		case verify.FindingSigningKeyChanged:
			r.KeyChanges.Count = c.Count
		case verify.FindingPlainHTTPInterface:
			r.PlainHTTP.Count = c.Count
		}
	}
	return r, nil
}

// findingKind tells where a finding code comes from: every content-scan
// code is named content_* (contentscan.Code*); the rest come from the
// security audit.
func findingKind(code string) string {
	if strings.HasPrefix(code, "content_") {
		return KindContent
	}
	return KindSecurityAudit
}

// counts turns one field's facet counts into report counts, highest first
// and then by value, so the report reads the same from one call to the next.
func counts(field string, fc []catalog.FacetCount) []Count {
	out := make([]Count, 0, len(fc))
	for _, c := range fc {
		out = append(out, Count{Value: c.Value, Count: c.Count, Query: queryOf(field, c.Value)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Value < out[j].Value
	})
	return out
}

func countOf(fc []catalog.FacetCount, value string) int {
	for _, c := range fc {
		if c.Value == value {
			return c.Count
		}
	}
	return 0
}

func queryOf(field, value string) string {
	return url.Values{field: {value}}.Encode()
}
