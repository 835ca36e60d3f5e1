package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"

	"gorm.io/gorm"

	"github.com/a2aregistry/registry/internal/search"
)

// Search's semantic layer keeps its vectors here, in agent_embeddings
// (migration 00022): one per agent, model and dimension, of the text
// search.EmbedText makes of the agent's indexed text, with that text's
// digest. The embeddings worker (internal/embeddings) walks the agents in
// seq order (EmbeddingWork), asks its API for the texts that have no
// vector yet and stores them (StoreEmbeddings); both put the vectors in
// this process's index. The index build loads the stored vectors of the
// Embedder's space whose digest matches the text it reads (loadVectors),
// so a restart has them at its first search and the worker reads the
// text of none of them again: each vector in the index records the
// version it is of, and the worker skips the agents whose current
// version it is. Only vectors of the model and dimension asked for
// are ever read, so two models' vectors are never compared. The column
// model holds what the embedder calls the vectors' space: the model's
// name, with the document prefix sent before each text when there is one
// (embeddings.Service.Space), since one model with two prefixes makes two
// kinds of vectors.

// QueryEmbedder turns a search's text into a vector. Its errors are
// shown to the searcher as the reason search fell back to words alone,
// so they say what happened without URLs or secrets.
type QueryEmbedder interface {
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	// Space names the vectors: the model they are of, and whatever else
	// makes its vectors differ (a document prefix). Only vectors of one
	// space are compared.
	Space() string
	// Dimension is the length of the vectors.
	Dimension() int
}

// Semantic says how a search with text was ranked, when the semantic
// layer is configured.
type Semantic struct {
	// Hybrid is set when the vector ranking was fused with the words'.
	Hybrid bool
	// Degraded says why the search was ranked by its words alone.
	Degraded string
}

// EmbedJob is an agent whose current text the semantic layer needs a
// vector of.
type EmbedJob struct {
	PK int64
	// Seq is the version Text is of.
	Seq        int64
	Text       string
	TextSHA256 string
	// Stored is the vector stored for this very text, model and
	// dimension (by another replica, or before a restart); nil when it
	// must be embedded.
	Stored []float32
}

// Embedding is the vector of an agent's text.
type Embedding struct {
	PK int64
	// Seq is the version of the agent whose text was embedded.
	Seq        int64
	TextSHA256 string
	Vector     []float32
}

// EmbedDigest is the digest stored with a vector: of the text embedded.
func EmbedDigest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// EmbeddingWork returns the listed agents changed after seq afterSeq,
// the limit first in seq order, each with the text to embed and any
// vector stored of it for model and dim; and the highest seq read, from
// which the next call goes on (afterSeq when there was nothing). Agents
// whose current version's vector the index holds already (loaded by the
// build, or embedded since) are passed over without reading their text.
func (s *Store) EmbeddingWork(ctx context.Context, model string, dim int, afterSeq int64, limit int) ([]EmbedJob, int64, error) {
	rows, err := s.queryRows(s.stmtCtx(ctx),
		"SELECT pk, seq FROM agents WHERE removed_at IS NULL AND seq > ? ORDER BY seq LIMIT ?", afterSeq, limit)
	if err != nil {
		return nil, afterSeq, fmt.Errorf("agents to embed: %w", err)
	}
	var pks []int64
	last := afterSeq
	idx := s.idx()
	for rows.Next() {
		var pk, seq int64
		if err := rows.Scan(&pk, &seq); err != nil {
			rows.Close()
			return nil, afterSeq, fmt.Errorf("agents to embed: %w", err)
		}
		last = max(last, seq)
		if v, ok := idx.VectorSeq(uint32(pk), model, dim); ok && v == seq {
			continue
		}
		pks = append(pks, pk)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, afterSeq, fmt.Errorf("agents to embed: %w", err)
	}
	if len(pks) == 0 {
		return nil, last, nil
	}
	where, args := inList("pk", pks)
	var jobs []EmbedJob
	if err := s.loadDocs(ctx, where, args, func(d search.Doc) {
		text := search.EmbedText(d.Text)
		jobs = append(jobs, EmbedJob{PK: int64(d.ID), Seq: d.Seq, Text: text, TextSHA256: EmbedDigest(text)})
	}); err != nil {
		return nil, afterSeq, fmt.Errorf("texts to embed: %w", err)
	}
	stored, err := s.storedEmbeddings(ctx, model, dim, pks)
	if err != nil {
		return nil, afterSeq, err
	}
	for i := range jobs {
		if e, ok := stored[jobs[i].PK]; ok && e.TextSHA256 == jobs[i].TextSHA256 {
			jobs[i].Stored = e.Vector
		}
	}
	return jobs, last, nil
}

func (s *Store) storedEmbeddings(ctx context.Context, model string, dim int, pks []int64) (map[int64]Embedding, error) {
	where, args := inList("agent_pk", pks)
	rows, err := s.queryRows(s.stmtCtx(ctx),
		"SELECT agent_pk, text_sha256, vector FROM agent_embeddings WHERE model = ? AND dimension = ? AND "+where,
		append([]any{model, dim}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("stored embeddings: %w", err)
	}
	defer rows.Close()
	out := make(map[int64]Embedding, len(pks))
	for rows.Next() {
		var (
			e   Embedding
			raw []byte
		)
		if err := rows.Scan(&e.PK, &e.TextSHA256, &raw); err != nil {
			return nil, fmt.Errorf("stored embeddings: %w", err)
		}
		if e.Vector, err = decodeVector(raw, dim); err != nil {
			// A damaged row is embedded again rather than trusted.
			continue
		}
		out[e.PK] = e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("stored embeddings: %w", err)
	}
	return out, nil
}

// errVectorLength is a stored vector of another length than its row says.
var errVectorLength = errors.New("vector length does not match its dimension")

// encodeVector is the stored form: little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte, dim int) ([]float32, error) {
	if len(b) != 4*dim {
		return nil, errVectorLength
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// StoreEmbeddings stores vectors of model and dim (replacing an agent's
// earlier one of the same model and dimension) and puts them in this
// process's index. Vectors of another length than dim are refused whole.
func (s *Store) StoreEmbeddings(ctx context.Context, model string, dim int, es []Embedding) error {
	for _, e := range es {
		if len(e.Vector) != dim {
			return fmt.Errorf("storing embeddings of agent %d: %w", e.PK, errVectorLength)
		}
	}
	now := time.Now().UTC()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, e := range es {
			if err := tx.Exec(`INSERT INTO agent_embeddings (agent_pk, model, dimension, text_sha256, vector, embedded_at)
				VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (agent_pk, model, dimension) DO UPDATE SET
				text_sha256 = excluded.text_sha256, vector = excluded.vector, embedded_at = excluded.embedded_at`,
				e.PK, model, dim, e.TextSHA256, encodeVector(e.Vector), now).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing embeddings: %w", err)
	}
	s.UseEmbeddings(model, dim, es)
	return nil
}

// UseEmbeddings puts vectors already stored in this process's index.
// Those of another model or dimension than the index holds replace them
// all (search.Index.SetVectors).
func (s *Store) UseEmbeddings(model string, dim int, es []Embedding) {
	vs := make([]search.Vector, 0, len(es))
	for _, e := range es {
		vs = append(vs, search.Vector{ID: uint32(e.PK), Seq: e.Seq, Values: e.Vector})
	}
	s.idx().SetVectors(model, dim, vs)
}

// EmbeddingCoverage is how much of the index the semantic layer covers.
type EmbeddingCoverage struct {
	Model            string
	Dimension        int
	Embedded, Agents int
	// Bytes is the memory of the vectors in this process.
	Bytes int
}

// EmbeddingCoverage reports the vectors this process's index holds.
func (s *Store) EmbeddingCoverage() EmbeddingCoverage {
	st := s.idx().VectorState()
	return EmbeddingCoverage{Model: st.Space, Dimension: st.Dimension, Embedded: st.Embedded, Agents: st.Docs, Bytes: st.Bytes}
}
