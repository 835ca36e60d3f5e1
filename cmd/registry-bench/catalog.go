package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // for creating the benchmark schema
	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/api"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/synth"
)

type catalogFlags struct {
	n, queries, batch, perTx int
	seed                     int64
	db, pgSchema, out        string
	reuse                    bool
}

func runCatalog(args []string) error {
	var f catalogFlags
	fs := flag.NewFlagSet("catalog", flag.ContinueOnError)
	fs.IntVar(&f.n, "n", 100_000, "agents in the synthetic catalog")
	fs.IntVar(&f.queries, "queries", 400, "requests per query class")
	fs.IntVar(&f.batch, "batch", 500, "cards per transaction during the bulk load")
	fs.IntVar(&f.perTx, "per-tx", 2000, "further cards stored one transaction each, to measure crawler-style ingest")
	fs.Int64Var(&f.seed, "seed", 1, "generator seed")
	fs.StringVar(&f.db, "db", "", "catalog DSN (default: a fresh SQLite file in a temp dir)")
	fs.StringVar(&f.pgSchema, "pg-schema", "registry_bench", "PostgreSQL schema to (re)create for the run")
	fs.BoolVar(&f.reuse, "reuse", false, "reuse an existing catalog that already holds -n agents (skip the bulk load)")
	fs.StringVar(&f.out, "json", "", "also write the figures as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	store, done, err := openBenchStore(ctx, f)
	if err != nil {
		return err
	}
	defer done()
	gen := synth.New(f.seed)
	rep := report{Backend: store.Dialect(), Agents: f.n, CPUs: runtime.NumCPU()}

	have, err := store.Count(ctx)
	if err != nil {
		return err
	}
	switch {
	case f.reuse && have >= f.n:
		fmt.Printf("reusing catalog with %d agents\n", have)
	case have > 0:
		return fmt.Errorf("catalog at %s already holds %d agents (use -reuse or a fresh database)", f.db, have)
	default:
		if rep.Ingest, err = bulkLoad(ctx, store, gen, f); err != nil {
			return err
		}
		fmt.Printf("bulk load: %d cards in %.1fs = %.0f cards/s (parse %.0f µs/card; %d skills)\n",
			f.n, rep.Ingest.Seconds, rep.Ingest.CardsPerSec, rep.Ingest.ParseMicros, rep.Ingest.Skills)
	}

	start := time.Now()
	if err := store.WarmIndex(ctx); err != nil {
		return err
	}
	rep.IndexBuildSeconds = time.Since(start).Seconds()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.HeapMB = float64(ms.HeapAlloc) / (1 << 20)
	fmt.Printf("search index: built in %.2fs, Go heap %.0f MB\n", rep.IndexBuildSeconds, rep.HeapMB)

	e := echo.New()
	api.New(api.Options{Catalog: store, Logger: discardLogger()}).Mount(e)
	srv := httptest.NewServer(e)
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 4

	classes := queryClasses(gen.Vocabulary())
	rnd := rand.New(rand.NewPCG(uint64(f.seed), 7))
	fmt.Printf("\n%-22s %8s %8s %8s %10s\n", "GET /api/v1/agents", "p50 ms", "p99 ms", "max ms", "avg total")
	for _, cl := range classes {
		lat, totals, err := measure(client, srv.URL, cl.queries, f.queries)
		if err != nil {
			return fmt.Errorf("%s: %w", cl.name, err)
		}
		r := latencyResult{Name: cl.name, P50: pct(lat, 50), P99: pct(lat, 99), Max: pct(lat, 100), AvgTotal: avg(totals)}
		rep.Queries = append(rep.Queries, r)
		fmt.Printf("%-22s %8.2f %8.2f %8.2f %10.0f\n", r.Name, r.P50, r.P99, r.Max, r.AvgTotal)
	}

	ids, err := sampleIDs(ctx, store, gen, f.n, 500, rnd)
	if err != nil {
		return err
	}
	var byID []string
	for _, id := range ids {
		byID = append(byID, "/api/v1/agents/"+id)
	}
	lat, _, err := measure(client, srv.URL, byID, f.queries)
	if err != nil {
		return fmt.Errorf("get by id: %w", err)
	}
	rep.GetByID = latencyResult{Name: "get-by-id", P50: pct(lat, 50), P99: pct(lat, 99), Max: pct(lat, 100)}
	fmt.Printf("%-22s %8.2f %8.2f %8.2f\n", "GET /agents/{id}", rep.GetByID.P50, rep.GetByID.P99, rep.GetByID.Max)

	if rep.Like, err = compareLike(ctx, store, gen.Vocabulary()); err != nil {
		return err
	}
	fmt.Printf("\ntext search vs LIKE '%%term%%' scan (same terms, in process, median of 3):\n")
	for _, l := range rep.Like {
		fmt.Printf("  %-14s matches %6d   search %7.2f ms   like %8.1f ms   like/search = %6.0fx\n",
			l.Term, l.Matches, l.SearchMS, l.LikeMS, l.LikeMS/l.SearchMS)
	}

	if f.perTx > 0 {
		if rep.PerTx, err = perTxLoad(ctx, store, gen, f.n, f.perTx); err != nil {
			return err
		}
		fmt.Printf("\nper-card transactions: %d cards in %.1fs = %.0f cards/s\n", f.perTx, rep.PerTx.Seconds, rep.PerTx.CardsPerSec)
	}
	if f.out != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(f.out, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// openBenchStore opens and migrates the catalog a benchmark runs on (see
// benchDSN); done closes it and removes a temporary one.
func openBenchStore(ctx context.Context, f catalogFlags) (store *catalog.Store, done func(), err error) {
	dsn, cleanup, err := benchDSN(f)
	if err != nil {
		return nil, nil, err
	}
	store, err = catalog.Open(ctx, catalog.Config{DSN: dsn})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	if err := store.Migrate(ctx); err != nil {
		store.Close()
		cleanup()
		return nil, nil, err
	}
	return store, func() { store.Close(); cleanup() }, nil
}

// benchDSN picks the catalog location: a temp SQLite file, or a freshly
// recreated schema on the given PostgreSQL server.
func benchDSN(f catalogFlags) (string, func(), error) {
	if f.db == "" {
		dir, err := os.MkdirTemp("", "registry-bench-")
		if err != nil {
			return "", nil, err
		}
		return "sqlite:" + filepath.Join(dir, "catalog.db"), func() { os.RemoveAll(dir) }, nil
	}
	if !strings.HasPrefix(f.db, "postgres") || f.reuse {
		if strings.HasPrefix(f.db, "postgres") {
			return withSearchPath(f.db, f.pgSchema), func() {}, nil
		}
		return f.db, func() {}, nil
	}
	admin, err := sql.Open("pgx", f.db)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close()
	for _, q := range []string{"DROP SCHEMA IF EXISTS " + f.pgSchema + " CASCADE", "CREATE SCHEMA " + f.pgSchema} {
		if _, err := admin.Exec(q); err != nil {
			return "", nil, fmt.Errorf("preparing schema %s: %w", f.pgSchema, err)
		}
	}
	return withSearchPath(f.db, f.pgSchema), func() {}, nil
}

func withSearchPath(dsn, schema string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

type ingestResult struct {
	Cards       int     `json:"cards"`
	Skills      int     `json:"skills"`
	Seconds     float64 `json:"seconds"`
	CardsPerSec float64 `json:"cards_per_sec"`
	ParseMicros float64 `json:"parse_us_per_card"`
}

// bulkLoad generates and parses cards on every core and stores them in
// batches from one writer, as `registry import` does.
func bulkLoad(ctx context.Context, store *catalog.Store, gen *synth.Generator, f catalogFlags) (ingestResult, error) {
	type parsed struct {
		i     int
		c     *card.Card
		parse time.Duration
	}
	jobs := make(chan int, 1024)
	out := make(chan parsed, 1024)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	lim := card.DefaultLimits()
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				raw := gen.Card(i)
				t := time.Now()
				c, err := card.Parse(raw, lim)
				if err != nil {
					select {
					case errc <- fmt.Errorf("card %d: %w", i, err):
					default:
					}
					continue
				}
				out <- parsed{i: i, c: c, parse: time.Since(t)}
			}
		}()
	}
	go func() {
		for i := range f.n {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		close(out)
	}()
	start := time.Now()
	var (
		res      ingestResult
		parseDur time.Duration
		batch    []catalog.UpsertInput
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := store.UpsertBatch(ctx, benchActor, batch)
		batch = batch[:0]
		return err
	}
	for p := range out {
		parseDur += p.parse
		res.Cards++
		res.Skills += len(p.c.Skills)
		batch = append(batch, catalog.UpsertInput{CardURL: gen.CardURL(p.i), Card: p.c, Source: catalog.SourceImport})
		if len(batch) >= f.batch {
			if err := flush(); err != nil {
				return res, err
			}
		}
		if res.Cards%20000 == 0 {
			fmt.Printf("  %d cards, %.0f cards/s\n", res.Cards, float64(res.Cards)/time.Since(start).Seconds())
		}
	}
	if err := flush(); err != nil {
		return res, err
	}
	select {
	case err := <-errc:
		return res, err
	default:
	}
	res.Seconds = time.Since(start).Seconds()
	res.CardsPerSec = float64(res.Cards) / res.Seconds
	res.ParseMicros = float64(parseDur.Microseconds()) / float64(res.Cards)
	return res, nil
}

// perTxLoad stores further cards one transaction each, parse included.
func perTxLoad(ctx context.Context, store *catalog.Store, gen *synth.Generator, from, n int) (ingestResult, error) {
	start := time.Now()
	lim := card.DefaultLimits()
	for i := from; i < from+n; i++ {
		c, err := card.Parse(gen.Card(i), lim)
		if err != nil {
			return ingestResult{}, err
		}
		if _, err := store.Upsert(ctx, benchActor, catalog.UpsertInput{CardURL: gen.CardURL(i), Card: c}); err != nil {
			return ingestResult{}, err
		}
	}
	sec := time.Since(start).Seconds()
	return ingestResult{Cards: n, Seconds: sec, CardsPerSec: float64(n) / sec}, nil
}

type queryClass struct {
	name    string
	queries []string
}

// queryClasses are synth's search classes as API paths.
func queryClasses(v synth.Vocab) []queryClass {
	var out []queryClass
	for _, cl := range v.SearchClasses() {
		qc := queryClass{name: cl.Name}
		for _, q := range cl.Searches {
			path := "/api/v1/agents"
			if len(q) > 0 {
				path += "?" + q.Encode()
			}
			qc.queries = append(qc.queries, path)
		}
		out = append(out, qc)
	}
	return out
}

// measure sends n requests cycling through paths (after a short warm-up)
// and returns latencies in ms and the result totals seen.
func measure(c *http.Client, base string, paths []string, n int) ([]float64, []float64, error) {
	if len(paths) == 0 {
		return nil, nil, fmt.Errorf("no queries")
	}
	get := func(p string) (float64, error) {
		resp, err := c.Get(base + p)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("GET %s: %d %s", p, resp.StatusCode, body)
		}
		var r struct {
			Total float64 `json:"total"`
		}
		_ = json.Unmarshal(body, &r)
		return r.Total, nil
	}
	for i := range min(20, n) {
		if _, err := get(paths[i%len(paths)]); err != nil {
			return nil, nil, err
		}
	}
	lat := make([]float64, 0, n)
	totals := make([]float64, 0, n)
	for i := range n {
		t := time.Now()
		total, err := get(paths[i%len(paths)])
		if err != nil {
			return nil, nil, err
		}
		lat = append(lat, float64(time.Since(t).Microseconds())/1000)
		totals = append(totals, total)
	}
	return lat, totals, nil
}

func sampleIDs(ctx context.Context, store *catalog.Store, gen *synth.Generator, n, k int, rnd *rand.Rand) ([]string, error) {
	ids := make([]string, 0, k)
	for range k {
		a, err := store.AgentByURL(ctx, gen.CardURL(rnd.IntN(n)))
		if err != nil {
			return nil, err
		}
		ids = append(ids, a.ID)
	}
	return ids, nil
}

type likeResult struct {
	Term     string  `json:"term"`
	Matches  int     `json:"matches"`
	SearchMS float64 `json:"search_ms"`
	LikeMS   float64 `json:"like_ms"`
}

func compareLike(ctx context.Context, store *catalog.Store, v synth.Vocab) ([]likeResult, error) {
	var terms []string
	for _, w := range v.CommonWords {
		if len(terms) < 6 && (w.Share > 0.10 || (w.Share <= 0.05 && len(terms) >= 3)) {
			terms = append(terms, w.Value)
		}
	}
	if len(v.RareWords) > 0 {
		terms = append(terms, v.RareWords[0].Value)
	}
	var out []likeResult
	for _, t := range terms {
		var s, l []float64
		var matches int
		for range 3 {
			start := time.Now()
			p, err := store.Search(ctx, catalog.Query{Text: t})
			if err != nil {
				return nil, err
			}
			s = append(s, float64(time.Since(start).Microseconds())/1000)
			matches = p.Total
			start = time.Now()
			if _, err := store.LikeScan(ctx, t); err != nil {
				return nil, err
			}
			l = append(l, float64(time.Since(start).Microseconds())/1000)
		}
		out = append(out, likeResult{Term: t, Matches: matches, SearchMS: pct(s, 50), LikeMS: pct(l, 50)})
	}
	return out, nil
}

type latencyResult struct {
	Name     string  `json:"name"`
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
	Max      float64 `json:"max_ms"`
	AvgTotal float64 `json:"avg_total,omitempty"`
}

type report struct {
	Backend           string          `json:"backend"`
	Agents            int             `json:"agents"`
	CPUs              int             `json:"cpus"`
	Ingest            ingestResult    `json:"bulk_ingest"`
	PerTx             ingestResult    `json:"per_tx_ingest"`
	IndexBuildSeconds float64         `json:"index_build_seconds"`
	HeapMB            float64         `json:"heap_mb"`
	Queries           []latencyResult `json:"queries"`
	GetByID           latencyResult   `json:"get_by_id"`
	Like              []likeResult    `json:"like_comparison"`
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

func avg(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}
