package catalog_test

import (
	"context"
	"errors"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/search"
)

const embedDim = 64

// hashEmbed is a deterministic stand-in for a model: a hashed bag of
// words. Texts sharing words are near; it knows no meaning.
func hashEmbed(text string) []float32 {
	v := make([]float32, embedDim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
		h := fnv.New64a()
		h.Write([]byte(w))
		v[h.Sum64()%embedDim]++
	}
	search.Normalize(v)
	return v
}

// fakeEmbedder embeds a query as the text it is told to, or fails.
type fakeEmbedder struct {
	as  map[string]string
	err error
	// space is the vectors' space; "m1" when empty.
	space string
}

func (f *fakeEmbedder) Space() string {
	if f.space == "" {
		return "m1"
	}
	return f.space
}

func (f *fakeEmbedder) Dimension() int { return embedDim }

func (f *fakeEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	if f.err != nil {
		return nil, f.err
	}
	if t, ok := f.as[text]; ok {
		text = t
	}
	return hashEmbed(text), nil
}

func openEmbedding(t *testing.T, dsn string, e catalog.QueryEmbedder) *catalog.Store {
	t.Helper()
	ctx := context.Background()
	s, err := catalog.Open(ctx, catalog.Config{DSN: dsn, Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.WarmIndex(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

const railCard = `{
  "name": "Rail Seat Reserver",
  "description": "Reserves seats on intercity trains.",
  "supportedInterfaces": [{"url": "https://rail.example.org/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
  "version": "1.0.0",
  "capabilities": {},
  "defaultInputModes": ["text/plain"],
  "defaultOutputModes": ["text/plain"],
  "skills": [{"id": "reserve", "name": "Reserve", "description": "Reserve seats.", "tags": ["rail"]}]
}`

// embedAll runs what the embeddings worker does once: every agent's
// text embedded and stored. It returns how many needed embedding.
func embedAll(t *testing.T, s *catalog.Store, model string, dim int, after int64) (int, int64) {
	t.Helper()
	ctx := context.Background()
	jobs, last, err := s.EmbeddingWork(ctx, model, dim, after, 100)
	if err != nil {
		t.Fatal(err)
	}
	var es, stored []catalog.Embedding
	for _, j := range jobs {
		if j.Stored != nil {
			stored = append(stored, catalog.Embedding{PK: j.PK, Seq: j.Seq, TextSHA256: j.TextSHA256, Vector: j.Stored})
			continue
		}
		v := hashEmbed(j.Text)
		if dim != embedDim {
			v = make([]float32, dim)
			v[0] = 1
		}
		es = append(es, catalog.Embedding{PK: j.PK, Seq: j.Seq, TextSHA256: j.TextSHA256, Vector: v})
	}
	if err := s.StoreEmbeddings(ctx, model, dim, es); err != nil {
		t.Fatal(err)
	}
	s.UseEmbeddings(model, dim, stored)
	return len(es), last
}

func TestEmbeddingsStoredAndSearched(t *testing.T) {
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", catalogtest.SQLiteDSN}, {"postgres", catalogtest.PostgresDSN}} {
		t.Run(db.name, func(t *testing.T) {
			ctx := context.Background()
			fake := &fakeEmbedder{as: map[string]string{"xyzzy plugh": "Rail Seat Reserver reserves seats on intercity trains"}}
			s := openEmbedding(t, db.dsn(t), fake)
			seed(t, s)
			s.SetListingPolicy(catalog.ListingPolicy{RequireApproval: true})
			rail := upsert(t, s, "https://rail.example.org/.well-known/agent-card.json", railCard)

			// Before any vector, a search says it answered by words.
			p, err := s.Search(ctx, catalog.Query{Text: "xyzzy plugh"})
			if err != nil {
				t.Fatal(err)
			}
			if p.Semantic == nil || p.Semantic.Hybrid || p.Semantic.Degraded == "" {
				t.Fatalf("Semantic = %+v before any vector, want degraded", p.Semantic)
			}

			n, last := embedAll(t, s, "m1", embedDim, 0)
			if n != 4 {
				t.Fatalf("embedded %d agents, want 4", n)
			}
			if cov := s.EmbeddingCoverage(); cov.Dimension != embedDim || cov.Embedded != 4 || cov.Agents != 4 {
				t.Fatalf("coverage = %+v", cov)
			}
			// Stored vectors are found again for the same model and text;
			// another model or dimension embeds everything again.
			for _, tc := range []struct {
				model string
				dim   int
				want  int
			}{{"m1", embedDim, 0}, {"m2", embedDim, 4}, {"m1", 32, 4}} {
				if n, _ := embedAll(t, s, tc.model, tc.dim, 0); n != tc.want {
					t.Errorf("%s/%d: embedded %d, want %d", tc.model, tc.dim, n, tc.want)
				}
			}
			// The index now holds m1's 32-dimension vectors only: the
			// query's 64 are never compared with them.
			p, err = s.Search(ctx, catalog.Query{Text: "xyzzy plugh", Scope: catalog.Scope{All: true}})
			if err != nil {
				t.Fatal(err)
			}
			if p.Semantic.Hybrid {
				t.Fatal("a 64-dimension query was ranked against 32-dimension vectors")
			}
			embedAll(t, s, "m1", embedDim, 0)

			// The rail agent is pending: found by its vector for an
			// editor, never for a viewer.
			for _, tc := range []struct {
				scope catalog.Scope
				want  bool
			}{{catalog.Scope{}, false}, {catalog.Scope{Review: true}, true}} {
				p, err := s.Search(ctx, catalog.Query{Text: "xyzzy plugh", Scope: tc.scope, Explain: true})
				if err != nil {
					t.Fatal(err)
				}
				if !p.Semantic.Hybrid || p.Semantic.Degraded != "" {
					t.Fatalf("Semantic = %+v, want hybrid", p.Semantic)
				}
				found := false
				for _, it := range p.Items {
					if it.ID == rail.Agent.ID {
						found = true
						if e := it.Explanation; e == nil || !e.Fused || e.VectorRank != 1 || e.LexicalRank != 0 {
							t.Errorf("explanation %+v, want vector rank 1 and no lexical rank", e)
						}
					}
				}
				if found != tc.want {
					t.Errorf("scope %+v: pending agent found = %v, want %v", tc.scope, found, tc.want)
				}
			}

			// Explained on demand (the console's "why"), the similarity is
			// there too.
			e, err := s.Explain(ctx, catalog.Scope{Review: true}, rail.Agent.ID, "xyzzy plugh")
			if err != nil || e == nil || !e.HasSimilarity || e.Similarity < 0.5 {
				t.Fatalf("Explain = %+v, %v; want the similarity", e, err)
			}

			// The endpoint down: words alone, and said so.
			fake.err = errors.New("the embeddings API did not answer")
			p, err = s.Search(ctx, catalog.Query{Text: "invoices"})
			if err != nil {
				t.Fatal(err)
			}
			if p.Semantic.Hybrid || p.Semantic.Degraded != "the embeddings API did not answer" || len(p.Items) == 0 {
				t.Fatalf("with the API down: %+v, %d items", p.Semantic, len(p.Items))
			}
			fake.err = nil

			// A new version's text is embedded again; nothing else is.
			upsert(t, s, "https://rail.example.org/.well-known/agent-card.json", strings.Replace(railCard, "intercity trains", "night trains", 1))
			if n, _ := embedAll(t, s, "m1", embedDim, last); n != 1 {
				t.Fatalf("after a new version: embedded %d, want 1", n)
			}
			if err := s.StoreEmbeddings(ctx, "m1", embedDim, []catalog.Embedding{{PK: 1, Vector: make([]float32, 3)}}); err == nil {
				t.Fatal("a vector of the wrong length was stored")
			}
		})
	}
}

// TestEmbeddingsLoadedWithIndex restarts a catalog whose vectors are all
// stored: the index build loads those of the current text and the
// embedder's space, so the worker has only the stale one to embed.
func TestEmbeddingsLoadedWithIndex(t *testing.T) {
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", catalogtest.SQLiteDSN}, {"postgres", catalogtest.PostgresDSN}} {
		t.Run(db.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := db.dsn(t)
			s := openEmbedding(t, dsn, &fakeEmbedder{})
			seed(t, s)
			if n, _ := embedAll(t, s, "m1", embedDim, 0); n != 3 {
				t.Fatalf("embedded %d agents, want 3", n)
			}
			// One agent's vector is of an older text.
			all, _, err := s.EmbeddingWork(ctx, "another space", embedDim, 0, 100)
			if err != nil || len(all) != 3 {
				t.Fatalf("EmbeddingWork = %d jobs, %v", len(all), err)
			}
			stale := all[1].PK
			if err := s.StoreEmbeddings(ctx, "m1", embedDim, []catalog.Embedding{{PK: stale, TextSHA256: catalog.EmbedDigest("an older text"), Vector: hashEmbed("older")}}); err != nil {
				t.Fatal(err)
			}
			s.Close()

			r := openEmbedding(t, dsn, &fakeEmbedder{})
			if cov := r.EmbeddingCoverage(); cov.Model != "m1" || cov.Embedded != 2 || cov.Agents != 3 {
				t.Fatalf("coverage after the index build = %+v, want m1's 2 of 3", cov)
			}
			jobs, _, err := r.EmbeddingWork(ctx, "m1", embedDim, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 1 || jobs[0].PK != stale || jobs[0].Stored != nil {
				t.Fatalf("work after the restart = %+v, want the stale agent %d alone, to embed", jobs, stale)
			}

			// Another space's vectors are not loaded.
			o := openEmbedding(t, dsn, &fakeEmbedder{space: "m2"})
			if cov := o.EmbeddingCoverage(); cov.Embedded != 0 {
				t.Fatalf("coverage in space m2 = %+v, want none", cov)
			}
		})
	}
}
