// Command registry-bench measures the registry on synthetic data and prints
// the figures the issues ask for. It is a developer tool: it talks only to
// loopback servers it starts itself and to the database it is given.
//
//	registry-bench catalog [-n 100000] [-db sqlite:PATH|postgres://...]
//	registry-bench crawl [-n 10000] [-hosts 8] [-concurrency 32] [-db ...]
//	registry-bench mixed [-n 100000] [-duration 60s] [-db ...] [-registry BIN]
//	registry-bench openloop [-n 100000] [-rate 10] [-duration 60s] [-rounds 3] [-kinds nl,filter,api,mcp,a2a] [-db ...]
//	registry-bench console [-n 100000] [-requests 300] [-rounds 3] [-db ...]
//	registry-bench relevance [-n 1000] [-v] [-hybrid -fake-embeddings | -hybrid -embeddings-url URL -embeddings-model M -embeddings-dimension D]
package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	// REGISTRY_BENCH_CPUPROFILE=FILE writes a CPU profile of the whole run.
	if path := os.Getenv("REGISTRY_BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "registry-bench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "registry-bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	var err error
	switch os.Args[1] {
	case "catalog":
		err = runCatalog(os.Args[2:])
	case "crawl":
		err = runCrawl(os.Args[2:])
	case "mixed":
		err = runMixed(os.Args[2:])
	case "replicas":
		err = runReplicas(os.Args[2:])
	case "console":
		err = runConsole(os.Args[2:])
	case "scoped":
		err = runScoped(os.Args[2:])
	case "relevance":
		err = runRelevance(os.Args[2:])
	case "openloop":
		err = runOpenLoop(os.Args[2:])
	case searchClientCmd:
		err = runSearchClient(os.Args[2:])
	case openLoopCmd:
		err = runOpenLoopClient(os.Args[2:])
	case "-h", "-help", "--help", "help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "registry-bench: unknown benchmark %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "registry-bench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: registry-bench BENCHMARK [flags]

benchmarks:
  catalog   ingest a synthetic catalog, then measure search and get-by-id
            latency through the JSON API (run with -h for flags)
  crawl     crawl a synthetic fleet of agents on loopback into a catalog:
            first crawl, revalidation (304) and a bare-client ceiling
  mixed     run the real registry serve over a catalog whose loopback fleet
            keeps changing: search latency idle and while the crawler
            writes, versions stored per second, time to the first search
  openloop  run the real registry serve, crawler and verifier on, and send
            searches at a fixed rate (open loop: latency from the scheduled
            send) while the crawler is idle and while it writes: questions
            in words, filter searches, and one question through the JSON
            API, MCP search_agents and A2A SendMessage; p50/p90/p99/max per
            kind and phase, crawling/idle ratios and what each door adds
  replicas  run one and then several registry serve replicas on one
            PostgreSQL catalog: first crawl and revalidation throughput,
            search latency while crawling, API requests/s, and the ratios
  console   server-side render time of the web console's search and agent
            pages over a synthetic catalog (p50, p99), and the weight of a
            first visit (HTML + CSS + JS as transferred)
  scoped    catalog.Search p50/p99 for an unrestricted caller and for a
            viewer in 3 groups over a catalog with collections (some
            restricted) and every listing state, alternating query by query
  relevance success@3, MRR@10 and nDCG@10 of the judged set (natural
            questions in users' words) over hand-written and real-world
            cards among synthetic ones
`)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
