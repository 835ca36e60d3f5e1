package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aregistry/registry/internal/synth"
)

type replicasFlags struct {
	n, hosts, replicas, concurrency, perHost, clients int
	seed                                              int64
	db, pgSchema, registry, out                       string
	duration                                          time.Duration
}

// runReplicas runs the real binary as one replica and then as several on
// one PostgreSQL catalog over the same loopback fleet, and reports for
// each: the first crawl (every agent fetched once, cards stored), the
// revalidation rate after it (conditional requests answered 304), search
// latency on one replica while all crawl, and API requests per second
// spread over every replica.
func runReplicas(args []string) error {
	var f replicasFlags
	fs := flag.NewFlagSet("replicas", flag.ContinueOnError)
	fs.IntVar(&f.n, "n", 10_000, "agents in the catalog and the fleet")
	fs.IntVar(&f.hosts, "hosts", 8, "loopback addresses serving the fleet")
	fs.IntVar(&f.replicas, "replicas", 3, "replicas in the second run")
	fs.IntVar(&f.concurrency, "concurrency", 16, "serve --crawl-concurrency of each replica")
	fs.IntVar(&f.perHost, "per-host", 4, "serve --crawl-per-host of each replica")
	fs.IntVar(&f.clients, "clients", 4, "concurrent API clients for the requests-per-second figure")
	fs.Int64Var(&f.seed, "seed", 1, "generator seed")
	fs.StringVar(&f.db, "db", "", "PostgreSQL DSN (required: replicas share a PostgreSQL catalog)")
	fs.StringVar(&f.pgSchema, "pg-schema", "registry_bench_replicas", "PostgreSQL schema to (re)create for each run")
	fs.StringVar(&f.registry, "registry", "", "registry binary to run (default: go build ./cmd/registry into a temp dir)")
	fs.DurationVar(&f.duration, "duration", 15*time.Second, "how long to measure revalidation, searches and API requests")
	fs.StringVar(&f.out, "json", "", "also write the figures as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !strings.HasPrefix(f.db, "postgres") || f.n < 1 || f.replicas < 2 || f.hosts < 1 || f.hosts > 250 {
		return errors.New("need -db postgres://…, -n >= 1, -replicas >= 2 and 1 <= -hosts <= 250")
	}
	tmp, err := os.MkdirTemp("", "registry-bench-replicas-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := registryBinary(f.registry, tmp)
	if err != nil {
		return err
	}
	// Cards never change: the first crawl stores what the fleet serves
	// (the catalog holds revision 0 without validators), and every later
	// check is a 304.
	fl, err := startChangingFleet(f.seed, f.n, f.hosts, 0)
	if err != nil {
		return err
	}
	defer fl.close()

	rep := replicasReport{Agents: f.n, CPUs: runtime.NumCPU()}
	for _, k := range []int{1, f.replicas} {
		r, err := runReplicaSet(bin, tmp, fl, f, k)
		if err != nil {
			return fmt.Errorf("%d replicas: %w", k, err)
		}
		rep.Runs = append(rep.Runs, r)
		fmt.Printf("%d replica(s): first crawl %6.0f checks/s  revalidation %6.0f checks/s  search p99 %6.2f ms  API %6.0f req/s\n",
			k, r.FirstCrawlPerSec, r.RevalidationPerSec, r.Search.P99, r.APIPerSec)
	}
	one, many := rep.Runs[0], rep.Runs[1]
	fmt.Printf("\n%d replicas / 1:  first crawl %.2fx  revalidation %.2fx  search p99 %.2fx  API req/s %.2fx  (on %d CPUs)\n",
		f.replicas, many.FirstCrawlPerSec/one.FirstCrawlPerSec, many.RevalidationPerSec/one.RevalidationPerSec,
		many.Search.P99/one.Search.P99, many.APIPerSec/one.APIPerSec, runtime.NumCPU())
	if f.out != "" {
		return writeJSON(f.out, rep)
	}
	return nil
}

type replicasReport struct {
	Agents int          `json:"agents"`
	CPUs   int          `json:"cpus"`
	Runs   []replicaRun `json:"runs"`
}

type replicaRun struct {
	Replicas           int          `json:"replicas"`
	FirstCrawlSeconds  float64      `json:"first_crawl_s"`
	FirstCrawlPerSec   float64      `json:"first_crawl_checks_per_s"`
	RevalidationPerSec float64      `json:"revalidation_checks_per_s"`
	Search             searchResult `json:"search_while_crawling"`
	APIPerSec          float64      `json:"api_requests_per_s"`
}

// runReplicaSet measures k replicas on a fresh schema.
func runReplicaSet(bin, tmp string, fl *changingFleet, f replicasFlags, k int) (replicaRun, error) {
	run := replicaRun{Replicas: k}
	dsn, _, err := benchDSN(catalogFlags{db: f.db, pgSchema: f.pgSchema})
	if err != nil {
		return run, err
	}
	gen := synth.New(f.seed)
	if err := loadFleetCatalog(context.Background(), dsn, gen, fl.urls); err != nil {
		return run, err
	}
	procs := make([]*serveProc, k)
	for i := range k {
		p, err := startServe(bin, tmp, fmt.Sprintf("r%d-of-%d", i+1, k), nil, []string{"--db", dsn, "--instance", fmt.Sprintf("r%d", i+1),
			"--allow-networks", "127.0.0.0/8", "--verify-fetch=false", "--import-examples=false", "--log-level", "warn",
			"--crawl-concurrency", strconv.Itoa(f.concurrency), "--crawl-per-host", strconv.Itoa(f.perHost),
			"--crawl-min-interval", "1s", "--crawl-max-interval", "1s"})
		if err != nil {
			return run, err
		}
		defer p.stop()
		procs[i] = p
	}
	checks := func() float64 {
		var sum float64
		for _, p := range procs {
			v, err := p.counter("registry_crawl_checks_total")
			if err == nil {
				sum += v
			}
		}
		return sum
	}
	start := time.Now()
	for checks() < float64(f.n) {
		if time.Since(start) > 10*time.Minute {
			return run, errors.New("first crawl did not finish within 10 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	run.FirstCrawlSeconds = time.Since(start).Seconds()
	run.FirstCrawlPerSec = float64(f.n) / run.FirstCrawlSeconds
	for _, p := range procs {
		if _, err := p.waitFirstSearch(2 * time.Minute); err != nil {
			return run, err
		}
	}

	// Revalidation: every agent is due again each second, so the crawl
	// runs flat out on conditional requests; searches on the first
	// replica meanwhile.
	c0, t0 := checks(), time.Now()
	search, err := searchFor(procs[0].base, mixedQueries(gen.Vocabulary()), 0, f.duration, nil)
	if err != nil {
		return run, err
	}
	run.RevalidationPerSec = (checks() - c0) / time.Since(t0).Seconds()
	run.Search = search

	// API requests per second over every replica, still crawling.
	paths := mixedQueries(gen.Vocabulary())
	var n atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(f.duration)
	errc := make(chan error, f.clients)
	for w := range f.clients {
		wg.Go(func() {
			c := &http.Client{Timeout: 30 * time.Second}
			for i := w; time.Now().Before(deadline); i++ {
				resp, err := c.Get(procs[i%k].base + paths[i%len(paths)])
				if err != nil {
					errc <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				n.Add(1)
			}
		})
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return run, err
	}
	run.APIPerSec = float64(n.Load()) / f.duration.Seconds()
	return run, nil
}
