package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/synth"
)

type crawlFlags struct {
	n, hosts, concurrency, perHost, batch, flush int
	seed                                         int64
	db                                           string
	index                                        bool
}

// runCrawl measures the crawler against a synthetic fleet: n distinct
// cards from internal/synth served over several loopback addresses with
// ETags, crawled into a real catalog.
func runCrawl(args []string) error {
	var f crawlFlags
	fs := flag.NewFlagSet("crawl", flag.ContinueOnError)
	fs.IntVar(&f.n, "n", 10_000, "agents in the fleet")
	fs.IntVar(&f.hosts, "hosts", 8, "loopback addresses serving the fleet (127.0.0.2, 127.0.0.3, …)")
	fs.IntVar(&f.concurrency, "concurrency", 32, "crawler concurrency, also used by the bare-client ceiling")
	fs.IntVar(&f.perHost, "per-host", 4, "crawler per-host cap")
	fs.IntVar(&f.batch, "batch", 500, "agents per claim")
	fs.IntVar(&f.flush, "flush", 200, "outcomes per RecordFetches transaction")
	fs.Int64Var(&f.seed, "seed", 1, "generator seed")
	fs.StringVar(&f.db, "db", "", "catalog DSN (default: a fresh SQLite file in a temp dir)")
	fs.BoolVar(&f.index, "index", true, "build the search index before crawling and keep it live, as serve does")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.hosts < 1 || f.hosts > 250 || f.n < 1 {
		return errors.New("need 1 <= -hosts <= 250 and -n >= 1")
	}
	ctx := context.Background()

	fmt.Printf("fleet: %d cards over %d loopback hosts; concurrency %d, per-host %d, %d CPUs\n",
		f.n, f.hosts, f.concurrency, f.perHost, runtime.NumCPU())
	fl, err := startFleet(f.seed, f.n, f.hosts)
	if err != nil {
		return err
	}
	defer fl.close()

	// Ceiling: a bare net/http client, same URLs, same concurrency.
	ceiling, err := bareCrawl(fl.urls, f.concurrency, f.perHost)
	if err != nil {
		return err
	}
	fmt.Printf("ceiling (bare net/http GET + read body): %.0f cards/s\n", ceiling)

	fetchOnly, err := noStoreCrawl(ctx, fl.urls, f)
	if err != nil {
		return err
	}
	fmt.Printf("crawler fetch+parse, no store: %.0f cards/s (%.0f%% of the ceiling)\n", fetchOnly, 100*fetchOnly/ceiling)

	dsn, cleanup, err := benchDSN(catalogFlags{db: f.db, pgSchema: "registry_bench_crawl"})
	if err != nil {
		return err
	}
	defer cleanup()
	store, err := catalog.Open(ctx, catalog.Config{DSN: dsn, Logger: discardLogger()})
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	// Register every agent with a placeholder card, so that the first
	// crawl stores a new version of each (the full fetch+parse+store path).
	if err := seedPlaceholders(ctx, store, fl.urls); err != nil {
		return err
	}
	// serve builds the search index at start and keeps it current on every
	// write: the crawl pays for that too, so it is measured with it live.
	if f.index {
		if err := store.WarmIndex(ctx); err != nil {
			return err
		}
	}

	cs := &countingStore{Store: store}
	var offset atomic.Int64
	offset.Store(int64(time.Minute))
	client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	defer client.CloseIdleConnections()
	cr := crawler.New(crawler.Config{
		Concurrency: f.concurrency, PerHost: f.perHost, BatchSize: f.batch, FlushSize: f.flush,
		PollInterval: 20 * time.Millisecond, Lease: 10 * time.Minute,
		Now: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) },
	}, cs, crawler.NewFetcher(client, 0), discardLogger())

	pass := func(name string, want int64) (float64, error) {
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		before := cs.snapshot()
		cpu0 := processCPU()
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- cr.Run(runCtx) }()
		for cs.recorded.Load()-before.recorded < want {
			select {
			case err := <-done:
				return 0, fmt.Errorf("%s: crawler stopped: %v", name, err)
			case <-time.After(5 * time.Millisecond):
			}
			if time.Since(start) > 10*time.Minute {
				return 0, fmt.Errorf("%s: only %d of %d recorded", name, cs.recorded.Load()-before.recorded, want)
			}
		}
		elapsed := time.Since(start)
		cancel()
		if err := <-done; err != nil {
			return 0, err
		}
		cpu := processCPU() - cpu0
		after := cs.snapshot()
		rate := float64(want) / elapsed.Seconds()
		fmt.Printf("%s: %d checks in %v = %.0f cards/s (200: %d, 304: %d, failed: %d, new versions: %d, transactions: %d)\n",
			name, want, elapsed.Round(time.Millisecond), rate, after.ok200-before.ok200, after.notModified-before.notModified,
			after.failed-before.failed, after.newVersions-before.newVersions, after.txs-before.txs)
		checks := float64(after.recorded - before.recorded)
		fmt.Printf("  store only: %.0f µs CPU and %.0f µs wall per check in RecordFetches\n",
			float64(after.storeCPU-before.storeCPU)/1e3/checks, float64(after.storeWall-before.storeWall)/1e3/checks)
		// The whole process (fleet, crawler, catalog, index): unlike the
		// wall clock, not inflated by other processes on the machine.
		fmt.Printf("  process: %.0f µs CPU per check (fleet server included)\n", float64(cpu)/1e3/checks)
		if after.failed != before.failed {
			return rate, fmt.Errorf("%s: %d checks failed (first: %s)", name, after.failed-before.failed, cs.firstFailure())
		}
		return rate, nil
	}

	first, err := pass("first crawl (fetch+parse+store)", int64(f.n))
	if err != nil {
		return err
	}
	offset.Add(int64(25 * time.Hour)) // past every scheduled check
	reval, err := pass("revalidation (all 304)", int64(f.n))
	if err != nil {
		return err
	}
	rss := peakRSS()
	fmt.Println()
	index := "search index live"
	if !f.index {
		index = "no search index"
	}
	fmt.Printf("first crawl      %7.0f cards/s  (target >= 2500 with the index live)  %s  [%s]\n", first, verdict(first >= 2500), index)
	fmt.Printf("  vs fetch+parse %7.0f%%         (the crawler's own rate without storing; the rest is the catalog's cost)\n", 100*first/fetchOnly)
	fmt.Printf("  vs bare client %7.0f%%         (no reachable ceiling: fetch+parse alone is %.0f%% of it)\n", 100*first/ceiling, 100*fetchOnly/ceiling)
	fmt.Printf("revalidation     %7.0f cards/s  (target >= 3000)  %s\n", reval, verdict(reval >= 3000))
	fmt.Printf("peak RSS         %7.0f MB       (target < 300)    %s  (fleet server included: same process)\n",
		float64(rss)/(1<<20), verdict(rss < 300<<20))
	return nil
}

// benchActor is who the catalog records as making the benchmarks' writes.
var benchActor = catalog.System("registry-bench")

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

type fleet struct {
	urls    []string
	servers []*http.Server
}

func (fl *fleet) close() {
	for _, s := range fl.servers {
		s.Close()
	}
}

// startFleet serves card i at
// http://127.0.0.(2+i%hosts):PORT/agents/i/.well-known/agent-card.json,
// with a strong ETag and If-None-Match support (RFC 9110 §13.1.2).
func startFleet(seed int64, n, hosts int) (*fleet, error) {
	gen := synth.New(seed)
	cards := make([][]byte, n)
	etags := make([]string, n)
	var wg sync.WaitGroup
	workers := runtime.NumCPU()
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				cards[i] = gen.Card(i)
				h := fnv.New64a()
				h.Write(cards[i])
				etags[i] = fmt.Sprintf(`"%016x"`, h.Sum64())
			}
		})
	}
	wg.Wait()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/agents/")
		idx, path, _ := strings.Cut(rest, "/")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil || i < 0 || i >= n || "/"+path != crawler.WellKnownCardPath {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", etags[i])
		w.Header().Set("Cache-Control", "max-age=3600")
		if r.Header.Get("If-None-Match") == etags[i] {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(cards[i])))
		w.Write(cards[i])
	})
	fl := &fleet{}
	bases := make([]string, hosts)
	for h := range hosts {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", 2+h))
		if err != nil {
			fl.close()
			return nil, fmt.Errorf("fleet host %d: %w", h, err)
		}
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		fl.servers = append(fl.servers, srv)
		bases[h] = "http://" + ln.Addr().String()
	}
	fl.urls = make([]string, n)
	for i := range n {
		fl.urls[i] = fmt.Sprintf("%s/agents/%d%s", bases[i%hosts], i, crawler.WellKnownCardPath)
	}
	return fl, nil
}

// bareCrawl fetches every URL once with a plain client and returns cards/s.
func bareCrawl(urls []string, concurrency, perHost int) (float64, error) {
	tr := &http.Transport{MaxIdleConns: concurrency * 2, MaxIdleConnsPerHost: max(perHost, concurrency)}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(urls) {
					return
				}
				resp, err := client.Get(urls[i])
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					once.Do(func() { firstErr = fmt.Errorf("bare client: %s: %w", urls[i], err) })
				}
			}
		})
	}
	wg.Wait()
	return float64(len(urls)) / time.Since(start).Seconds(), firstErr
}

const placeholderCard = `{"name":"placeholder %d","description":"registered, not yet crawled","version":"0",
"supportedInterfaces":[{"url":"https://placeholder.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`

func seedPlaceholders(ctx context.Context, store *catalog.Store, urls []string) error {
	const batch = 500
	now := time.Now()
	for start := 0; start < len(urls); start += batch {
		ins := make([]catalog.UpsertInput, 0, batch)
		for i := start; i < min(start+batch, len(urls)); i++ {
			c, err := card.Parse(fmt.Appendf(nil, placeholderCard, i), card.Limits{})
			if err != nil {
				return err
			}
			ins = append(ins, catalog.UpsertInput{CardURL: urls[i], Card: c, Source: catalog.SourceURL, ReceivedAt: now})
		}
		if _, err := store.UpsertBatch(ctx, benchActor, ins); err != nil {
			return fmt.Errorf("registering placeholders: %w", err)
		}
	}
	return nil
}

// countingStore counts what the crawler records.
type countingStore struct {
	*catalog.Store
	recorded, ok200, notModified, failed, newVersions, txs atomic.Int64
	// storeCPU and storeWall sum the nanoseconds spent in RecordFetches:
	// CPU of the calling thread (the call is pinned to it, and SQLite's
	// cgo calls run on it), and elapsed time.
	storeCPU, storeWall atomic.Int64
	failMu              sync.Mutex
	failure             string
}

type counts struct {
	recorded, ok200, notModified, failed, newVersions, txs int64
	storeCPU, storeWall                                    int64
}

func (s *countingStore) snapshot() counts {
	return counts{s.recorded.Load(), s.ok200.Load(), s.notModified.Load(), s.failed.Load(), s.newVersions.Load(), s.txs.Load(),
		s.storeCPU.Load(), s.storeWall.Load()}
}

// threadCPU is the CPU time of the calling OS thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is the CPU time of the whole process, every thread.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rusageThread is Linux's RUSAGE_THREAD (getrusage(2)).
const rusageThread = 1

func (s *countingStore) firstFailure() string {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	return s.failure
}

func (s *countingStore) RecordFetches(ctx context.Context, actor catalog.Actor, outs []catalog.FetchOutcome) ([]catalog.UpsertResult, error) {
	runtime.LockOSThread()
	cpu, start := threadCPU(), time.Now()
	res, err := s.Store.RecordFetches(ctx, actor, outs)
	s.storeCPU.Add(int64(threadCPU() - cpu))
	s.storeWall.Add(int64(time.Since(start)))
	runtime.UnlockOSThread()
	if err != nil {
		return res, err
	}
	s.txs.Add(1)
	for i, o := range outs {
		switch {
		case o.Class != "":
			s.failed.Add(1)
			s.failMu.Lock()
			if s.failure == "" {
				s.failure = o.URL + ": " + o.Class + ": " + o.Message
			}
			s.failMu.Unlock()
		case o.NotModified:
			s.notModified.Add(1)
		default:
			s.ok200.Add(1)
		}
		if i < len(res) && res[i].NewVersion {
			s.newVersions.Add(1)
		}
	}
	s.recorded.Add(int64(len(outs)))
	return res, nil
}

// peakRSS reads the process's high-water resident set (VmHWM).
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(data) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(rest)), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// memQueue is a CrawlStore without a database: every URL due once.
type memQueue struct {
	mu      sync.Mutex
	targets []catalog.CrawlTarget
	done    atomic.Int64
	failed  atomic.Int64
}

func (q *memQueue) ClaimDue(_ context.Context, _ time.Time, limit int, _ string, _ time.Duration) ([]catalog.CrawlTarget, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(limit, len(q.targets))
	out := q.targets[:n:n]
	q.targets = q.targets[n:]
	return out, nil
}

func (q *memQueue) RecordFetches(_ context.Context, _ catalog.Actor, outs []catalog.FetchOutcome) ([]catalog.UpsertResult, error) {
	for _, o := range outs {
		if o.Class != "" {
			q.failed.Add(1)
		}
	}
	q.done.Add(int64(len(outs)))
	return make([]catalog.UpsertResult, len(outs)), nil
}

func (q *memQueue) CrawlTarget(context.Context, string) (catalog.CrawlTarget, error) {
	return catalog.CrawlTarget{}, catalog.ErrNotFound
}

// noStoreCrawl runs the real scheduler, fetcher and parser with a store
// that does nothing, to separate the crawler's cost from the catalog's.
func noStoreCrawl(ctx context.Context, urls []string, f crawlFlags) (float64, error) {
	q := &memQueue{}
	for i, u := range urls {
		q.targets = append(q.targets, catalog.CrawlTarget{AgentID: strconv.Itoa(i), CardURL: u})
	}
	client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	defer client.CloseIdleConnections()
	cr := crawler.New(crawler.Config{Concurrency: f.concurrency, PerHost: f.perHost, BatchSize: f.batch, FlushSize: f.flush,
		PollInterval: 20 * time.Millisecond}, q, crawler.NewFetcher(client, 0), discardLogger())
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- cr.Run(runCtx) }()
	for q.done.Load() < int64(len(urls)) {
		time.Sleep(2 * time.Millisecond)
	}
	elapsed := time.Since(start)
	cancel()
	<-done
	if n := q.failed.Load(); n > 0 {
		return 0, fmt.Errorf("no-store crawl: %d checks failed", n)
	}
	return float64(len(urls)) / elapsed.Seconds(), nil
}
