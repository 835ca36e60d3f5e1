package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/synth"
)

type mixedFlags struct {
	n, hosts, concurrency, perHost int
	seed                           int64
	db, pgSchema, registry, out    string
	cpuprofile, trace              string
	duration, interval             time.Duration
	change                         float64
	queries                        int
}

// runMixed measures what `registry serve` does for its users: the real
// binary, its real background work (index build and sync, crawler,
// verifier), over a catalog of n agents whose cards live on a loopback
// fleet that changes them. It runs serve twice on the same catalog: once
// without crawling (idle search latency) and once crawling every agent as
// fast as the crawler can (search latency and versions stored per second
// while the catalog changes), and reports how soon each start answered
// its first search.
func runMixed(args []string) error {
	var f mixedFlags
	fs := flag.NewFlagSet("mixed", flag.ContinueOnError)
	fs.IntVar(&f.n, "n", 100_000, "agents in the catalog and the fleet")
	fs.IntVar(&f.hosts, "hosts", 8, "loopback addresses serving the fleet")
	fs.IntVar(&f.concurrency, "concurrency", 32, "serve --crawl-concurrency")
	fs.IntVar(&f.perHost, "per-host", 8, "serve --crawl-per-host")
	fs.Int64Var(&f.seed, "seed", 1, "generator seed")
	fs.StringVar(&f.db, "db", "", "catalog DSN (default: a fresh SQLite file in a temp dir)")
	fs.StringVar(&f.pgSchema, "pg-schema", "registry_bench_mixed", "PostgreSQL schema to (re)create for the run")
	fs.StringVar(&f.registry, "registry", "", "registry binary to run (default: go build ./cmd/registry into a temp dir)")
	fs.DurationVar(&f.duration, "duration", 60*time.Second, "how long to search while the crawler writes")
	fs.DurationVar(&f.interval, "interval", time.Second, "serve --crawl-min-interval and --crawl-max-interval: every agent is due again this soon")
	fs.Float64Var(&f.change, "change", 1, "share of fetches that return a changed card (0..1)")
	fs.IntVar(&f.queries, "queries", 2000, "searches in the idle phase")
	fs.StringVar(&f.out, "json", "", "also write the figures as JSON to this file")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the crawling serve process to this file (REGISTRY_CPUPROFILE)")
	fs.StringVar(&f.trace, "trace", "", "write an execution trace of the crawling serve process's last 10 s to this file (REGISTRY_TRACE)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.n < 1 || f.hosts < 1 || f.hosts > 250 || f.change < 0 || f.change > 1 {
		return errors.New("need -n >= 1, 1 <= -hosts <= 250 and 0 <= -change <= 1")
	}
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "registry-bench-mixed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	bin, err := registryBinary(f.registry, tmp)
	if err != nil {
		return err
	}

	fl, err := startChangingFleet(f.seed, f.n, f.hosts, f.change)
	if err != nil {
		return err
	}
	defer fl.close()

	dsn := f.db
	if dsn == "" {
		dsn = "sqlite:" + filepath.Join(tmp, "catalog.db")
	} else if dsn, _, err = benchDSN(catalogFlags{db: f.db, pgSchema: f.pgSchema}); err != nil {
		return err
	}
	gen := synth.New(f.seed)
	loadStart := time.Now()
	if err := loadFleetCatalog(ctx, dsn, gen, fl.urls); err != nil {
		return err
	}
	fmt.Printf("catalog: %d agents loaded in %.1fs (%s); fleet: %d loopback hosts, %.0f%% of fetches change the card; %d CPUs\n",
		f.n, time.Since(loadStart).Seconds(), backendOf(dsn), f.hosts, 100*f.change, runtime.NumCPU())

	rep := mixedReport{Agents: f.n, Backend: backendOf(dsn), CPUs: runtime.NumCPU(), Duration: f.duration.Seconds()}
	common := []string{"--db", dsn, "--allow-networks", "127.0.0.0/8", "--verify-fetch=false",
		"--import-examples=false", "--log-level", "warn"}

	// Phase 1: serve without crawling.
	srv, err := startServe(bin, tmp, "idle", nil, append(common, "--crawl=false"))
	if err != nil {
		return err
	}
	rep.IdleStart, err = srv.waitFirstSearch(2 * time.Minute)
	if err != nil {
		srv.stop()
		return err
	}
	printStart("idle start", rep.IdleStart)
	idle, err := searchProcess(srv.base, f.seed, f.queries, 0)
	if err != nil {
		srv.stop()
		return fmt.Errorf("idle searches: %w", err)
	}
	rep.Idle = idle
	rep.IdleMem, _ = srv.memory()
	srv.stop()
	fmt.Printf("idle search      p50 %6.2f ms  p99 %6.2f ms  max %7.2f ms  (%d searches; in the handler p50 %.2f p99 %.2f ms)\n",
		idle.P50, idle.P99, idle.Max, idle.N, idle.ServerP50, idle.ServerP99)
	fmt.Printf("idle memory      heap %4.0f MB  RSS %4.0f MB\n", rep.IdleMem.HeapMB, rep.IdleMem.RSSMB)

	// Phase 2: serve crawling every agent every -interval.
	iv := f.interval.String()
	srv, err = startServe(bin, tmp, "crawl", f.diagnostics(), append(common, "--crawl=true",
		"--crawl-min-interval", iv, "--crawl-max-interval", iv,
		"--crawl-concurrency", strconv.Itoa(f.concurrency), "--crawl-per-host", strconv.Itoa(f.perHost)))
	if err != nil {
		return err
	}
	defer srv.stop()
	rep.CrawlStart, err = srv.waitFirstSearch(3 * time.Minute)
	if err != nil {
		return err
	}
	printStart("start while crawling", rep.CrawlStart)
	// Let the crawler reach its pace before measuring.
	time.Sleep(5 * time.Second)
	v0, err := srv.counter("registry_card_versions_stored_total")
	if err != nil {
		return err
	}
	cpu0, err := srv.counter("process_cpu_seconds_total")
	if err != nil {
		return err
	}
	rep.LoadBefore = loadAverage()
	f0 := fl.served.Load()
	start := time.Now()
	busy, err := searchProcess(srv.base, f.seed, 0, f.duration)
	if err != nil {
		return fmt.Errorf("searches while crawling: %w", err)
	}
	elapsed := time.Since(start).Seconds()
	v1, err := srv.counter("registry_card_versions_stored_total")
	if err != nil {
		return err
	}
	cpu1, err := srv.counter("process_cpu_seconds_total")
	if err != nil {
		return err
	}
	rep.LoadAfter = loadAverage()
	rep.Crawl = busy
	rep.VersionsPerSec = (v1 - v0) / elapsed
	rep.ServeCores = (cpu1 - cpu0) / elapsed
	if v1 > v0 {
		rep.ServeCPUPerVersion = (cpu1 - cpu0) / (v1 - v0) * 1e6
	}
	rep.FetchesPerSec = float64(fl.served.Load()-f0) / elapsed
	rep.CrawlMem, _ = srv.memory()

	ratio := busy.P99 / idle.P99
	fmt.Printf("crawling search  p50 %6.2f ms  p99 %6.2f ms  max %7.2f ms  (%d searches in %.0fs; in the handler p50 %.2f p99 %.2f ms)\n",
		busy.P50, busy.P99, busy.Max, busy.N, elapsed, busy.ServerP50, busy.ServerP99)
	fmt.Printf("crawling memory  heap %4.0f MB  RSS %4.0f MB\n", rep.CrawlMem.HeapMB, rep.CrawlMem.RSSMB)
	// Per-version CPU does not depend on what else the machine runs, as
	// the rates do; the load average says how much that was.
	fmt.Printf("crawling serve   %.2f cores, %.0f µs CPU per stored version (its searches included); load average %.1f -> %.1f\n",
		rep.ServeCores, rep.ServeCPUPerVersion, rep.LoadBefore, rep.LoadAfter)
	printByClass(gen.Vocabulary(), idle, busy)
	printTail("idle", idle.Tail)
	printTail("crawling", busy.Tail)
	fmt.Println()
	fmt.Printf("search p99 crawling / idle  %6.2fx  (target <= 2x)     %s\n", ratio, verdict(ratio <= 2))
	fmt.Printf("search p99 crawling         %6.2f ms (target < 30 ms)  %s\n", busy.P99, verdict(busy.P99 < 30))
	fmt.Printf("versions stored             %6.0f/s  (target >= 1500) %s  (cards served %.0f/s)\n",
		rep.VersionsPerSec, verdict(rep.VersionsPerSec >= 1500), rep.FetchesPerSec)
	for _, s := range []struct {
		name string
		r    startResult
	}{{"idle", rep.IdleStart}, {"crawling", rep.CrawlStart}} {
		fmt.Printf("first search (%s start)  %6.2f s  (target <= 1 s, or clean 503s)  %s\n", s.name, s.r.FirstSearch,
			verdict(s.r.Broken == 0 && (s.r.FirstSearch <= 1 || s.r.Unavailable > 0)))
	}
	if f.out != "" {
		if err := writeJSON(f.out, rep); err != nil {
			return err
		}
	}
	return nil
}

type memoryResult struct {
	HeapMB float64 `json:"heap_mb"`
	RSSMB  float64 `json:"rss_mb"`
}

type startResult struct {
	// FirstSearch is the time from process start to the first search
	// answered 200, in seconds.
	FirstSearch float64 `json:"first_search_s"`
	// Unavailable counts clean 503 answers (with Retry-After) before it.
	Unavailable int `json:"unavailable"`
	// Broken counts hangs, cut connections and other statuses before it.
	Broken int `json:"broken"`
}

type searchResult struct {
	N       int                     `json:"n"`
	P50     float64                 `json:"p50_ms"`
	P99     float64                 `json:"p99_ms"`
	Max     float64                 `json:"max_ms"`
	ByClass map[string]searchResult `json:"by_class,omitempty"`
	// ServerP50 and ServerP99 are the searches' own durations as serve
	// reports them (Server-Timing): the rest of the latency above is
	// spent outside the handler (network, queues, the client).
	ServerP50 float64 `json:"server_p50_ms,omitempty"`
	ServerP99 float64 `json:"server_p99_ms,omitempty"`
	// Tail is where the slowest 1% of searches spent their time.
	Tail *searchSpan `json:"tail,omitempty"`
}

type mixedReport struct {
	Backend        string       `json:"backend"`
	Agents         int          `json:"agents"`
	CPUs           int          `json:"cpus"`
	Duration       float64      `json:"duration_s"`
	IdleStart      startResult  `json:"idle_start"`
	CrawlStart     startResult  `json:"crawl_start"`
	Idle           searchResult `json:"idle"`
	Crawl          searchResult `json:"crawling"`
	IdleMem        memoryResult `json:"idle_memory"`
	CrawlMem       memoryResult `json:"crawling_memory"`
	VersionsPerSec float64      `json:"versions_stored_per_s"`
	FetchesPerSec  float64      `json:"fetches_served_per_s"`
	// ServeCores is serve's CPU time per second while crawling, and
	// ServeCPUPerVersion its CPU microseconds per stored version.
	ServeCores         float64 `json:"serve_cores"`
	ServeCPUPerVersion float64 `json:"serve_cpu_us_per_version"`
	// LoadBefore and LoadAfter are the machine's 1-minute load average
	// around the crawling measurement.
	LoadBefore float64 `json:"load_before"`
	LoadAfter  float64 `json:"load_after"`
}

// loadAverage is the machine's 1-minute load average (0 when unknown).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func printStart(name string, r startResult) {
	fmt.Printf("%-16s first search after %.2fs (%d answers 503 before, %d hangs/cut/other)\n", name, r.FirstSearch, r.Unavailable, r.Broken)
}

func backendOf(dsn string) string {
	if strings.HasPrefix(dsn, "postgres") {
		return "postgres"
	}
	return "sqlite"
}

// mixedQueries interleaves every query class of the catalog benchmark.
func mixedQueries(v synth.Vocab) []string {
	var out []string
	for _, cl := range queryClasses(v) {
		out = append(out, cl.queries...)
	}
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// classOf maps each path of mixedQueries to its query class, so a run can
// say which searches make its tail.
func classOf(v synth.Vocab) map[string]string {
	m := make(map[string]string)
	for _, cl := range queryClasses(v) {
		for _, q := range cl.queries {
			m[q] = cl.name
		}
	}
	return m
}

// searchFor sends sequential searches: n of them, or for d when n is 0.
// With classes, the result also breaks latency down by query class.
func searchFor(base string, paths []string, n int, d time.Duration, classes map[string]string) (searchResult, error) {
	c := &http.Client{Timeout: 30 * time.Second}
	var lat, inServer []float64
	var spans []searchSpan
	byClass := make(map[string][]float64)
	deadline := time.Now().Add(d)
	for i := 0; n > 0 && i < n || n == 0 && time.Now().Before(deadline); i++ {
		path := paths[i%len(paths)]
		t := time.Now()
		resp, err := c.Get(base + path)
		if err != nil {
			return searchResult{}, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return searchResult{}, err
		}
		if resp.StatusCode != http.StatusOK {
			return searchResult{}, fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
		}
		ms := float64(time.Since(t).Microseconds()) / 1000
		lat = append(lat, ms)
		st := resp.Header.Get("Server-Timing")
		if d, ok := serverTiming(st, "search"); ok {
			inServer = append(inServer, d)
			sp := searchSpan{Total: ms, Handler: d}
			sp.IndexWait, _ = serverTiming(st, "index-wait")
			sp.Index, _ = serverTiming(st, "index")
			sp.Page, _ = serverTiming(st, "page")
			spans = append(spans, sp)
		}
		if cl, ok := classes[path]; ok {
			byClass[cl] = append(byClass[cl], ms)
		}
	}
	r := searchResult{N: len(lat), P50: pct(lat, 50), P99: pct(lat, 99), Max: pct(lat, 100)}
	if len(inServer) > 0 {
		r.ServerP50, r.ServerP99 = pct(inServer, 50), pct(inServer, 99)
		r.Tail = tailOf(spans)
	}
	if len(byClass) > 0 {
		r.ByClass = make(map[string]searchResult, len(byClass))
		for cl, l := range byClass {
			r.ByClass[cl] = searchResult{N: len(l), P50: pct(l, 50), P99: pct(l, 99), Max: pct(l, 100)}
		}
	}
	return r, nil
}

// searchClientCmd is the hidden subcommand that runs searchFor in a
// process of its own, as a user's client is: the fleet's goroutines,
// which serve the crawler, then do not queue the client's reads of
// serve's answers in the same Go scheduler.
const searchClientCmd = "search-client"

// searchClientEnv is set in the client's environment, so that a test
// binary standing in for registry-bench knows to be the client.
const searchClientEnv = "REGISTRY_BENCH_SEARCH_CLIENT"

// searchProcess runs searchFor in a child process (searchClientCmd) with
// the mixed benchmark's queries of the generator seeded with seed.
func searchProcess(base string, seed int64, n int, d time.Duration) (searchResult, error) {
	self, err := os.Executable()
	if err != nil {
		return searchResult{}, err
	}
	cmd := exec.Command(self, searchClientCmd, "-base", base, "-seed", strconv.FormatInt(seed, 10),
		"-n", strconv.Itoa(n), "-duration", d.String())
	// A test binary runs as the client too (TestMain reads this).
	cmd.Env = append(os.Environ(), searchClientEnv+"=1")
	dieWithParent(cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return searchResult{}, fmt.Errorf("search client: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var r searchResult
	if err := json.Unmarshal(out, &r); err != nil {
		return searchResult{}, fmt.Errorf("search client: %w", err)
	}
	return r, nil
}

func runSearchClient(args []string) error {
	fs := flag.NewFlagSet(searchClientCmd, flag.ContinueOnError)
	base := fs.String("base", "", "serve's base URL")
	seed := fs.Int64("seed", 1, "generator seed")
	n := fs.Int("n", 0, "searches to send (0: for -duration)")
	d := fs.Duration("duration", 0, "how long to search when -n is 0")
	if err := fs.Parse(args); err != nil {
		return err
	}
	v := synth.New(*seed).Vocabulary()
	r, err := searchFor(*base, mixedQueries(v), *n, *d, classOf(v))
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// searchSpan is where one search's time went, in milliseconds: at the
// client, in serve's handler, and inside the handler waiting for the
// index, in the index and reading the page.
type searchSpan struct {
	Total     float64 `json:"total_ms"`
	Handler   float64 `json:"handler_ms"`
	IndexWait float64 `json:"index_wait_ms"`
	Index     float64 `json:"index_ms"`
	Page      float64 `json:"page_ms"`
}

// tailOf averages the spans of the slowest 1% of searches (at least one).
func tailOf(spans []searchSpan) *searchSpan {
	if len(spans) == 0 {
		return nil
	}
	s := slices.Clone(spans)
	slices.SortFunc(s, func(a, b searchSpan) int { return cmp.Compare(b.Total, a.Total) })
	s = s[:max(1, len(s)/100)]
	var t searchSpan
	for _, x := range s {
		t.Total += x.Total
		t.Handler += x.Handler
		t.IndexWait += x.IndexWait
		t.Index += x.Index
		t.Page += x.Page
	}
	n := float64(len(s))
	return &searchSpan{Total: t.Total / n, Handler: t.Handler / n, IndexWait: t.IndexWait / n, Index: t.Index / n, Page: t.Page / n}
}

func printTail(name string, t *searchSpan) {
	if t == nil {
		return
	}
	fmt.Printf("%-16s slowest 1%%: %.2f ms = handler %.2f (index wait %.2f, index %.2f, page %.2f) + outside %.2f\n",
		name, t.Total, t.Handler, t.IndexWait, t.Index, t.Page, t.Total-t.Handler)
}

// serverTiming reads the duration of metric name from a Server-Timing
// header ("search;dur=3.21"), in milliseconds.
func serverTiming(h, name string) (float64, bool) {
	for _, m := range strings.Split(h, ",") {
		parts := strings.Split(strings.TrimSpace(m), ";")
		if parts[0] != name {
			continue
		}
		for _, p := range parts[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "dur="); ok {
				d, err := strconv.ParseFloat(v, 64)
				return d, err == nil
			}
		}
	}
	return 0, false
}

// printByClass prints idle and crawling latency side by side per class.
func printByClass(v synth.Vocab, idle, busy searchResult) {
	fmt.Printf("  %-22s %19s   %19s\n", "class", "idle p50 / p99 ms", "crawling p50 / p99")
	for _, cl := range queryClasses(v) {
		a, b := idle.ByClass[cl.name], busy.ByClass[cl.name]
		fmt.Printf("  %-22s %8.2f / %8.2f   %8.2f / %8.2f  (%d, %d searches)\n", cl.name, a.P50, a.P99, b.P50, b.P99, a.N, b.N)
	}
}

// loadFleetCatalog stores revision 0 of every fleet card under its fleet
// URL, registered by URL so the crawler checks it.
func loadFleetCatalog(ctx context.Context, dsn string, gen *synth.Generator, urls []string) error {
	store, err := catalog.Open(ctx, catalog.Config{DSN: dsn, Logger: discardLogger()})
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	if n, err := store.Count(ctx); err != nil || n > 0 {
		return fmt.Errorf("catalog must be empty (holds %d agents): %v", n, err)
	}
	type parsed struct {
		i int
		c *card.Card
	}
	jobs := make(chan int, 1024)
	out := make(chan parsed, 1024)
	errc := make(chan error, runtime.NumCPU())
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			for i := range jobs {
				c, err := card.Parse(gen.Card(i), card.DefaultLimits())
				if err != nil {
					errc <- fmt.Errorf("card %d: %w", i, err)
					continue
				}
				out <- parsed{i, c}
			}
		})
	}
	go func() {
		for i := range urls {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		close(out)
	}()
	// Every agent is due at once: the crawler runs flat out.
	now := time.Now()
	var batch []catalog.UpsertInput
	for p := range out {
		batch = append(batch, catalog.UpsertInput{CardURL: urls[p.i], Card: p.c, Source: catalog.SourceURL, ReceivedAt: now})
		if len(batch) == 500 {
			if _, err := store.UpsertBatch(ctx, benchActor, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		if _, err := store.UpsertBatch(ctx, benchActor, batch); err != nil {
			return err
		}
	}
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// changingFleet serves the synthetic cards like startFleet, but each fetch
// that is not conditional-matched may return a new revision of the card:
// its description gains a revision number, as a card edited by its owner.
// Cards are generated from the seed on every fetch (about 13 µs each)
// rather than held: a million of them would hold 2.8 GB of the
// benchmark's heap beside the serve it measures; the fleet keeps only
// each card's revision number.
type changingFleet struct {
	fleet
	served atomic.Int64
}

func startChangingFleet(seed int64, n, hosts int, change float64) (*changingFleet, error) {
	gen := synth.New(seed)
	revs := make([]atomic.Int64, n)
	cf := &changingFleet{}
	var rmu sync.Mutex
	rnd := rand.New(rand.NewPCG(uint64(seed), 11))
	changed := func() bool {
		rmu.Lock()
		defer rmu.Unlock()
		return rnd.Float64() < change
	}
	render := func(i int, rev int64) []byte {
		c := gen.Card(i)
		if rev == 0 {
			return c
		}
		return bytes.Replace(c, []byte(`"description":"`), fmt.Appendf(nil, `"description":"(revision %d) `, rev), 1)
	}
	etag := func(b []byte) string {
		h := fnv.New64a()
		h.Write(b)
		return fmt.Sprintf(`"%016x"`, h.Sum64())
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/agents/")
		idx, path, _ := strings.Cut(rest, "/")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil || i < 0 || i >= n || "/"+path != crawler.WellKnownCardPath {
			http.NotFound(w, r)
			return
		}
		cf.served.Add(1)
		rev := revs[i].Load()
		if changed() {
			rev = revs[i].Add(1)
		}
		body := render(i, rev)
		tag := etag(body)
		w.Header().Set("ETag", tag)
		w.Header().Set("Cache-Control", "max-age=0")
		if r.Header.Get("If-None-Match") == tag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	bases := make([]string, hosts)
	for h := range hosts {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", 2+h))
		if err != nil {
			cf.close()
			return nil, fmt.Errorf("fleet host %d: %w", h, err)
		}
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		cf.servers = append(cf.servers, srv)
		bases[h] = "http://" + ln.Addr().String()
	}
	cf.urls = make([]string, n)
	for i := range n {
		cf.urls[i] = fmt.Sprintf("%s/agents/%d%s", bases[i%hosts], i, crawler.WellKnownCardPath)
	}
	return cf, nil
}

// registryBinary returns bin, or when it is empty builds the registry
// binary into dir: the benchmarks that run serve measure the real binary.
func registryBinary(bin, dir string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	bin = filepath.Join(dir, "registry")
	fmt.Println("building the registry binary")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/a2aregistry/registry/cmd/registry")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building registry: %w", err)
	}
	return bin, nil
}

// serveProc is one `registry serve` child process.
type serveProc struct {
	cmd     *exec.Cmd
	base    string
	started time.Time
	logPath string
	done    chan struct{}
}

// diagnostics is the environment that asks the crawling serve for a CPU
// profile or an execution trace.
func (f mixedFlags) diagnostics() []string {
	var env []string
	if f.cpuprofile != "" {
		env = append(env, "REGISTRY_CPUPROFILE="+f.cpuprofile)
	}
	if f.trace != "" {
		env = append(env, "REGISTRY_TRACE="+f.trace)
	}
	return env
}

// startServe runs `registry serve` with args, and env added to this
// process's environment.
func startServe(bin, dir, name string, env, args []string) (*serveProc, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	logPath := filepath.Join(dir, "serve-"+name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"serve", "--listen", addr}, args...)...)
	dieWithParent(cmd)
	cmd.Stdout, cmd.Stderr = logf, logf
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	p := &serveProc{cmd: cmd, base: "http://" + addr, logPath: logPath, done: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting registry serve: %w", err)
	}
	go func() {
		cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// waitFirstSearch polls a search until it is answered 200, counting what
// came back before: a clean 503 is what a load balancer can act on; a
// hang (no answer within 2 s), a cut connection or any other status is not.
func (p *serveProc) waitFirstSearch(limit time.Duration) (startResult, error) {
	c := &http.Client{Timeout: 2 * time.Second}
	var r startResult
	for {
		select {
		case <-p.done:
			return r, fmt.Errorf("registry serve exited early; log:\n%s", p.logTail())
		default:
		}
		if time.Since(p.started) > limit {
			return r, fmt.Errorf("no search answered within %v; log:\n%s", limit, p.logTail())
		}
		resp, err := c.Get(p.base + "/api/v1/agents?q=data")
		if err != nil {
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" {
				// Not listening yet: the process is still starting.
				time.Sleep(20 * time.Millisecond)
				continue
			}
			r.Broken++
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			r.FirstSearch = time.Since(p.started).Seconds()
			return r, nil
		case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
			r.Unavailable++
		default:
			r.Broken++
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// counter reads one counter's value from /metrics.
func (p *serveProc) counter(name string) (float64, error) {
	m, err := p.metrics()
	if err != nil {
		return 0, err
	}
	v, ok := m[name]
	if !ok {
		return 0, fmt.Errorf("/metrics has no %s", name)
	}
	return v, nil
}

func (p *serveProc) memory() (memoryResult, error) {
	m, err := p.metrics()
	if err != nil {
		return memoryResult{}, err
	}
	return memoryResult{HeapMB: m["go_memstats_heap_alloc_bytes"] / (1 << 20), RSSMB: m["process_resident_memory_bytes"] / (1 << 20)}, nil
}

// metrics sums each unlabelled-or-labelled series of /metrics by name.
func (p *serveProc) metrics() (map[string]float64, error) {
	resp, err := http.Get(p.base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return nil, fmt.Errorf("GET /metrics: status %d: %s", resp.StatusCode, b)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name = name[:i]
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			continue
		}
		out[name] += v
	}
	return out, sc.Err()
}

func (p *serveProc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *serveProc) logTail() string {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
