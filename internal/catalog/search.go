package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/search"
)

// Search runs a query: full-text match (ranked) combined with filters,
// facet counts over every match, and a keyset-paginated page of results.
// With text, results are ordered by relevance; without, by name. Until the
// search index is built it returns ErrIndexNotReady (and starts the build
// if nothing had): at once, or within the first second of the build
// (indexGrace) if the build has not ended by then.
func (s *Store) Search(ctx context.Context, q Query) (Page, error) {
	q, err := normalizeQuery(q)
	if err != nil {
		return Page{}, err
	}
	tokens := search.Tokens(q.Text)
	fp := fingerprint(tokens, q.Filters, q.AnyOf, q.Scope)
	cur, err := decodeCursor(q.Cursor, fp)
	if err != nil {
		return Page{}, err
	}
	var hidden hiddenCollections
	if !q.Scope.All {
		if hidden, err = s.hiddenCollections(ctx, q.Scope); err != nil {
			return Page{}, err
		}
	}
	sq := indexQuery(q, hidden)
	if cur != nil {
		sq.After = &search.Hit{ID: cur.PK, Score: cur.Score, SortKey: cur.SortKey, Demoted: cur.Demoted, Exact: cur.Exact, Partial: cur.Partial, Fused: cur.Fused}
	}
	var sem *Semantic
	var embedTook time.Duration
	if s.embedder != nil && len(tokens) > 0 {
		sem = &Semantic{}
		embedStart := time.Now()
		vec, err := s.embedder.EmbedQuery(ctx, q.Text)
		embedTook = time.Since(embedStart)
		if err != nil {
			sem.Degraded = err.Error()
		}
		sq.Vector, sq.VectorSpace, sq.Fusion = vec, s.embedder.Space(), s.fusion
	}
	start := time.Now()
	res, err := s.idx().Search(sq)
	if errors.Is(err, search.ErrNotReady) {
		if !s.awaitGrace(ctx, s.startBuild()) {
			return Page{}, fmt.Errorf("searching: %w", ErrIndexNotReady)
		}
		res, err = s.idx().Search(sq)
	}
	if err != nil {
		return Page{}, fmt.Errorf("searching: %w", err)
	}
	if sem != nil {
		sem.Hybrid = res.Hybrid
		if !res.Hybrid && sem.Degraded == "" {
			sem.Degraded = "no agent has been embedded with this model yet"
		}
	}
	page := Page{Total: res.Total, Facets: make(map[string][]FacetCount, len(res.Facets)), Semantic: sem}
	page.Timing.Embed = embedTook
	page.Timing.IndexWait = res.Waited
	page.Timing.Index = time.Since(start) - res.Waited
	for field, counts := range res.Facets {
		if field == FieldListing && !q.Scope.All && !q.Scope.Review {
			continue
		}
		fc := make([]FacetCount, 0, len(counts))
		for _, c := range counts {
			if field == FieldCollection && hidden.has(c.Value) {
				continue
			}
			fc = append(fc, FacetCount{Value: c.Value, Count: c.Count})
		}
		page.Facets[field] = fc
	}
	top := res.Hits
	if len(top) > q.Limit {
		last := top[q.Limit-1]
		page.NextCursor = encodeCursor(cursor{Fingerprint: fp, Score: last.Score, SortKey: last.SortKey, PK: last.ID,
			Demoted: last.Demoted, Exact: last.Exact, Partial: last.Partial, Fused: last.Fused})
		top = top[:q.Limit]
	}
	start = time.Now()
	explain := ""
	if q.Explain && len(tokens) > 0 {
		// At most a page (MaxLimit hits) is explained: the work stays
		// bounded whatever the catalog's size.
		explain = q.Text
	}
	items, err := s.loadSummaries(ctx, top, explain)
	if err != nil {
		return Page{}, err
	}
	page.Items = items
	page.Timing.Load = time.Since(start)
	return page, nil
}

// Explain says why agent id matches text, as a search hit's explanation
// (Query.Explain) would: nil when the agent does not match it, or the text
// has no words to match. An agent the scope does not see is ErrNotFound;
// a text Search refuses, ErrInvalidQuery. It serves explanations asked for
// one hit at a time (the console's "why this result").
func (s *Store) Explain(ctx context.Context, sc Scope, id, text string) (*Explanation, error) {
	if _, err := normalizeQuery(Query{Text: text}); err != nil {
		return nil, err
	}
	pk, err := s.pkOf(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if len(search.Tokens(text)) == 0 {
		return nil, nil
	}
	e := s.explanation(text, uint32(pk))
	if s.embedder != nil {
		// The query's vector is usually in the embedder's cache: the
		// search that showed this hit asked for it moments ago. Without
		// it the explanation keeps to the words. An agent found by its
		// vector alone is explained by its similarity only.
		if vec, err := s.embedder.EmbedQuery(ctx, text); err == nil {
			if sim, ok := s.idx().Similarity(uint32(pk), s.embedder.Space(), vec); ok {
				if e == nil {
					e = &Explanation{}
				}
				e.Similarity, e.HasSimilarity = float64(sim), true
			}
		}
	}
	return e, nil
}

// explanation is why agent id matched text, or nil when the index no
// longer holds it as a match (changed since the search read it).
func (s *Store) explanation(text string, id uint32) *Explanation {
	e, ok := s.idx().Explain(text, id)
	if !ok {
		return nil
	}
	ex := &Explanation{Partial: e.Partial, Near: e.Near, Words: make([]WordMatch, len(e.Words))}
	for j, w := range e.Words {
		ex.Words[j] = WordMatch{Word: w.Word, Matched: w.Matched, Fields: w.Columns}
		if w.Matched != "" {
			ex.Words[j].How = w.Kind.String()
		}
	}
	return ex
}

// indexQuery is the index's query for a normalized catalog query: its
// filters, the caller's scope, removed agents left out unless asked for,
// deprecated ones ranked last. One more hit than the page is asked for,
// to know whether a next page exists.
func indexQuery(q Query, hidden hiddenCollections) search.Query {
	sq := search.Query{Text: q.Text, Limit: q.Limit + 1, FacetLimit: q.FacetLimit,
		Demote: []search.Facet{{Field: FieldListing, Value: ListingDeprecated}}}
	if q.NoFacets {
		sq.FacetLimit = 0 // the index counts none
	}
	for _, field := range FilterFields {
		for _, v := range q.Filters[field] {
			if field == FieldCollection && hidden.has(v) {
				// As if it did not exist: a filter on a hidden collection
				// must not tell which visible agents are in it.
				v = "\x00hidden"
			}
			sq.Filters = append(sq.Filters, filterOf(field, v))
		}
	}
	for _, g := range q.AnyOf {
		sq.Filters = append(sq.Filters, anyFilterOf(g, hidden))
	}
	sq.Filters = append(sq.Filters, q.Scope.searchFilters()...)
	if _, ok := q.Filters[FieldHealth]; !ok && !anyOn(q.AnyOf, FieldHealth) {
		// Agents whose card is gone (410) are listed only when asked for.
		sq.Exclude = []search.Facet{{Field: FieldHealth, Value: HealthRemoved}}
	}
	return sq
}

// filterOf turns one filter value into the index's terms: media types
// match as patterns ("image/*"), skill matches an id or a name, other
// fields their value.
func filterOf(field, value string) search.Filter {
	switch field {
	case FieldInputMode, FieldOutputMode:
		return search.Filter{Field: field, Match: func(mode string) bool { return card.MatchMode(value, mode) }}
	case FieldSkill:
		return search.Filter{Terms: []search.Facet{{Field: FieldSkill, Value: value}, {Field: fieldSkillName, Value: value}}}
	case FieldLabel:
		// "key" matches any value of the label, "key:value" that value.
		key, v, _ := ParseLabelFilter(value)
		if v == "" {
			return search.Filter{Terms: []search.Facet{{Field: fieldLabelKey, Value: key}}}
		}
		return search.Filter{Terms: []search.Facet{{Field: FieldLabel, Value: key + ":" + v}}}
	default:
		return search.Filter{Terms: []search.Facet{{Field: field, Value: value}}}
	}
}

// anyFilterOf is one index filter matching any value of g: the union of
// the terms of each value's filter, or of its match when the field is
// matched as a pattern (media types).
func anyFilterOf(g FilterGroup, hidden hiddenCollections) search.Filter {
	var (
		out     search.Filter
		matches []func(string) bool
	)
	for _, v := range g.Values {
		if g.Field == FieldCollection && hidden.has(v) {
			v = "\x00hidden"
		}
		f := filterOf(g.Field, v)
		out.Terms = append(out.Terms, f.Terms...)
		if f.Match != nil {
			out.Field = f.Field
			matches = append(matches, f.Match)
		}
	}
	if len(matches) > 0 {
		out.Match = func(value string) bool {
			return slices.ContainsFunc(matches, func(m func(string) bool) bool { return m(value) })
		}
	}
	if len(out.Terms) == 0 && out.Match == nil {
		// No value: nothing can match.
		out.Terms = []search.Facet{{Field: g.Field, Value: "\x00none"}}
	}
	return out
}

func anyOn(groups []FilterGroup, field string) bool {
	return slices.ContainsFunc(groups, func(g FilterGroup) bool { return g.Field == field })
}

func normalizeQuery(q Query) (Query, error) {
	if utf8.RuneCountInString(q.Text) > MaxQueryTextLen {
		return q, fmt.Errorf("%w: q is longer than %d characters", ErrInvalidQuery, MaxQueryTextLen)
	}
	if !utf8.ValidString(q.Text) {
		return q, fmt.Errorf("%w: q is not valid UTF-8", ErrInvalidQuery)
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit < 0:
		return q, fmt.Errorf("%w: limit must be positive", ErrInvalidQuery)
	case q.Limit > MaxLimit:
		q.Limit = MaxLimit
	}
	if q.FacetLimit <= 0 {
		q.FacetLimit = DefaultFacetLimit
	}
	filters := make(map[string][]string, len(q.Filters))
	for field, values := range q.Filters {
		if !slices.Contains(FilterFields, field) {
			return q, fmt.Errorf("%w: unknown filter %q", ErrInvalidQuery, field)
		}
		for _, v := range values {
			v = strings.TrimSpace(v)
			if v == "" {
				continue
			}
			if len(v) > 256 || !utf8.ValidString(v) {
				return q, fmt.Errorf("%w: %s value is too long or not UTF-8", ErrInvalidQuery, field)
			}
			if field == FieldLabel {
				if _, _, ok := ParseLabelFilter(v); !ok {
					return q, fmt.Errorf("%w: label must be key or key:value with a valid label key", ErrInvalidQuery)
				}
			}
			filters[field] = append(filters[field], v)
		}
	}
	q.Filters = filters
	groups := make([]FilterGroup, 0, len(q.AnyOf))
	for _, g := range q.AnyOf {
		if !slices.Contains(FilterFields, g.Field) && g.Field != FilterCardURL && g.Field != FilterURNPublisher && g.Field != FilterKeyChangedDay {
			return q, fmt.Errorf("%w: unknown filter %q", ErrInvalidQuery, g.Field)
		}
		vals := make([]string, 0, len(g.Values))
		for _, v := range g.Values {
			v = strings.TrimSpace(v)
			if len(v) > 2048 || !utf8.ValidString(v) {
				return q, fmt.Errorf("%w: %s value is too long or not UTF-8", ErrInvalidQuery, g.Field)
			}
			if g.Field == FieldLabel {
				if _, _, ok := ParseLabelFilter(v); !ok {
					return q, fmt.Errorf("%w: label must be key or key:value with a valid label key", ErrInvalidQuery)
				}
			}
			if v != "" {
				vals = append(vals, v)
			}
		}
		groups = append(groups, FilterGroup{Field: g.Field, Values: vals})
	}
	q.AnyOf = groups
	return q, nil
}

// summaryCacheSize bounds the summaries searches keep: enough for the
// result pages of a few hundred popular queries (a summary is 1–3 KB).
const summaryCacheSize = 4096

// cachedSummary is an agent's search result summary as of sequence seq.
type cachedSummary struct {
	seq int64
	sum Summary
}

// loadSummaries reads the summaries of a page of hits. A summary read
// before at the sequence the hit matched is taken from memory: every
// write to an agent moves its sequence on, so it cannot be stale for that
// hit. The rest are read in one query, which may return a newer version
// than the index matched (another replica's write not synced yet); that
// one is shown, as before, and kept under its own sequence. Items share
// their slices with the cache: callers only read them.
//
// With explain, the query's text, each item says why it matched it.
func (s *Store) loadSummaries(ctx context.Context, top []search.Hit, explain string) ([]Summary, error) {
	items := make([]Summary, 0, len(top))
	if len(top) == 0 {
		return items, nil
	}
	byPK := make(map[int64]Summary, len(top))
	var missing []int64
	for _, h := range top {
		pk := int64(h.ID)
		if c, ok := s.summaries.Get(pk); ok && h.Seq != 0 && c.seq == h.Seq {
			byPK[pk] = c.sum
		} else {
			missing = append(missing, pk)
		}
	}
	if len(missing) > 0 {
		if err := s.readSummaries(ctx, missing, byPK); err != nil {
			return nil, err
		}
	}
	for _, h := range top {
		// An agent removed since the index was read is skipped.
		if sum, ok := byPK[int64(h.ID)]; ok {
			sum.Score = h.Score
			if explain != "" {
				sum.Explanation = s.explanation(explain, h.ID)
				if h.Fused {
					if sum.Explanation == nil {
						// Found by its vector alone: no word of the query met it.
						sum.Explanation = &Explanation{}
					}
					sum.Explanation.Fused = true
					sum.Explanation.LexicalRank, sum.Explanation.VectorRank = h.LexicalRank, h.VectorRank
					sum.Explanation.Similarity = float64(h.Similarity)
					sum.Explanation.HasSimilarity = h.VectorRank > 0
				}
			}
			items = append(items, sum)
		}
	}
	return items, nil
}

// readSummaries reads the summaries of agents pks into byPK and the cache.
func (s *Store) readSummaries(ctx context.Context, pks []int64, byPK map[int64]Summary) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rows, err := s.db.WithContext(s.stmtCtx(ctx)).Raw(
		"SELECT pk, seq, id, card_url, summary, signature_status, signature_trust, publisher_verified, health, works, listing, provenance, updated_at FROM agents WHERE pk IN ?", pks).Rows()
	if err != nil {
		return fmt.Errorf("loading search results: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			pk, seq int64
			raw     string
			id, url string
			sig, hl string
			trust   string
			pubVer  string
			listing string
			works   string
			prov    string
			updated time.Time
		)
		if err := rows.Scan(&pk, &seq, &id, &url, &raw, &sig, &trust, &pubVer, &hl, &works, &listing, &prov, &updated); err != nil {
			return fmt.Errorf("loading search results: %w", err)
		}
		sum, err := decodeSummary(raw)
		if err != nil {
			return fmt.Errorf("summary of agent %s: %w", id, err)
		}
		sum.ID, sum.CardURL, sum.SignatureStatus, sum.Health, sum.UpdatedAt = id, url, sig, hl, updated.UTC()
		sum.Listing, sum.SignatureTrust, sum.Works, sum.Provenance = listing, trust, works, provenanceTokens(prov)
		sum.Publisher, _ = card.PublisherOfCard(url)
		sum.PublisherVerified = pubVer == publisherVerifiedTrue
		byPK[pk] = sum
		s.summaries.Add(pk, cachedSummary{seq: seq, sum: sum})
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("loading search results: %w", err)
	}
	return nil
}

// cursor marks the last item of a page. Fingerprint ties it to the query
// that produced it, so a cursor reused with other filters is refused rather
// than silently skipping results.
type cursor struct {
	Fingerprint string  `json:"f"`
	Score       float64 `json:"s,omitempty"`
	SortKey     string  `json:"k,omitempty"`
	PK          uint32  `json:"p"`
	Demoted     bool    `json:"d,omitempty"`
	Partial     bool    `json:"m,omitempty"`
	// Exact marks a hit whose name is the query (search.Hit.Exact).
	Exact bool `json:"x,omitempty"`
	// Fused marks a hit of a hybrid ranking (search.Hit.Fused). A cursor
	// from a hybrid page continued when the query cannot be embedded
	// goes on from the first lexical hit.
	Fused bool `json:"v,omitempty"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c) // a struct of strings and numbers always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s, fp string) (*cursor, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > 2048 {
		return nil, fmt.Errorf("%w: too long", ErrInvalidCursor)
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: not base64url", ErrInvalidCursor)
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%w: malformed", ErrInvalidCursor)
	}
	if c.Fingerprint != fp {
		return nil, fmt.Errorf("%w: it belongs to another query", ErrInvalidCursor)
	}
	return &c, nil
}

func fingerprint(tokens []string, filters map[string][]string, groups []FilterGroup, sc Scope) string {
	h := sha256.New()
	// A cursor is tied to the scope it was made in: paging on with another
	// would skip or repeat results.
	fmt.Fprintf(h, "%t\x00%t\x00", sc.All, sc.Review)
	for _, g := range sc.visibilityTokens() {
		fmt.Fprintf(h, "%s\x00", g)
	}
	for _, t := range tokens {
		h.Write([]byte(t))
		h.Write([]byte{0})
	}
	for _, f := range FilterFields {
		vals := slices.Clone(filters[f])
		slices.Sort(vals)
		for _, v := range vals {
			fmt.Fprintf(h, "\x01%s=%s", f, strings.ToLower(v))
		}
	}
	// Groups are ANDed, so their order does not change the result, but a
	// cursor need not survive a reordering: they are hashed as given.
	for _, g := range groups {
		vals := slices.Clone(g.Values)
		slices.Sort(vals)
		fmt.Fprintf(h, "\x02%s", g.Field)
		for _, v := range vals {
			fmt.Fprintf(h, "\x03%s", strings.ToLower(v))
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
