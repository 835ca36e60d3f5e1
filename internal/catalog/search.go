package catalog

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aregistry/registry/internal/card"
)

// Query text limits: more tokens than this add cost, not precision.
const (
	maxTokens   = 16
	maxTokenLen = 64
)

// hit is one matching agent and its ordering key.
type hit struct {
	pk      uint32
	score   float64
	sortKey string
}

// Search runs a query: full-text match (ranked) combined with filters,
// facet counts over every match, and a keyset-paginated page of results.
// With text, results are ordered by relevance; without, by name.
func (s *Store) Search(ctx context.Context, q Query) (Page, error) {
	q, err := normalizeQuery(q)
	if err != nil {
		return Page{}, err
	}
	tokens := queryTokens(q.Text)
	fp := fingerprint(tokens, q.Filters)
	cur, err := decodeCursor(q.Cursor, fp)
	if err != nil {
		return Page{}, err
	}
	idx, err := s.searchIndex(ctx)
	if err != nil {
		return Page{}, err
	}
	idx.mu.RLock()
	var text []hit
	if len(tokens) > 0 {
		text = idx.textMatch(tokens)
	}
	matched := idx.matchFilters(q.Filters, card.MatchMode)
	if _, ok := q.Filters[FieldHealth]; !ok {
		// Agents whose card is gone (410) are listed only when asked for.
		if gone := idx.postings(FieldHealth, HealthRemoved); len(gone) > 0 {
			matched = subtract(matched, gone)
		}
	}
	var (
		docs []uint32
		hits []hit
	)
	if len(tokens) > 0 {
		hits = make([]hit, 0, min(len(text), len(matched)))
		j := 0
		for _, h := range text {
			for j < len(matched) && matched[j] < h.pk {
				j++
			}
			if j < len(matched) && matched[j] == h.pk {
				hits = append(hits, h)
			}
		}
		docs = make([]uint32, len(hits))
		for i, h := range hits {
			docs[i] = h.pk
		}
	} else {
		docs = matched
	}
	page := Page{Total: len(docs)}
	page.Facets = idx.facets(docs, len(tokens) == 0 && len(docs) == len(idx.all), q.FacetLimit)
	var top []hit
	if len(tokens) > 0 {
		top = topHits(hits, q.Limit+1, cur, byScore)
	} else {
		top = topKDocs(idx, docs, q.Limit+1, cur)
	}
	idx.mu.RUnlock()

	if len(top) > q.Limit {
		last := top[q.Limit-1]
		page.NextCursor = encodeCursor(cursor{Fingerprint: fp, Score: last.score, SortKey: last.sortKey, PK: last.pk})
		top = top[:q.Limit]
	}
	items, err := s.loadSummaries(ctx, top)
	if err != nil {
		return Page{}, err
	}
	page.Items = items
	return page, nil
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
			filters[field] = append(filters[field], v)
		}
	}
	q.Filters = filters
	return q, nil
}

func (s *Store) loadSummaries(ctx context.Context, top []hit) ([]Summary, error) {
	items := make([]Summary, 0, len(top))
	if len(top) == 0 {
		return items, nil
	}
	pks := make([]int64, len(top))
	for i, h := range top {
		pks[i] = int64(h.pk)
	}
	rows, err := s.db.WithContext(ctx).Raw(
		"SELECT pk, id, card_url, summary, signature_status, health, updated_at FROM agents WHERE pk IN ?", pks).Rows()
	if err != nil {
		return nil, fmt.Errorf("loading search results: %w", err)
	}
	defer rows.Close()
	byPK := make(map[int64]Summary, len(top))
	for rows.Next() {
		var (
			pk      int64
			raw     string
			id, url string
			sig, hl string
			updated time.Time
		)
		if err := rows.Scan(&pk, &id, &url, &raw, &sig, &hl, &updated); err != nil {
			return nil, fmt.Errorf("loading search results: %w", err)
		}
		sum, err := decodeSummary(raw)
		if err != nil {
			return nil, fmt.Errorf("summary of agent %s: %w", id, err)
		}
		sum.ID, sum.CardURL, sum.SignatureStatus, sum.Health, sum.UpdatedAt = id, url, sig, hl, updated.UTC()
		byPK[pk] = sum
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("loading search results: %w", err)
	}
	for _, h := range top {
		// An agent removed since the index was read is skipped.
		if sum, ok := byPK[int64(h.pk)]; ok {
			sum.Score = h.score
			items = append(items, sum)
		}
	}
	return items, nil
}

// cursor marks the last item of a page. Fingerprint ties it to the query
// that produced it, so a cursor reused with other filters is refused rather
// than silently skipping results.
type cursor struct {
	Fingerprint string  `json:"f"`
	Score       float64 `json:"s,omitempty"`
	SortKey     string  `json:"k,omitempty"`
	PK          uint32  `json:"p"`
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

func fingerprint(tokens []string, filters map[string][]string) string {
	h := sha256.New()
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
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Orderings. A negative result means a comes first.
func byScore(a, b hit) int {
	if a.score != b.score {
		return cmp.Compare(b.score, a.score)
	}
	return cmp.Compare(a.pk, b.pk)
}

func byName(a, b hit) int {
	if c := strings.Compare(a.sortKey, b.sortKey); c != 0 {
		return c
	}
	return cmp.Compare(a.pk, b.pk)
}

// topHits keeps the k first hits after the cursor in the given order, in
// O(n log k) time.
func topHits(hits []hit, k int, cur *cursor, order func(a, b hit) int) []hit {
	h := &topK[hit]{k: k, order: order}
	var after hit
	if cur != nil {
		after = hit{pk: cur.PK, score: cur.Score, sortKey: cur.SortKey}
	}
	for _, x := range hits {
		if cur != nil && order(x, after) <= 0 {
			continue
		}
		h.offer(x)
	}
	return h.sorted()
}

func topKDocs(idx *memIndex, docs []uint32, k int, cur *cursor) []hit {
	h := &topK[hit]{k: k, order: byName}
	var after hit
	if cur != nil {
		after = hit{pk: cur.PK, sortKey: cur.SortKey}
	}
	for _, pk := range docs {
		x := hit{pk: pk, sortKey: idx.docs[pk].sortKey}
		if cur != nil && byName(x, after) <= 0 {
			continue
		}
		h.offer(x)
	}
	return h.sorted()
}
