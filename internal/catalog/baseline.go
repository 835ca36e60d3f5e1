package catalog

import (
	"context"
	"fmt"
	"strings"
)

// LikeScan is the naive search the benchmarks measure Search against: a
// plain `LIKE '%term%'` scan over the same text (agent name, description,
// provider, skill names and descriptions), returning how many agents match.
// It is not used to serve requests.
func (s *Store) LikeScan(ctx context.Context, term string) (int, error) {
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(term))
	pattern := "%" + esc + "%"
	var n int
	err := s.db.WithContext(ctx).Raw(`SELECT COUNT(*) FROM agents a WHERE
		lower(a.name) LIKE ? ESCAPE '\' OR lower(a.description) LIKE ? ESCAPE '\' OR lower(a.provider) LIKE ? ESCAPE '\'
		OR EXISTS (SELECT 1 FROM skills s WHERE s.agent_pk = a.pk AND
			(lower(s.name) LIKE ? ESCAPE '\' OR lower(s.description) LIKE ? ESCAPE '\'))`,
		pattern, pattern, pattern, pattern, pattern).Row().Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("like scan: %w", err)
	}
	return n, nil
}
