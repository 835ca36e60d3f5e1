package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2aregistry/registry/internal/a2aagent"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/embeddings/embeddingstest"
	"github.com/a2aregistry/registry/internal/mcpserver"
	"github.com/a2aregistry/registry/internal/synth"
	"github.com/a2aregistry/registry/internal/verify"
)

// Request kinds of the open-loop client.
const (
	// kindNL is a question of 3 to 10 words through the JSON API, as the
	// console and API users send it (the default page size).
	kindNL = "nl"
	// kindFilter is a facet or filter search through the JSON API (the
	// catalog benchmark's facet-only, text + 2 facets and mode classes).
	kindFilter = "filter"
	// kindAPI, kindMCP and kindA2A ask the same question through the JSON
	// API, MCP's search_agents and the A2A agent's SendMessage, with the
	// A2A agent's page size (10), so their difference is what each door
	// adds to one search.
	kindAPI = "api"
	kindMCP = "mcp"
	kindA2A = "a2a"
	// kindFloor asks /healthz, which does no work: the latency any
	// request sees at this rate from the machine (waking idle CPUs, the
	// loopback, both processes' schedulers), which the other kinds'
	// figures include. Only when asked for: it is not a door.
	kindFloor = "floor"
)

// allKinds are the kinds sent by default; knownKinds those -kinds takes.
var (
	allKinds   = []string{kindNL, kindFilter, kindAPI, kindMCP, kindA2A}
	knownKinds = append(slices.Clone(allKinds), kindFloor)
)

type openFlags struct {
	n, hosts, concurrency, perHost, rounds int
	embeddings                             int
	seed                                   int64
	db, pgSchema, registry, out, kinds     string
	cpuprofile                             string
	phases                                 string
	rate, change                           float64
	duration, warmup, interval             time.Duration
	verifierWait                           time.Duration
	reuse, prepare                         bool
}

// runOpenLoop measures search latency as a population of users sees it:
// requests arrive at a fixed rate from a schedule that does not wait for
// answers, and each latency runs from the request's scheduled time, so a
// slow answer delays no later request and a stall is counted in full
// (no coordinated omission). The registry is the real `registry serve`
// with its crawler and verifier on over a catalog of n agents on a
// loopback fleet. In the idle phase every agent's crawl is leased to this
// benchmark, so the crawler has nothing due; in the crawling phase the
// leases are released and every agent is due each -interval, so the
// crawler stores new versions flat out. An idle phase begins only once the
// verifier is quiet too (waitVerifier): a fresh catalog's agents are all
// never verified, and serve's first pass over them (minutes at 100,000
// agents) is background work as heavy as a crawl. Phases alternate -rounds times in
// one serve process; each round's crawling/idle ratios and door
// differences are taken within the round.
func runOpenLoop(args []string) error {
	var f openFlags
	fs := flag.NewFlagSet("openloop", flag.ContinueOnError)
	fs.IntVar(&f.n, "n", 100_000, "agents in the catalog and the fleet")
	fs.IntVar(&f.hosts, "hosts", 8, "loopback addresses serving the fleet")
	fs.IntVar(&f.concurrency, "concurrency", 32, "serve --crawl-concurrency")
	fs.IntVar(&f.perHost, "per-host", 8, "serve --crawl-per-host")
	fs.IntVar(&f.rounds, "rounds", 3, "rounds of the phases in one serve process")
	fs.Int64Var(&f.seed, "seed", 1, "generator seed")
	fs.StringVar(&f.db, "db", "", "catalog DSN (default: a fresh SQLite file in a temp dir)")
	fs.StringVar(&f.pgSchema, "pg-schema", "registry_bench_openloop", "PostgreSQL schema to (re)create for the run")
	fs.StringVar(&f.registry, "registry", "", "registry binary to run (default: go build ./cmd/registry into a temp dir)")
	fs.StringVar(&f.kinds, "kinds", strings.Join(allKinds, ","), "request kinds, sent in turn: nl, filter, api, mcp, a2a, and floor (/healthz, the machine's latency for a request that does no work)")
	fs.StringVar(&f.phases, "phases", "idle,crawling", "phases of each round: idle, crawling")
	fs.Float64Var(&f.rate, "rate", 10, "requests per second, over all kinds")
	fs.Float64Var(&f.change, "change", 1, "share of fetches that return a changed card (0..1)")
	fs.DurationVar(&f.duration, "duration", 60*time.Second, "length of each phase")
	fs.DurationVar(&f.warmup, "warmup", 5*time.Second, "requests sent and not counted before each phase")
	fs.DurationVar(&f.interval, "interval", time.Second, "serve --crawl-min-interval and --crawl-max-interval while crawling")
	fs.DurationVar(&f.verifierWait, "verifier-wait", 2*time.Hour, "longest wait for the verifier to be quiet before an idle phase (0: do not wait, and say so)")
	fs.StringVar(&f.out, "json", "", "also write the figures as JSON to this file")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of serve over the whole run to this file (REGISTRY_CPUPROFILE)")
	fs.BoolVar(&f.prepare, "prepare", false, "only load the catalog into -db and store the verifier's first pass over it in this process (serve's verifier with --verify-fetch=false), then exit")
	fs.IntVar(&f.embeddings, "embeddings", 0, "with a dimension (e.g. 384): run serve with the semantic layer on and off in turn, its vectors from a fast stand-in embeddings API in this process (embeddingstest's hashed projection), and ask questions never repeated within a serve process (0: the semantic layer off)")
	fs.BoolVar(&f.reuse, "reuse", false, "run on the catalog -prepare left in -db (idle phases only: its cards' fleet is gone); with -prepare, finish an interrupted first pass without loading again")
	if err := fs.Parse(args); err != nil {
		return err
	}
	kinds, err := parseKinds(f.kinds)
	if err != nil {
		return err
	}
	phases := strings.Split(f.phases, ",")
	for _, p := range phases {
		if p != "idle" && p != "crawling" {
			return fmt.Errorf("unknown phase %q (idle, crawling)", p)
		}
	}
	if f.n < 1 || f.hosts < 1 || f.hosts > 250 || f.rate <= 0 || f.rounds < 1 || f.change < 0 || f.change > 1 || f.embeddings < 0 || f.embeddings > 8192 {
		return errors.New("need -n >= 1, 1 <= -hosts <= 250, -rate > 0, -rounds >= 1, 0 <= -change <= 1 and 0 <= -embeddings <= 8192")
	}
	switch {
	case (f.reuse || f.prepare) && f.db == "":
		return errors.New("-reuse and -prepare need -db")
	case f.prepare && f.embeddings > 0:
		return errors.New("-prepare stores no vectors: run -embeddings on the catalog it leaves (-reuse)")
	case f.reuse && slices.Contains(phases, "crawling"):
		return errors.New("-reuse runs idle phases only: the fleet that served the catalog's cards is gone")
	}
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "registry-bench-openloop-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var bin string
	if !f.prepare {
		if bin, err = registryBinary(f.registry, tmp); err != nil {
			return err
		}
	}
	fl, err := startChangingFleet(f.seed, f.n, f.hosts, f.change)
	if err != nil {
		return err
	}
	defer fl.close()
	dsn := f.db
	if dsn == "" {
		dsn = "sqlite:" + filepath.Join(tmp, "catalog.db")
	} else if dsn, _, err = benchDSN(catalogFlags{db: f.db, pgSchema: f.pgSchema, reuse: f.reuse}); err != nil {
		return err
	}
	gen := synth.New(f.seed)
	loadStart := time.Now()
	if !f.reuse {
		if err := loadFleetCatalog(ctx, dsn, gen, fl.urls); err != nil {
			return err
		}
	}
	loaded := fmt.Sprintf("loaded in %.1fs", time.Since(loadStart).Seconds())
	if f.reuse {
		loaded = "kept from an earlier -prepare"
	}
	fmt.Printf("catalog: %d agents %s (%s); %d CPUs; %.0f requests/s of %s; phases of %v\n",
		f.n, loaded, backendOf(dsn), runtime.NumCPU(), f.rate, strings.Join(kinds, ","), f.duration)
	if f.prepare {
		return verifyCatalog(ctx, dsn)
	}

	// The benchmark's own handle on the catalog holds and releases the
	// crawl leases; it never builds a search index.
	store, err := catalog.Open(ctx, catalog.Config{DSN: dsn, Logger: discardLogger()})
	if err != nil {
		return err
	}
	defer store.Close()
	if f.reuse {
		if have, err := store.Count(ctx); err != nil || have != f.n {
			return fmt.Errorf("-reuse: the catalog holds %d agents, not -n %d (%v)", have, f.n, err)
		}
		// A reused catalog's agents may be leased to an earlier run.
		if _, err := store.ReleaseLeases(ctx, holdOwner, ""); err != nil {
			return err
		}
	}
	if err := holdCrawl(ctx, store, f.n, nil); err != nil {
		return err
	}

	rep := openReport{Agents: f.n, Backend: backendOf(dsn), CPUs: runtime.NumCPU(), Rate: f.rate, Kinds: kinds, Duration: f.duration.Seconds(),
		Embeddings: f.embeddings}
	semantic := f.embeddings > 0
	var emb *embeddingstest.Server
	if semantic {
		emb = embeddingstest.NewProjection(f.embeddings)
		defer emb.Close()
		fmt.Printf("semantic layer: serve with and without it in turn, vectors of %d dimensions from %s (loopback, in this process); "+
			"questions never repeated within a serve process, so each nl search embeds its text (api, mcp and a2a ask the same question after it, from serve's cache)\n",
			f.embeddings, emb.ModelName())
	}
	iv := f.interval.String()
	var env []string
	if f.cpuprofile != "" {
		env = append(env, "REGISTRY_CPUPROFILE="+f.cpuprofile)
	}
	serveArgs := []string{"--db", dsn, "--allow-networks", "127.0.0.0/8",
		"--verify-fetch=false", "--import-examples=false", "--log-level", "warn", "--crawl=true",
		"--crawl-min-interval", iv, "--crawl-max-interval", iv,
		"--crawl-concurrency", strconv.Itoa(f.concurrency), "--crawl-per-host", strconv.Itoa(f.perHost)}
	starts := 0
	launch := func(mode string, restart bool) (*serveProc, serveStart, error) {
		a := serveArgs
		if mode == modeHybrid {
			a = append(slices.Clone(serveArgs), semanticArgs(emb, f.embeddings)...)
		}
		starts++
		name := "openloop"
		if starts > 1 {
			name += strconv.Itoa(starts)
		}
		st := serveStart{Mode: mode, Restart: restart}
		var texts0 int64
		if emb != nil {
			texts0 = emb.Texts.Load()
		}
		srv, err := startServe(bin, tmp, name, env, a)
		if err != nil {
			return nil, st, err
		}
		if st.startResult, err = srv.waitFirstSearch(30 * time.Minute); err != nil {
			srv.stop()
			return nil, st, err
		}
		st.Mem, _ = srv.memory()
		if mode == modeHybrid {
			if st.VectorsAt, st.VectorBytes, st.Embedded, err = waitEmbedded(srv, emb, f.n, max(f.verifierWait, 30*time.Minute), texts0); err != nil {
				srv.stop()
				return nil, st, err
			}
			st.VectorMem, _ = srv.memory()
		}
		printServeStart(st, f.n)
		rep.Starts = append(rep.Starts, st)
		return srv, st, nil
	}
	mode := modesOf(1, semantic)[0]
	srv, first, err := launch(mode, false)
	if err != nil {
		return err
	}
	defer func() { srv.stop() }()
	rep.Start, rep.StartMem = first.startResult, first.Mem
	if slices.Contains(phases, "idle") && f.verifierWait > 0 {
		// The first pass over never-verified agents is a start-up cost
		// of its own, reported as such rather than inside "idle".
		if rep.FirstPass, err = waitVerifier(ctx, store, srv, f.verifierWait); err != nil {
			return err
		}
		rep.FirstPass.AfterStart = time.Since(srv.started).Seconds()
		fmt.Printf("verifier quiet   %.0fs after start: first pass stored %.0f reports in %.0fs (%.0f/s)\n",
			rep.FirstPass.AfterStart, rep.FirstPass.Verifications, rep.FirstPass.Seconds, rep.FirstPass.Verifications/max(rep.FirstPass.Seconds, 1e-9))
		if rep.VerifiedMem, err = srv.memory(); err == nil {
			fmt.Printf("after first pass heap %4.0f MB  RSS %4.0f MB\n", rep.VerifiedMem.HeapMB, rep.VerifiedMem.RSSMB)
		}
	}
	if semantic {
		// A restart over the catalog as the first start left it, every
		// vector stored: the restart a deployment makes.
		srv.stop()
		if srv, _, err = launch(modeHybrid, true); err != nil {
			return err
		}
	}

	crawling := false
	for round := 1; round <= f.rounds; round++ {
		phaseSeq := (round - 1) * len(phases)
		for _, m := range modesOf(round, semantic) {
			if m != mode {
				if crawling {
					if err := holdCrawl(ctx, store, f.n, srv); err != nil {
						return err
					}
					crawling = false
				}
				srv.stop()
				if srv, _, err = launch(m, false); err != nil {
					return err
				}
				mode = m
				if f.verifierWait > 0 && slices.Contains(phases, "idle") {
					if _, err := waitVerifier(ctx, store, srv, f.verifierWait); err != nil {
						return err
					}
				}
			}
			for pi, phase := range phases {
				switch {
				case phase == "crawling" && !crawling:
					if _, err := store.ReleaseLeases(ctx, holdOwner, ""); err != nil {
						return err
					}
					crawling = true
					// Let the crawler reach its pace.
					time.Sleep(5 * time.Second)
				case phase == "idle" && crawling:
					if err := holdCrawl(ctx, store, f.n, srv); err != nil {
						return err
					}
					crawling = false
					// The crawl's last versions are still being verified,
					// and embedded.
					if f.verifierWait > 0 {
						if _, err := waitVerifier(ctx, store, srv, f.verifierWait); err != nil {
							return err
						}
						if mode == modeHybrid {
							if _, _, _, err := waitEmbedded(srv, emb, f.n, f.verifierWait, emb.Texts.Load()); err != nil {
								return err
							}
						}
					}
				}
				fresh := -1
				if semantic {
					fresh = (phaseSeq + pi) * freshTurns(f, len(kinds))
				}
				ph, err := runPhase(srv, f, kinds, phase, round, fresh)
				if err != nil {
					return fmt.Errorf("round %d, %s: %w", round, groupKey(phase, mode), err)
				}
				ph.Mode = mode
				rep.Phases = append(rep.Phases, ph)
				printPhase(ph)
			}
		}
	}
	rep.summarise(kinds, phases)
	rep.print(kinds, phases)
	if f.out != "" {
		return writeJSON(f.out, rep)
	}
	return nil
}

func parseKinds(s string) ([]string, error) {
	var out []string
	for k := range strings.SplitSeq(s, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(knownKinds, k) {
			return nil, fmt.Errorf("unknown request kind %q (%s)", k, strings.Join(knownKinds, ", "))
		}
		out = append(out, k)
	}
	return out, nil
}

// holdOwner is the lease owner under which the benchmark keeps every
// agent's crawl from the crawler; serve's own owners are named after its
// host or instance, so it never releases these.
const holdOwner = "registry-bench-hold/"

// holdCrawl leases every agent's crawl to holdOwner, so the crawler finds
// nothing due. While serve crawls, agents come free only as their checks
// finish; it then waits until serve stores no more versions.
func holdCrawl(ctx context.Context, store *catalog.Store, n int, srv *serveProc) error {
	held := 0
	deadline := time.Now().Add(5 * time.Minute)
	for held < n {
		if time.Now().After(deadline) {
			return fmt.Errorf("holding the crawl: %d of %d agents held after 5 minutes", held, n)
		}
		got, err := store.ClaimDue(ctx, time.Now(), 5000, holdOwner, 48*time.Hour)
		if err != nil {
			return err
		}
		held += len(got)
		if len(got) == 0 {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if srv == nil {
		return nil
	}
	last := -1.0
	for range 60 {
		v, err := versionsStored(srv)
		if err != nil {
			return err
		}
		if v == last {
			return nil
		}
		last = v
		time.Sleep(time.Second)
	}
	return errors.New("serve kept storing versions after every agent's crawl was held")
}

// verifyCatalog stores the verifier's first pass over a freshly loaded
// catalog in this process, with what serve's verifier runs with under
// --verify-fetch=false (the catalog's trusted keys and agent names, no
// fetches), so that a catalog of a million agents can be verified before
// the sitting that measures serve on it (-reuse): serve's own pass takes
// most of an hour at that size on 2 shared cores.
func verifyCatalog(ctx context.Context, dsn string) error {
	store, err := catalog.Open(ctx, catalog.Config{DSN: dsn, Logger: discardLogger()})
	if err != nil {
		return err
	}
	defer store.Close()
	v := verify.New(verify.Options{Keys: verify.CatalogKeys{Store: store}, Names: verify.CatalogNames{Store: store}})
	r := verify.NewRunner(v, store, verify.RunnerOptions{CardLimits: card.DefaultLimits(), Batch: 200, Workers: 2 * runtime.NumCPU()})
	start, total, last := time.Now(), 0, time.Now()
	for {
		n, err := r.RunOnce(ctx)
		total += n
		if err != nil {
			return fmt.Errorf("verifying the catalog: %w", err)
		}
		if n == 0 {
			break
		}
		if time.Since(last) >= time.Minute {
			fmt.Printf("  verified %d in %.0fs\n", total, time.Since(start).Seconds())
			last = time.Now()
		}
	}
	fmt.Printf("verifier's first pass: %d reports in %.0fs (%.0f/s), load %.1f\n", total, time.Since(start).Seconds(),
		float64(total)/time.Since(start).Seconds(), loadAverage())
	return nil
}

// verifierPass is how long the verifier took to become quiet.
type verifierPass struct {
	// Seconds is the wait, from when it began; AfterStart is from serve's
	// start.
	Seconds    float64 `json:"seconds"`
	AfterStart float64 `json:"after_start_s,omitempty"`
	// Verifications is the reports serve stored meanwhile.
	Verifications float64 `json:"verifications"`
}

// waitVerifier waits until serve's verifier is quiet: no agent's current
// version is due a report (catalog.DueVerifications, the runner's own
// query) and serve stored no report over the last poll, so that an idle
// phase measures searches alone. A fresh catalog is all never verified:
// at 300,000 agents the first pass takes minutes.
func waitVerifier(ctx context.Context, store *catalog.Store, srv *serveProc, limit time.Duration) (verifierPass, error) {
	start := time.Now()
	_, c0, err := backgroundWork(srv)
	if err != nil {
		return verifierPass{}, err
	}
	last, lastLog := c0, start
	for {
		time.Sleep(2 * time.Second)
		_, c, err := backgroundWork(srv)
		if err != nil {
			return verifierPass{}, err
		}
		due, err := store.DueVerifications(ctx, time.Now(), 1)
		if err != nil {
			return verifierPass{}, err
		}
		if len(due) == 0 && c == last {
			return verifierPass{Seconds: time.Since(start).Seconds(), Verifications: c - c0}, nil
		}
		if time.Since(start) > limit {
			return verifierPass{}, fmt.Errorf("the verifier was still busy after %v (%.0f reports stored); raise -verifier-wait or set it to 0", limit, c-c0)
		}
		if time.Since(lastLog) >= time.Minute {
			fmt.Printf("  waiting for the verifier: %.0f reports stored in %.0fs\n", c-c0, time.Since(start).Seconds())
			lastLog = time.Now()
		}
		last = c
	}
}

// versionsStored reads serve's count of stored card versions: 0 before
// the first, when the counter is not exported yet.
// /metrics answers 500 when one of its collectors times out (the crawl
// queue's count, on a loaded machine), so a failed read is retried.
func versionsStored(srv *serveProc) (float64, error) {
	v, _, err := backgroundWork(srv)
	return v, err
}

// backgroundWork reads serve's counts of stored card versions and of
// verifications made.
func backgroundWork(srv *serveProc) (versions, verifications float64, err error) {
	for range 10 {
		var m map[string]float64
		if m, err = srv.metrics(); err == nil {
			return m["registry_card_versions_stored_total"], m["registry_verifications_total"], nil
		}
		time.Sleep(time.Second)
	}
	return 0, 0, err
}

// phaseResult is one phase of one round.
type phaseResult struct {
	Round          int     `json:"round"`
	Phase          string  `json:"phase"`
	Mode           string  `json:"mode,omitempty"`
	LoadBefore     float64 `json:"load_before"`
	LoadAfter      float64 `json:"load_after"`
	VersionsPerSec float64 `json:"versions_stored_per_s"`
	// VerificationsPerSec says how busy the verifier was: it works
	// through agents never verified and new versions in either phase.
	VerificationsPerSec float64                `json:"verifications_per_s"`
	Mem                 memoryResult           `json:"memory_after"`
	Kinds               map[string]openLatency `json:"kinds"`
}

// openLatency is one kind's latency in a phase, in milliseconds from the
// scheduled send.
type openLatency struct {
	N      int     `json:"n"`
	Errors int     `json:"errors"`
	P50    float64 `json:"p50_ms"`
	P90    float64 `json:"p90_ms"`
	P99    float64 `json:"p99_ms"`
	Max    float64 `json:"max_ms"`
	// Late is how late the client sent its slowest request against the
	// schedule: a figure near the p99 means the client, not serve, was
	// slow (the machine is shared).
	Late float64 `json:"late_max_ms"`
	// HandlerP50 and HandlerP99 are the JSON API's own time in its
	// search handler (Server-Timing), for the kinds that go through it:
	// the rest is spent queueing for the CPU, on the network and in the
	// client.
	HandlerP50 float64 `json:"handler_p50_ms,omitempty"`
	HandlerP99 float64 `json:"handler_p99_ms,omitempty"`
	// EmbedP50 and EmbedP99 are the handler's time embedding the
	// search's text (Server-Timing's embed: the round trip to the
	// embeddings API, or serve's cache), inside the handler's.
	EmbedP50 float64 `json:"embed_p50_ms,omitempty"`
	EmbedP99 float64 `json:"embed_p99_ms,omitempty"`
	// FirstError is the first failure's message, if any.
	FirstError string `json:"first_error,omitempty"`
}

// runPhase sends one phase's requests; fresh, when not negative, is the
// first of the fresh questions it asks (freshQuestion).
func runPhase(srv *serveProc, f openFlags, kinds []string, phase string, round, fresh int) (phaseResult, error) {
	ph := phaseResult{Round: round, Phase: phase, LoadBefore: loadAverage()}
	v0, c0, err := backgroundWork(srv)
	if err != nil {
		return ph, err
	}
	start := time.Now()
	ph.Kinds, err = openLoopProcess(srv.base, f.seed, kinds, f.rate, f.warmup, f.duration, fresh)
	if err != nil {
		return ph, err
	}
	elapsed := time.Since(start).Seconds()
	v1, c1, err := backgroundWork(srv)
	if err != nil {
		return ph, err
	}
	ph.VersionsPerSec = (v1 - v0) / elapsed
	ph.VerificationsPerSec = (c1 - c0) / elapsed
	ph.LoadAfter = loadAverage()
	for range 10 {
		if ph.Mem, err = srv.memory(); err == nil {
			break
		}
		time.Sleep(time.Second)
	}
	return ph, nil
}

func printPhase(ph phaseResult) {
	fmt.Printf("\nround %d, %s: load %.1f -> %.1f, %.0f versions stored/s, %.0f verifications/s, heap %.0f MB\n",
		ph.Round, groupKey(ph.Phase, ph.Mode), ph.LoadBefore, ph.LoadAfter, ph.VersionsPerSec, ph.VerificationsPerSec, ph.Mem.HeapMB)
	if ph.Phase == "idle" && (ph.VersionsPerSec >= 1 || ph.VerificationsPerSec >= 1) {
		fmt.Println("  not idle: serve's background work ran during this phase")
	}
	fmt.Printf("  %-7s %5s %4s %8s %8s %8s %8s %8s %17s %15s\n", "kind", "n", "err", "p50 ms", "p90 ms", "p99 ms", "max ms", "late ms", "handler p50/p99", "embed p50/p99")
	for _, k := range slices.Sorted(maps.Keys(ph.Kinds)) {
		l := ph.Kinds[k]
		fmt.Printf("  %-7s %5d %4d %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f/%8.2f %7.2f/%7.2f\n", k, l.N, l.Errors, l.P50, l.P90, l.P99, l.Max, l.Late, l.HandlerP50, l.HandlerP99, l.EmbedP50, l.EmbedP99)
		if l.FirstError != "" {
			fmt.Printf("          first error: %s\n", l.FirstError)
		}
	}
}

type openReport struct {
	Backend  string   `json:"backend"`
	Agents   int      `json:"agents"`
	CPUs     int      `json:"cpus"`
	Rate     float64  `json:"rate_per_s"`
	Kinds    []string `json:"kinds"`
	Duration float64  `json:"phase_s"`
	// Embeddings is the vectors' dimension with the semantic layer in
	// turn on and off (-embeddings); 0 when off throughout.
	Embeddings int          `json:"embeddings,omitempty"`
	Start      startResult  `json:"start"`
	StartMem   memoryResult `json:"memory_after_start"`
	// Starts lists every start of serve, the first included.
	Starts []serveStart `json:"starts"`
	// FirstPass is the wait for the verifier's first pass over the
	// never-verified catalog, before the first idle phase; zero when
	// -verifier-wait is 0.
	FirstPass   verifierPass  `json:"verifier_first_pass"`
	VerifiedMem memoryResult  `json:"memory_after_first_pass"`
	Phases      []phaseResult `json:"phases"`
	// Median is the median over rounds of each phase and kind's figures,
	// by groupKey (the phase, and serve's mode with -embeddings).
	Median map[string]map[string]openLatency `json:"median"`
	// CrawlIdleP99 is the median over rounds of each kind's p99 crawling
	// over its p99 idle in the same round (by groupKey(kind, mode)).
	CrawlIdleP99 map[string]float64 `json:"crawling_over_idle_p99,omitempty"`
	// HybridOverLexicalP99 is, by phase and kind, the median over rounds
	// of the p99 with the semantic layer on over the p99 without it in the
	// same round.
	HybridOverLexicalP99 map[string]map[string]float64 `json:"hybrid_over_lexical_p99,omitempty"`
	// DoorAddedP50 is the median over rounds of each door's p50 minus the
	// JSON API's (kind api) in the same phase, in milliseconds.
	DoorAddedP50 map[string]map[string]float64 `json:"door_added_p50_ms,omitempty"`
}

func (r *openReport) summarise(kinds, phases []string) {
	semantic := r.Embeddings > 0
	r.Median = map[string]map[string]openLatency{}
	byRound := map[int]map[string]phaseResult{}
	for _, ph := range r.Phases {
		if byRound[ph.Round] == nil {
			byRound[ph.Round] = map[string]phaseResult{}
		}
		byRound[ph.Round][groupKey(ph.Phase, ph.Mode)] = ph
	}
	for _, g := range groups(phases, semantic) {
		key := groupKey(g[0], g[1])
		r.Median[key] = map[string]openLatency{}
		for _, k := range kinds {
			var n, errs int
			var p50, p90, p99, mx, late, h50, h99, e50, e99 []float64
			for _, ph := range r.Phases {
				if groupKey(ph.Phase, ph.Mode) != key {
					continue
				}
				l := ph.Kinds[k]
				n += l.N
				errs += l.Errors
				p50, p90, p99, mx, late = append(p50, l.P50), append(p90, l.P90), append(p99, l.P99), append(mx, l.Max), append(late, l.Late)
				h50, h99, e50, e99 = append(h50, l.HandlerP50), append(h99, l.HandlerP99), append(e50, l.EmbedP50), append(e99, l.EmbedP99)
			}
			r.Median[key][k] = openLatency{N: n, Errors: errs, P50: median(p50), P90: median(p90), P99: median(p99), Max: median(mx),
				Late: median(late), HandlerP50: median(h50), HandlerP99: median(h99), EmbedP50: median(e50), EmbedP99: median(e99)}
		}
	}
	// ratio is the median over rounds of kind's p99 in group a over its
	// p99 in group b of the same round.
	ratio := func(k, a, b string) float64 {
		var rs []float64
		for _, rd := range byRound {
			if den := rd[b].Kinds[k].P99; den > 0 {
				rs = append(rs, rd[a].Kinds[k].P99/den)
			}
		}
		return median(rs)
	}
	if slices.Contains(phases, "idle") && slices.Contains(phases, "crawling") {
		r.CrawlIdleP99 = map[string]float64{}
		for _, m := range modesOf(1, semantic) {
			for _, k := range kinds {
				r.CrawlIdleP99[groupKey(k, m)] = ratio(k, groupKey("crawling", m), groupKey("idle", m))
			}
		}
	}
	if semantic {
		r.HybridOverLexicalP99 = map[string]map[string]float64{}
		for _, p := range phases {
			r.HybridOverLexicalP99[p] = map[string]float64{}
			for _, k := range kinds {
				r.HybridOverLexicalP99[p][k] = ratio(k, groupKey(p, modeHybrid), groupKey(p, modeLexical))
			}
		}
	}
	if slices.Contains(kinds, kindAPI) {
		r.DoorAddedP50 = map[string]map[string]float64{}
		for _, door := range []string{kindMCP, kindA2A} {
			if !slices.Contains(kinds, door) {
				continue
			}
			r.DoorAddedP50[door] = map[string]float64{}
			for _, g := range groups(phases, semantic) {
				key := groupKey(g[0], g[1])
				var d []float64
				for _, ph := range r.Phases {
					if groupKey(ph.Phase, ph.Mode) == key {
						d = append(d, ph.Kinds[door].P50-ph.Kinds[kindAPI].P50)
					}
				}
				r.DoorAddedP50[door][key] = median(d)
			}
		}
	}
}

func (r *openReport) print(kinds, phases []string) {
	semantic := r.Embeddings > 0
	gs := groups(phases, semantic)
	rounds := len(r.Phases) / max(1, len(gs))
	fmt.Printf("\nmedian of %d rounds, %s, %d agents, %.0f requests/s (latency from the scheduled send)\n", rounds, r.Backend, r.Agents, r.Rate)
	fmt.Printf("  start: first search %.1fs after start, heap %.0f MB, RSS %.0f MB", r.Start.FirstSearch, r.StartMem.HeapMB, r.StartMem.RSSMB)
	if r.FirstPass.AfterStart > 0 {
		fmt.Printf("; verifier quiet %.0fs after start (%.0f reports), then heap %.0f MB, RSS %.0f MB",
			r.FirstPass.AfterStart, r.FirstPass.Verifications, r.VerifiedMem.HeapMB, r.VerifiedMem.RSSMB)
	} else if slices.Contains(phases, "idle") {
		fmt.Print("; idle phases did not wait for the verifier (-verifier-wait 0)")
	}
	fmt.Println()
	if semantic {
		for _, s := range r.Starts {
			fmt.Printf("  %-8s %-8s first search %6.1fs, heap %5.0f MB", s.Mode, map[bool]string{true: "restart", false: "start"}[s.Restart], s.FirstSearch, s.Mem.HeapMB)
			if s.Mode == modeHybrid {
				fmt.Printf("; every agent with a vector %6.1fs after start (%.0f embedded), heap %5.0f MB, vectors %.0f bytes an agent",
					s.VectorsAt, s.Embedded, s.VectorMem.HeapMB, s.VectorBytes/float64(max(1, r.Agents)))
			}
			fmt.Println()
		}
	}
	fmt.Printf("  %-16s %-7s %6s %4s %8s %8s %8s %8s %8s %17s %15s\n", "phase", "kind", "n", "err", "p50 ms", "p90 ms", "p99 ms", "max ms", "late ms", "handler p50/p99", "embed p50/p99")
	for _, g := range gs {
		key := groupKey(g[0], g[1])
		for _, k := range kinds {
			l := r.Median[key][k]
			fmt.Printf("  %-16s %-7s %6d %4d %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f/%8.2f %7.2f/%7.2f\n", key, k, l.N, l.Errors, l.P50, l.P90, l.P99, l.Max, l.Late, l.HandlerP50, l.HandlerP99, l.EmbedP50, l.EmbedP99)
		}
	}
	for _, m := range modesOf(1, semantic) {
		for _, k := range kinds {
			if ratio, ok := r.CrawlIdleP99[groupKey(k, m)]; ok {
				fmt.Printf("  p99 crawling / idle, %-15s %5.2fx (median of the rounds' ratios)\n", groupKey(k, m), ratio)
			}
		}
	}
	for _, p := range phases {
		for _, k := range kinds {
			if ratio, ok := r.HybridOverLexicalP99[p][k]; ok {
				fmt.Printf("  p99 hybrid / lexical, %-8s %-7s %5.2fx (median of the rounds' ratios)\n", p, k, ratio)
			}
		}
	}
	for _, door := range []string{kindMCP, kindA2A} {
		for _, g := range gs {
			key := groupKey(g[0], g[1])
			if d, ok := r.DoorAddedP50[door][key]; ok {
				fmt.Printf("  %s p50 over the JSON API's, %-16s %+6.2f ms (target < 2 ms)  %s\n", door, key, d, verdict(d < 2))
			}
		}
	}
	if semantic {
		for _, p := range phases {
			if l, ok := r.Median[groupKey(p, modeHybrid)][kindNL]; ok {
				fmt.Printf("  natural language p99 %-8s with the semantic layer  %6.2f ms (target < 40 ms)  %s\n", p, l.P99, verdict(l.P99 < 40))
			}
		}
		return
	}
	if l, ok := r.Median["idle"][kindNL]; ok {
		fmt.Printf("  natural language p99 idle      %6.2f ms (target < 20 ms)  %s\n", l.P99, verdict(l.P99 < 20))
	}
	if l, ok := r.Median["crawling"][kindNL]; ok {
		ratio := r.CrawlIdleP99[kindNL]
		fmt.Printf("  natural language p99 crawling  %6.2f ms (target < 30 ms, <= 2x idle: %.2fx)  %s\n", l.P99, ratio,
			verdict(l.P99 < 30 && (ratio == 0 || ratio <= 2)))
	}
}

// openLoopCmd is the hidden subcommand that runs the open-loop client in
// a process of its own, as searchClientCmd does for the mixed benchmark.
const openLoopCmd = "openloop-client"

func openLoopProcess(base string, seed int64, kinds []string, rate float64, warmup, d time.Duration, fresh int) (map[string]openLatency, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, openLoopCmd, "-base", base, "-seed", strconv.FormatInt(seed, 10),
		"-kinds", strings.Join(kinds, ","), "-rate", strconv.FormatFloat(rate, 'f', -1, 64),
		"-warmup", warmup.String(), "-duration", d.String(), "-fresh", strconv.Itoa(fresh))
	cmd.Env = append(os.Environ(), searchClientEnv+"=1")
	dieWithParent(cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("open-loop client: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var r map[string]openLatency
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("open-loop client: %w", err)
	}
	return r, nil
}

func runOpenLoopClient(args []string) error {
	fs := flag.NewFlagSet(openLoopCmd, flag.ContinueOnError)
	base := fs.String("base", "", "serve's base URL")
	seed := fs.Int64("seed", 1, "generator seed")
	kindList := fs.String("kinds", strings.Join(allKinds, ","), "request kinds")
	rate := fs.Float64("rate", 10, "requests per second")
	warmup := fs.Duration("warmup", 5*time.Second, "uncounted requests first")
	d := fs.Duration("duration", time.Minute, "how long to send counted requests")
	fresh := fs.Int("fresh", -1, "ask fresh questions (freshQuestion) from this one on; -1: synth's questions in turn")
	if err := fs.Parse(args); err != nil {
		return err
	}
	kinds, err := parseKinds(*kindList)
	if err != nil {
		return err
	}
	c, err := newOpenClient(*base, synth.New(*seed).Vocabulary())
	if err != nil {
		return err
	}
	c.fresh = *fresh
	if *warmup > 0 {
		c.run(kinds, *rate, *warmup)
	}
	return json.NewEncoder(os.Stdout).Encode(c.run(kinds, *rate, *d))
}

// openClient sends the open-loop benchmark's requests.
type openClient struct {
	base       string
	http       *http.Client
	questions  []string
	filters    []string
	mcpSession string
	// fresh, when not negative, is the next fresh question to ask
	// (freshQuestion); the turns of warmup and measurement follow on.
	fresh int
}

// question is the question of turn t of a run.
func (c *openClient) question(t int) string {
	if c.fresh < 0 {
		return c.questions[t%len(c.questions)]
	}
	return freshQuestion(c.questions, c.fresh+t)
}

func newOpenClient(base string, v synth.Vocab) (*openClient, error) {
	c := &openClient{base: base, http: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: time.Minute}}}
	for _, cl := range v.SearchClasses() {
		switch cl.Name {
		case "natural language (3-10 words)":
			for _, q := range cl.Searches {
				c.questions = append(c.questions, q.Get("q"))
			}
		case "facet-only", "text + 2 facets", "mode wildcard":
			for _, q := range cl.Searches {
				c.filters = append(c.filters, "/api/v1/agents?"+q.Encode())
			}
		}
	}
	if len(c.questions) == 0 || len(c.filters) == 0 {
		return nil, errors.New("the synthetic vocabulary has no questions or filter searches")
	}
	return c, c.initMCP()
}

// initMCP opens the MCP session every tools/call of the run goes through,
// as a model's client keeps one.
func (c *openClient) initMCP() error {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"registry-bench","version":"1"}}}`
	resp, err := c.post(c.base+mcpserver.Path, body, "")
	if err != nil {
		return fmt.Errorf("MCP initialize: %w", err)
	}
	c.mcpSession = resp.Header.Get("Mcp-Session-Id")
	if c.mcpSession == "" {
		return errors.New("MCP initialize: no Mcp-Session-Id in the answer")
	}
	if _, err := c.post(c.base+mcpserver.Path, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, c.mcpSession); err != nil {
		return fmt.Errorf("MCP initialized: %w", err)
	}
	return nil
}

// post sends a JSON body and reads the whole answer; a status other than
// 200 or 202 is an error.
func (c *openClient) post(u, body, session string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		return nil, fmt.Errorf("POST %s: status %d: %.200s", u, resp.StatusCode, b)
	}
	if bytes.Contains(b, []byte(`"isError":true`)) || bytes.Contains(b, []byte(`"error":{`)) {
		return nil, fmt.Errorf("POST %s: %.300s", u, b)
	}
	return resp, nil
}

// timing is a JSON API search's own time and, within it, its embedding's
// (Server-Timing), in milliseconds; zero when absent.
type timing struct{ handler, embed float64 }

// get reads a GET (a JSON API search, or /healthz for the floor) and
// returns its Server-Timing, zero where there is none.
func (c *openClient) get(path string) (timing, error) {
	resp, err := c.http.Get(c.base + path)
	if err != nil {
		return timing{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return timing{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return timing{}, fmt.Errorf("GET %s: status %d: %.200s", path, resp.StatusCode, b)
	}
	var t timing
	t.handler, _ = serverTiming(resp.Header.Get("Server-Timing"), "search")
	t.embed, _ = serverTiming(resp.Header.Get("Server-Timing"), "embed")
	return t, nil
}

// send makes request i of kind: the doors' kinds ask question q. It
// returns the JSON API handler's timing when the request went through it.
func (c *openClient) send(kind string, i int, q string) (timing, error) {
	switch kind {
	case kindNL:
		return c.get("/api/v1/agents?" + url.Values{"q": {q}}.Encode())
	case kindFilter:
		return c.get(c.filters[i%len(c.filters)])
	case kindAPI:
		return c.get("/api/v1/agents?" + url.Values{"q": {q}, "limit": {"10"}}.Encode())
	case kindMCP:
		args, _ := json.Marshal(map[string]any{"query": q, "limit": 10})
		_, err := c.post(c.base+mcpserver.Path, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`,
			i+1, mcpserver.ToolSearch, args), c.mcpSession)
		return timing{}, err
	case kindFloor:
		return c.get("/healthz")
	case kindA2A:
		params, err := json.Marshal(&a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(q))})
		if err != nil {
			return timing{}, err
		}
		_, err = c.post(c.base+a2aagent.JSONRPCPath, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":%s}`, i+1, params), "")
		return timing{}, err
	}
	return timing{}, fmt.Errorf("unknown kind %q", kind)
}

// run sends requests at rate for d, kinds in turn, each from its
// scheduled time whether or not earlier ones were answered, and returns
// each kind's latency from the scheduled time.
func (c *openClient) run(kinds []string, rate float64, d time.Duration) map[string]openLatency {
	period := time.Duration(float64(time.Second) / rate)
	total := int(d / period)
	type sample struct {
		ms, late float64
		timing
		err error
	}
	samples := make([][]sample, len(kinds))
	for k := range kinds {
		samples[k] = make([]sample, 0, total/len(kinds)+1)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for i := range total {
		at := start.Add(time.Duration(i) * period)
		time.Sleep(time.Until(at))
		k := i % len(kinds)
		// Each turn through the kinds asks one question, so the doors'
		// kinds answer the same searches.
		q := c.question(i / len(kinds))
		wg.Go(func() {
			late := time.Since(at)
			t, err := c.send(kinds[k], i/len(kinds), q)
			s := sample{ms: float64(time.Since(at).Microseconds()) / 1000, late: float64(late.Microseconds()) / 1000, timing: t, err: err}
			mu.Lock()
			samples[k] = append(samples[k], s)
			mu.Unlock()
		})
	}
	wg.Wait()
	if c.fresh >= 0 {
		c.fresh += (total + len(kinds) - 1) / len(kinds)
	}
	out := make(map[string]openLatency, len(kinds))
	for k, kind := range kinds {
		var lat, handler, embed []float64
		l := openLatency{}
		for _, s := range samples[k] {
			l.Late = max(l.Late, s.late)
			if s.err != nil {
				l.Errors++
				if l.FirstError == "" {
					l.FirstError = s.err.Error()
				}
				continue
			}
			lat = append(lat, s.ms)
			if s.handler > 0 {
				handler = append(handler, s.handler)
				embed = append(embed, s.embed)
			}
		}
		if len(handler) > 0 {
			l.HandlerP50, l.HandlerP99 = pct(handler, 50), pct(handler, 99)
			l.EmbedP50, l.EmbedP99 = pct(embed, 50), pct(embed, 99)
		}
		l.N, l.P50, l.P90, l.P99, l.Max = len(lat), pct(lat, 50), pct(lat, 90), pct(lat, 99), pct(lat, 100)
		out[kind] = l
	}
	return out
}
