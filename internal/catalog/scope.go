package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aregistry/registry/internal/search"
)

// Listing states of an agent (issue 13, lifecycle).
const (
	ListingPending    = "pending"
	ListingApproved   = "approved"
	ListingDeprecated = "deprecated"
	ListingRejected   = "rejected"
)

// ListingStates lists the listing states in their lifecycle order.
var ListingStates = []string{ListingPending, ListingApproved, ListingDeprecated, ListingRejected}

// browsable are the listing states every caller may see.
var browsable = []string{ListingApproved, ListingDeprecated}

// Visibility tokens of an agent, derived from its collections: public when
// it is in no collection or in one without groups; else one group token
// per group of each of its collections.
const (
	visibilityPublic = "public"
	groupPrefix      = "group:"
	// fieldVisibility is the index's filter-only field of those tokens.
	fieldVisibility = "visibility"
)

// Scope is what a caller may see of the catalog. Every read the API and the
// console make takes one, and the catalog applies it below them: a hidden
// agent is ErrNotFound, leaves search results, totals and facet counts, and
// its entries leave the change feed. The catalog knows nothing of roles;
// internal/auth derives a Scope from the caller (auth.ScopeOf).
//
// The rule: All sees everything (admins, and internal work). Otherwise a
// caller sees an agent when its listing state is approved or deprecated, or
// any state when Review is set (editors), and when the agent is in no
// collection, in a collection without groups, or in a collection with one
// of Groups.
type Scope struct {
	All    bool
	Review bool
	// Groups are the caller's group claim values; they match a
	// collection's groups ignoring case.
	Groups []string
}

// ScopeAll sees every agent: for admins and the registry's own work.
var ScopeAll = Scope{All: true}

// groupTokens are the visibility tokens the scope may see.
func (sc Scope) visibilityTokens() []string {
	out := make([]string, 0, 1+len(sc.Groups))
	out = append(out, visibilityPublic)
	for _, g := range sc.Groups {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, groupToken(g))
		}
	}
	return out
}

func groupToken(g string) string { return groupPrefix + strings.ToLower(strings.TrimSpace(g)) }

// seesListing reports whether the scope sees agents in listing state st.
func (sc Scope) seesListing(st string) bool {
	return sc.All || sc.Review || slices.Contains(browsable, st)
}

// seesGroups reports whether the scope sees what is restricted to groups
// (none: visible to everyone).
func (sc Scope) seesGroups(groups []string) bool {
	if sc.All || len(groups) == 0 {
		return true
	}
	for _, g := range groups {
		for _, h := range sc.Groups {
			if strings.EqualFold(strings.TrimSpace(g), strings.TrimSpace(h)) {
				return true
			}
		}
	}
	return false
}

// sees reports whether the scope sees an agent with the stored listing and
// visibility columns, removed or not: a removed agent is seen by the scope
// that sees everything (admins read its history), by no other.
func (sc Scope) sees(listing, visibility string, removed bool) (bool, error) {
	if sc.All {
		return true, nil
	}
	if removed || !sc.seesListing(listing) {
		return false, nil
	}
	tokens, err := decodeStrings(visibility)
	if err != nil {
		return false, fmt.Errorf("visibility: %w", err)
	}
	mine := sc.visibilityTokens()
	for _, t := range tokens {
		if slices.Contains(mine, strings.ToLower(t)) {
			return true, nil
		}
	}
	return false, nil
}

// searchFilters are the index filters that keep a search inside the scope.
func (sc Scope) searchFilters() []search.Filter {
	if sc.All {
		return nil
	}
	var fs []search.Filter
	if !sc.Review {
		f := search.Filter{}
		for _, st := range browsable {
			f.Terms = append(f.Terms, search.Facet{Field: FieldListing, Value: st})
		}
		fs = append(fs, f)
	}
	f := search.Filter{}
	for _, t := range sc.visibilityTokens() {
		f.Terms = append(f.Terms, search.Facet{Field: fieldVisibility, Value: t})
	}
	return append(fs, f)
}

// visibleSQL is the condition (on agents aliased a) and its arguments that
// keep a SQL read inside the scope (removed agents out, see sees), "" when
// the scope sees everything. The
// visibility column is a JSON array of tokens, each matched as its quoted
// JSON string: tokens are lower case and hold no quote (groupToken keeps
// what it is given, so a group with a quote or backslash is escaped here
// as JSON escapes it).
func (sc Scope) visibleSQL() (string, []any) {
	if sc.All {
		return "", nil
	}
	cond, args := sc.placementSQL()
	return "a.removed_at IS NULL AND " + cond, args
}

// placementSQL is visibleSQL without the removal: the listing states and
// collections the scope sees. It is never "" for a scope that is not All.
func (sc Scope) placementSQL() (string, []any) {
	var (
		conds []string
		args  []any
	)
	if !sc.Review {
		conds = append(conds, "a.listing IN (?, ?)")
		args = append(args, ListingApproved, ListingDeprecated)
	}
	var vis []string
	for _, t := range sc.visibilityTokens() {
		q, _ := json.Marshal(t) // a string always marshals
		vis = append(vis, "a.visibility LIKE ? ESCAPE '\\'")
		args = append(args, "%"+escapeLike(string(q))+"%")
	}
	conds = append(conds, "("+strings.Join(vis, " OR ")+")")
	return strings.Join(conds, " AND "), args
}

// escapeLike escapes LIKE's wildcards with a backslash.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// decodeStrings reads a JSON array of strings; "" is none.
func decodeStrings(raw string) ([]string, error) {
	if raw == "" {
		return nil, nil
	}
	return unmarshalStrings(raw)
}

// HidesCardURL tells whether one of cardURLs is a catalogued agent, not
// removed, that the scope does not see: a registration of it by that
// caller must not reveal, refetch or claim it. (A removed agent is
// restored by a registration, as Upsert documents.)
func (s *Store) HidesCardURL(ctx context.Context, sc Scope, cardURLs []string) (bool, error) {
	if sc.All || len(cardURLs) == 0 {
		return false, nil
	}
	ph := strings.TrimSuffix(strings.Repeat("?, ", len(cardURLs)), ", ")
	args := make([]any, 0, len(cardURLs)+4)
	for _, u := range cardURLs {
		args = append(args, u)
	}
	cond, cargs := sc.placementSQL()
	var n int64
	err := s.db.WithContext(ctx).Raw("SELECT COUNT(*) FROM agents a WHERE a.card_url IN ("+ph+") AND a.removed_at IS NULL AND NOT ("+cond+")",
		append(args, cargs...)...).Scan(&n).Error
	if err != nil {
		return false, fmt.Errorf("reading agents: %w", err)
	}
	return n > 0, nil
}
