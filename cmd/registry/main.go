// Command registry is an A2A agent registry: it keeps agent cards in a
// searchable catalog and serves them over a JSON API.
//
// Usage:
//
//	registry serve [flags]          run the HTTP server
//	registry migrate [flags]        apply database migrations and exit
//	registry import [flags] FILE... add agent card files to the catalog
//	registry export [flags]         write the catalog as JSON lines
//	registry version                print the version
//
// Every flag can also be set with a REGISTRY_* environment variable; run
// `registry COMMAND -h` for the list.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
	"time"
)

// version is set at link time: -ldflags "-X main.version=v1.2.3".
var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal starts a graceful shutdown, a second one
	// kills the process the default way.
	context.AfterFunc(ctx, stop)
	stopProfile := startCPUProfile(os.Getenv("REGISTRY_CPUPROFILE"), os.Stderr)
	stopTrace := startFlightRecorder(os.Getenv("REGISTRY_TRACE"), os.Stderr)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stopTrace()
	stopProfile()
	stop()
	os.Exit(code)
}

// startCPUProfile writes a CPU profile of the whole process to path until
// the returned function is called; a developer aid (registry-bench mixed
// uses it to see where serve's time goes under crawl), off when path is
// empty. A profile that cannot be started is reported and skipped.
func startCPUProfile(path string, stderr io.Writer) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "registry: REGISTRY_CPUPROFILE: %v\n", err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// startFlightRecorder keeps an execution trace of the process's last
// seconds in memory and writes it to path when the returned function is
// called (at exit); a developer aid like startCPUProfile, for what a CPU
// profile cannot show: goroutines waiting for a CPU or a lock (`go tool
// trace -pprof=sched`, `-pprof=sync`). Off when path is empty.
func startFlightRecorder(path string, stderr io.Writer) func() {
	if path == "" {
		return func() {}
	}
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: 10 * time.Second, MaxBytes: 256 << 20})
	if err := fr.Start(); err != nil {
		fmt.Fprintf(stderr, "registry: REGISTRY_TRACE: %v\n", err)
		return func() {}
	}
	return func() {
		f, err := os.Create(path)
		if err == nil {
			_, err = fr.WriteTo(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "registry: REGISTRY_TRACE: %v\n", err)
		}
		fr.Stop()
	}
}

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// env is how commands read the environment; tests pass a map.
type env func(string) string

// run dispatches to a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, stderr, getenv)
	case "migrate":
		return runMigrate(ctx, rest, stderr, getenv)
	case "import":
		return runImport(ctx, rest, stdout, stderr, getenv)
	case "crawl":
		return runCrawl(ctx, rest, stdout, stderr, getenv)
	case "verify":
		return runVerify(ctx, rest, stdout, stderr, getenv)
	case "sources":
		return runSources(ctx, rest, stdout, stderr, getenv)
	case "keys":
		return runKeys(ctx, rest, stdout, stderr, getenv)
	case "export":
		return runExport(ctx, rest, stdout, stderr, getenv)
	case "policy":
		return runPolicy(ctx, rest, stdout, stderr, getenv)
	case "healthcheck":
		return runHealthcheck(ctx, rest, stdout, stderr, getenv)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, versionString())
		return exitOK
	case "help", "-h", "--help", "-help":
		usage(stdout)
		return exitOK
	default:
		fmt.Fprintf(stderr, "registry: unknown command %q\n\n", cmd)
		usage(stderr)
		return exitUsage
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `registry: an A2A agent registry (crawler, catalog, search, JSON API)

Usage:
  registry serve [flags]            run the HTTP server (JSON API under /api/v1)
  registry migrate [flags]          apply database migrations and exit
  registry import [flags] FILE...   add agent card files to the catalog
  registry import --from-export FILE  restore an empty catalog from an export
  registry export [--out FILE]      write the catalog as JSON lines (agents, versions, keys)
  registry crawl [flags] URL...     fetch and check agent cards, print a report
  registry verify [flags] CARD      check a card's signatures, schemes and transports
  registry keys add|list|revoke     manage the trust store of pinned signing keys
  registry sources list|add|show|remove|refresh  manage sources: manifests and origins of many agents
  registry policy test FILE         judge the catalog by an admission policy; print what would change
  registry healthcheck [flags]      exit 0 when the local server is ready (GET /readyz)
  registry version                  print the version
  registry help                     show this text

Run "registry COMMAND -h" for a command's flags. Every flag can also be set
with a REGISTRY_* environment variable (flags win).
`)
}
