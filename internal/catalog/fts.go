package catalog

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// Column weights of agent_fts (name, tags, skills, description, provider):
// a word in the name or a tag says more about an agent than one in a long
// description.
var ftsWeights = [5]float64{5, 3, 3, 1, 2}

// BM25 parameters (Robertson & Zaragoza, "The Probabilistic Relevance
// Framework: BM25 and Beyond", 2009): the usual defaults.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// textMatchSQLite matches with FTS4 and ranks with BM25 computed from
// matchinfo('pcnalx'): FTS4 has no built-in ranking function, and FTS5 (which
// has bm25()) needs a build tag that a plain `go run` does not set.
func (s *Store) textMatchSQLite(ctx context.Context, tokens []string) ([]hit, error) {
	// Every token is a prefix query ("invoice*" also finds "invoices");
	// tokens contain only letters and digits, so nothing else is FTS syntax.
	terms := make([]string, len(tokens))
	for i, t := range tokens {
		terms[i] = t + "*"
	}
	rows, err := s.sqlDB.QueryContext(ctx,
		"SELECT docid, matchinfo(agent_fts, 'pcnalx') FROM agent_fts WHERE agent_fts MATCH ?",
		strings.Join(terms, " "))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []hit
	for rows.Next() {
		var (
			pk   int64
			info []byte
		)
		if err := rows.Scan(&pk, &info); err != nil {
			return nil, err
		}
		score, err := bm25(info)
		if err != nil {
			return nil, err
		}
		hits = append(hits, hit{pk: uint32(pk), score: score})
	}
	return hits, rows.Err()
}

// bm25 scores one row from its matchinfo 'pcnalx' blob: p (phrases),
// c (columns), n (rows), a[c] (average tokens per column), l[c] (tokens in
// this row's columns), then x[3*p*c] (hits in this row, hits in all rows,
// rows with a hit) — see https://www.sqlite.org/fts3.html#matchinfo.
func bm25(info []byte) (float64, error) {
	if len(info)%4 != 0 || len(info) < 12 {
		return 0, fmt.Errorf("matchinfo blob of %d bytes", len(info))
	}
	v := make([]uint32, len(info)/4)
	for i := range v {
		v[i] = binary.NativeEndian.Uint32(info[i*4:])
	}
	p, c, n := int(v[0]), int(v[1]), float64(v[2])
	if len(v) != 3+2*c+3*p*c {
		return 0, fmt.Errorf("matchinfo blob has %d values for p=%d c=%d", len(v), p, c)
	}
	avg := v[3 : 3+c]
	lens := v[3+c : 3+2*c]
	x := v[3+2*c:]
	score := 0.0
	for i := 0; i < p; i++ {
		for j := 0; j < c && j < len(ftsWeights); j++ {
			base := 3 * (i*c + j)
			tf, df := float64(x[base]), float64(x[base+2])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			norm := 1.0
			if avg[j] > 0 {
				norm = 1 - bm25B + bm25B*float64(lens[j])/float64(avg[j])
			}
			score += ftsWeights[j] * idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
		}
	}
	return score, nil
}

// textMatchPostgres matches with the GIN-indexed tsvector and ranks with
// ts_rank_cd (cover density), normalised by 32 to rank/(rank+1).
func (s *Store) textMatchPostgres(ctx context.Context, tokens []string) ([]hit, error) {
	terms := make([]string, len(tokens))
	for i, t := range tokens {
		terms[i] = t + ":*"
	}
	rows, err := s.sqlDB.QueryContext(ctx,
		`SELECT pk, ts_rank_cd(search_tsv, q, 32) FROM agents, to_tsquery('english', $1) q WHERE search_tsv @@ q`,
		strings.Join(terms, " & "))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []hit
	for rows.Next() {
		var (
			pk    int64
			score float64
		)
		if err := rows.Scan(&pk, &score); err != nil {
			return nil, err
		}
		hits = append(hits, hit{pk: uint32(pk), score: score})
	}
	return hits, rows.Err()
}
