package catalog

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/search"
	"github.com/a2aregistry/registry/internal/synth"
)

// synthDocs returns the index documents of synthetic cards from..from+n,
// as the catalog would publish them, with ids 1..n and the given seq.
func synthDocs(tb testing.TB, gen *synth.Generator, from, n int, seq int64) []search.Doc {
	tb.Helper()
	docs := make([]search.Doc, 0, n)
	healths := []string{HealthUp, HealthUp, HealthUp, HealthDown, HealthUnknown}
	for i := range n {
		c, err := card.Parse(gen.Card(from+i), card.DefaultLimits())
		if err != nil {
			tb.Fatal(err)
		}
		sum := recordOfSummary(summaryOf(c))
		d := indexedDoc{pk: int64(i + 1), seq: seq, sortKey: sortKeyOf(c.Name),
			facets: docFacets(sum, SignatureUnchecked, "", "", healths[(from+i)%len(healths)], WorksUnchecked, nil, nil, "", placement{}),
			parts:  skillParts(skillsOf(c), sum), text: textOf(c)}
		docs = append(docs, d.searchDoc())
	}
	return docs
}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkIndexReindex builds an index of n synthetic agents, then gives
// every agent a new version (the card of another synthetic agent: every
// word and facet may change), one document per Apply as writers publish
// them. It reports the live heap of the fresh index and after the
// re-index, the ratio, and the time of one document update. Run with
// -benchtime=1x; REGISTRY_BENCH_AGENTS is not read: sizes are fixed.
func BenchmarkIndexReindex(b *testing.B) {
	for _, n := range []int{20_000, 100_000} {
		b.Run(itoa(n), func(b *testing.B) {
			for b.Loop() {
				gen := synth.New(11)
				base := liveHeap()
				idx := newSearchIndex()
				for from := 0; from < n; from += 2000 {
					docs := synthDocs(b, gen, from, min(2000, n-from), 1)
					for i := range docs {
						docs[i].ID += uint32(from)
					}
					idx.Apply(docs)
				}
				idx.MarkReady()
				fresh := liveHeap() - base

				var worst, total time.Duration
				updates := 0
				for from := 0; from < n; from += 2000 {
					docs := synthDocs(b, gen, n+from, min(2000, n-from), 2)
					for i := range docs {
						docs[i].ID += uint32(from)
						start := time.Now()
						idx.Apply(docs[i : i+1])
						d := time.Since(start)
						total += d
						worst = max(worst, d)
						updates++
					}
				}
				after := liveHeap() - base

				// Small changes, as most new card versions and every
				// health change are: one facet value and one word.
				var smallWorst, smallTotal time.Duration
				docs := synthDocs(b, gen, n, min(n, 5000), 3)
				for i := range docs {
					d := &docs[i]
					d.Text[search.ColDescription] += " revised"
					for j, f := range d.Facets {
						if f.Field == FieldHealth {
							d.Facets[j].Value = HealthStale
						}
					}
					start := time.Now()
					idx.Apply(docs[i : i+1])
					t := time.Since(start)
					smallTotal += t
					smallWorst = max(smallWorst, t)
				}
				b.ReportMetric(float64(smallTotal.Microseconds())/float64(len(docs)), "µs/small-update")
				b.ReportMetric(float64(smallWorst.Microseconds()), "µs-small-worst")
				b.ReportMetric(float64(fresh)/(1<<20), "MB-fresh")
				b.ReportMetric(float64(after)/(1<<20), "MB-after")
				b.ReportMetric(float64(after)/float64(fresh), "ratio")
				b.ReportMetric(float64(total.Microseconds())/float64(updates), "µs/update")
				b.ReportMetric(float64(worst.Microseconds()), "µs-worst")
				runtime.KeepAlive(idx)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// BenchmarkIndexBuild measures building an index of 20,000 synthetic
// agents from documents in memory, in the batches the build uses: the
// index's share of start-up, without the database reads.
func BenchmarkIndexBuild(b *testing.B) {
	gen := synth.New(11)
	const n = 20_000
	docs := synthDocs(b, gen, 0, n, 1)
	for b.Loop() {
		idx := newSearchIndex()
		for batch := range slices.Chunk(docs, 1024) {
			idx.Apply(batch)
		}
		idx.MarkReady()
	}
}

// BenchmarkWarmIndex measures building the index of 20,000 synthetic agents
// from SQLite, as a start-up does.
func BenchmarkWarmIndex(b *testing.B) {
	path := filepath.Join(b.TempDir(), "catalog.db")
	ctx := context.Background()
	loader := openBenchSQLite(b, path)
	gen := synth.New(11)
	for from := 0; from < 20_000; from += 1000 {
		var batch []UpsertInput
		for i := from; i < from+1000; i++ {
			c, err := card.Parse(gen.Card(i), card.DefaultLimits())
			if err != nil {
				b.Fatal(err)
			}
			batch = append(batch, UpsertInput{CardURL: gen.CardURL(i), Card: c})
		}
		if _, err := loader.UpsertBatch(ctx, System("test"), batch); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		s := openBenchSQLite(b, path)
		if err := s.WarmIndex(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

func openBenchSQLite(b *testing.B, path string) *Store {
	b.Helper()
	s, err := Open(context.Background(), Config{DSN: "sqlite:" + path})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkIndexRevision measures what publishing one new card version
// costs the index of 20,000 synthetic agents when the version edits a
// sentence, as the mixed benchmark's fleet and most card owners do: the
// description gains a revision number, and the new version's signature
// status is unchecked again after the verifier's verdict on the last.
func BenchmarkIndexRevision(b *testing.B) {
	gen := synth.New(11)
	const n = 20_000
	docs := synthDocs(b, gen, 0, n, 1)
	idx := newSearchIndex()
	for batch := range slices.Chunk(docs, 1024) {
		idx.Apply(batch)
	}
	idx.MarkReady()
	seq := int64(1)
	for i := 0; b.Loop(); i++ {
		d := docs[i%n]
		seq++
		if !idx.SetFields(d.ID, d.Seq, seq, map[string][]string{FieldSignature: {SignatureUnsigned}}) {
			b.Fatal("SetFields refused the verdict")
		}
		seq++
		d.Seq = seq
		d.Text[search.ColDescription] = "(revision " + itoa(i/n+1) + ") " + d.Text[search.ColDescription]
		idx.Apply([]search.Doc{d})
		docs[i%n].Seq = seq
	}
}
