package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/api"
	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/synth"
	"github.com/a2aregistry/registry/internal/verify"
	"github.com/a2aregistry/registry/internal/web"
)

// Targets of issue 11's benchmark.
const (
	consoleP99Target    = 50.0    // ms, server-side render of each page
	consoleWeightTarget = 100_000 // bytes, a first visit: HTML + CSS + JS as transferred
)

type consoleFlags struct {
	catalogFlags
	requests, rounds int
}

// pageResult is one console page's render time, the median over rounds.
type pageResult struct {
	Name string  `json:"name"`
	P50  float64 `json:"p50_ms"`
	P99  float64 `json:"p99_ms"`
	// RoundP99 are each round's p99, to show the spread.
	RoundP99 []float64 `json:"round_p99_ms"`
	// CPUP50 and CPUP99 are the CPU time of the serving thread.
	CPUP50 float64 `json:"cpu_p50_ms"`
	CPUP99 float64 `json:"cpu_p99_ms"`
	// HTMLBytes is the average size of the page as sent (pages are not
	// compressed).
	HTMLBytes int `json:"html_bytes"`
}

// weightResult is what a first visit to a page transfers.
type weightResult struct {
	Page   string `json:"page"`
	HTML   int    `json:"html_bytes"`
	Assets int    `json:"assets_bytes"`
	Total  int    `json:"total_bytes"`
}

type consoleReport struct {
	Backend  string       `json:"backend"`
	Agents   int          `json:"agents"`
	CPUs     int          `json:"cpus"`
	Requests int          `json:"requests_per_round"`
	Rounds   int          `json:"rounds"`
	Pages    []pageResult `json:"pages"`
	// API is the JSON API answering the same requests, as a baseline.
	API    []pageResult   `json:"api"`
	Weight []weightResult `json:"first_visit"`
}

// runConsole measures the console's server-side render time over a
// synthetic catalog: the real handlers (internal/web) over a real
// catalog Store, called in process so the figure is the server's time
// alone (search, database reads, templ rendering), as a signed-in viewer.
func runConsole(args []string) error {
	var f consoleFlags
	fs := flag.NewFlagSet("console", flag.ContinueOnError)
	fs.IntVar(&f.n, "n", 100_000, "agents in the synthetic catalog")
	fs.IntVar(&f.requests, "requests", 300, "requests per page class and round")
	fs.IntVar(&f.rounds, "rounds", 3, "rounds; each figure is the median over them")
	fs.IntVar(&f.batch, "batch", 500, "cards per transaction during the bulk load")
	fs.Int64Var(&f.seed, "seed", 1, "generator seed")
	fs.StringVar(&f.db, "db", "", "catalog DSN (default: a fresh SQLite file in a temp dir)")
	fs.StringVar(&f.pgSchema, "pg-schema", "registry_bench_console", "PostgreSQL schema to (re)create for the run")
	fs.BoolVar(&f.reuse, "reuse", false, "reuse an existing catalog that already holds -n agents (skip the bulk load)")
	fs.StringVar(&f.out, "json", "", "also write the figures as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.rounds < 1 || f.requests < 1 {
		return fmt.Errorf("-rounds and -requests must be positive")
	}
	ctx := context.Background()
	store, done, err := openBenchStore(ctx, f.catalogFlags)
	if err != nil {
		return err
	}
	defer done()
	gen := synth.New(f.seed)
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
		ing, err := bulkLoad(ctx, store, gen, f.catalogFlags)
		if err != nil {
			return err
		}
		fmt.Printf("bulk load: %d cards in %.1fs\n", f.n, ing.Seconds)
	}
	start := time.Now()
	if err := store.WarmIndex(ctx); err != nil {
		return err
	}
	fmt.Printf("search index: built in %.1fs\n", time.Since(start).Seconds())

	rnd := rand.New(rand.NewPCG(uint64(f.seed), 11))
	ids, err := sampleIDs(ctx, store, gen, f.n, 200, rnd)
	if err != nil {
		return err
	}
	if err := recordReports(ctx, store, ids); err != nil {
		return err
	}
	e := echo.New()
	// A signed-in viewer with a session: the header, CSRF token and
	// sign-out form are rendered as in production.
	web.New(web.Options{
		Searcher: store, Agents: store, IndexNotReady: catalog.ErrIndexNotReady, Logger: discardLogger(), SignIn: true, APIPath: api.BasePath,
		Principal: func(echo.Context) (web.Principal, bool) {
			return web.Principal{Subject: "bench", Name: "Bench Viewer", Role: auth.Viewer, Session: true}, true
		},
		CSRFToken: func(echo.Context) string { return "bench-csrf-token-0123456789" },
	}).Mount(e)

	// The JSON API beside it: the same searches and agents without the
	// page around them, to tell the console's own cost from the catalog's.
	api.New(api.Options{Catalog: store, Logger: discardLogger()}).Mount(e)

	rep := consoleReport{Backend: store.Dialect(), Agents: f.n, CPUs: runtime.NumCPU(), Requests: f.requests, Rounds: f.rounds}
	classes := consolePages(gen.Vocabulary(), ids)
	pages := make([][]pageResult, len(classes))
	apis := make([][]pageResult, len(classes))
	for r := range f.rounds {
		for i, cl := range classes {
			res, err := measurePages(e, cl.pages, f.requests)
			if err != nil {
				return err
			}
			pages[i] = append(pages[i], res)
			if res, err = measurePages(e, cl.api, f.requests); err != nil {
				return err
			}
			apis[i] = append(apis[i], res)
		}
		fmt.Printf("round %d of %d done\n", r+1, f.rounds)
	}
	fmt.Printf("\nconsole over %d agents (%s), in process, %d rounds of %d requests per page; median of the rounds\n",
		f.n, rep.Backend, f.rounds, f.requests)
	fmt.Printf("%-26s %8s %8s   %-22s %-16s %7s   %s\n", "page", "p50 ms", "p99 ms", "p99 per round", "CPU p50 / p99", "HTML KB", "JSON API p50 / p99 ms")
	met := true
	for i, cl := range classes {
		res, base := summarize(cl.name, pages[i]), summarize(cl.name, apis[i])
		met = met && res.P99 < consoleP99Target
		rep.Pages = append(rep.Pages, res)
		rep.API = append(rep.API, base)
		var per []string
		for _, p := range res.RoundP99 {
			per = append(per, fmt.Sprintf("%.1f", p))
		}
		fmt.Printf("%-26s %8.2f %8.2f   %-22s %-16s %7.1f   %.2f / %.2f\n", res.Name, res.P50, res.P99, strings.Join(per, " / "),
			fmt.Sprintf("%.2f / %.2f", res.CPUP50, res.CPUP99), float64(res.HTMLBytes)/1000, base.P50, base.P99)
	}
	fmt.Printf("target p99 < %.0f ms: %s\n", consoleP99Target, verdict(met))

	fmt.Printf("\nfirst visit (HTML as sent + CSS and JS as served with Accept-Encoding: gzip)\n")
	light := true
	for _, p := range []struct{ name, path string }{
		{"search, no query", "/"}, {"search, one word", classes[1].pages[0]}, {"agent page", classes[3].pages[0]},
	} {
		w, err := firstVisit(e, p.path)
		if err != nil {
			return err
		}
		w.Page = p.name
		light = light && w.Total < consoleWeightTarget
		rep.Weight = append(rep.Weight, w)
		fmt.Printf("  %-18s HTML %6.1f KB + assets %5.1f KB = %6.1f KB\n", w.Page, float64(w.HTML)/1000, float64(w.Assets)/1000, float64(w.Total)/1000)
	}
	fmt.Printf("target < %d KB: %s\n", consoleWeightTarget/1000, verdict(light))
	if f.out != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(f.out, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// pageClass is one kind of console page and the JSON API requests that
// answer the same question, measured beside it as a baseline.
type pageClass struct {
	name       string
	pages, api []string
}

// consolePages are the pages issue 11 names: the search page with no
// query, one word, a word and two facets (the catalog benchmark's query
// classes, as console URLs), and agent pages.
func consolePages(v synth.Vocab, ids []string) []pageClass {
	apiClasses := map[string][]string{}
	for _, cl := range queryClasses(v) {
		apiClasses[cl.name] = cl.queries
	}
	search := func(name string, apiPaths []string) pageClass {
		pc := pageClass{name: name, api: apiPaths}
		for _, p := range apiPaths {
			pc.pages = append(pc.pages, "/"+strings.TrimPrefix(p, "/api/v1/agents"))
		}
		return pc
	}
	agents := pageClass{name: "agent page"}
	for _, id := range ids {
		agents.pages = append(agents.pages, "/agents/"+id)
		agents.api = append(agents.api, "/api/v1/agents/"+id)
	}
	return []pageClass{
		search("search: no query", []string{"/api/v1/agents"}),
		search("search: one word", apiClasses["text-only"]),
		search("search: word + 2 facets", apiClasses["text + 2 facets"]),
		agents,
	}
}

// measurePages requests paths n times in turn (after a warm-up) and
// returns the latency percentiles in ms: wall clock, and the CPU time of
// the thread serving (the handler runs on the calling goroutine, locked
// to its thread, SQLite's cgo calls included), which a machine shared
// with other work does not stretch.
func measurePages(e *echo.Echo, paths []string, n int) (pageResult, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu []float64
	get := func(path string) (time.Duration, int, error) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept", "text/html")
		rec := httptest.NewRecorder()
		start, startCPU := time.Now(), preciseThreadCPU()
		e.ServeHTTP(rec, req)
		d := time.Since(start)
		cpu = append(cpu, float64((preciseThreadCPU()-startCPU).Microseconds())/1000)
		if rec.Code != http.StatusOK {
			return 0, 0, fmt.Errorf("GET %s: %d", path, rec.Code)
		}
		return d, rec.Body.Len(), nil
	}
	for i := range min(20, n) {
		if _, _, err := get(paths[i%len(paths)]); err != nil {
			return pageResult{}, err
		}
	}
	cpu = cpu[:0]
	lat := make([]float64, 0, n)
	bytes := 0
	for i := range n {
		d, size, err := get(paths[i%len(paths)])
		if err != nil {
			return pageResult{}, err
		}
		lat = append(lat, float64(d.Microseconds())/1000)
		bytes += size
	}
	return pageResult{P50: pct(lat, 50), P99: pct(lat, 99), CPUP50: pct(cpu, 50), CPUP99: pct(cpu, 99), HTMLBytes: bytes / n}, nil
}

// assetRef finds the stylesheet and scripts a page loads.
var assetRef = regexp.MustCompile(`(?:href|src)="(/static/[^"]+)"`)

// firstVisit is what a browser with an empty cache transfers for path:
// the page and every asset it references, gzipped where the server
// gzips.
func firstVisit(e *echo.Echo, path string) (weightResult, error) {
	get := func(p string) (*httptest.ResponseRecorder, error) {
		req := httptest.NewRequest(http.MethodGet, p, nil)
		req.Header.Set("Accept", "text/html")
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %d", p, rec.Code)
		}
		return rec, nil
	}
	page, err := get(path)
	if err != nil {
		return weightResult{}, err
	}
	w := weightResult{HTML: page.Body.Len()}
	refs := assetRef.FindAllStringSubmatch(page.Body.String(), -1)
	if len(refs) == 0 {
		return w, fmt.Errorf("GET %s: the page references no assets", path)
	}
	for _, m := range refs {
		a, err := get(m[1])
		if err != nil {
			return w, err
		}
		w.Assets += a.Body.Len()
	}
	w.Total = w.HTML + w.Assets
	return w, nil
}

// recordReports stores a signature report for each agent, so the agent
// pages measured show one, as a verified catalog's would.
func recordReports(ctx context.Context, store *catalog.Store, ids []string) error {
	now := time.Now().UTC()
	var ins []catalog.VerificationInput
	for _, id := range ids {
		v, err := store.AgentView(ctx, catalog.ScopeAll, id, now)
		if err != nil {
			return err
		}
		report, err := json.Marshal(verify.Report{
			CardURL: v.Agent.CardURL, CheckedAt: now,
			Signatures: verify.SignatureReport{Status: verify.StatusVerified, Entries: []verify.SignatureResult{{
				Index: 0, Result: verify.ResultVerified, Alg: "ES256", KID: "bench-2026",
				Signer: &verify.Signer{KID: "bench-2026", Thumbprint: "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs", Source: verify.KeySourcePinned,
					KeyType: "EC", Curve: "P-256"},
				Form: verify.FormJCS,
			}}},
			Security: []verify.Finding{{Code: "no_security", Severity: verify.SeverityWarning, Path: "$",
				Message: "the card declares no security scheme"}},
		})
		if err != nil {
			return err
		}
		ins = append(ins, catalog.VerificationInput{
			AgentID: id, Version: v.Agent.CurrentVersion, Status: catalog.SignatureVerified, Report: report,
			VerifiedAt: now, RecheckAt: now.Add(24 * time.Hour), KIDs: []string{"bench-2026"},
			AuditCodes: []string{"no_security"}, Trust: string(verify.TrustPinned),
		})
	}
	if err := store.RecordVerifications(ctx, benchActor, ins); err != nil {
		return fmt.Errorf("recording reports: %w", err)
	}
	return nil
}

// summarize is the median over rounds of each round's p50 and p99.
func summarize(name string, rounds []pageResult) pageResult {
	res := pageResult{Name: name}
	var p50s, cpu50s, cpu99s []float64
	for _, r := range rounds {
		p50s = append(p50s, r.P50)
		res.RoundP99 = append(res.RoundP99, r.P99)
		cpu50s, cpu99s = append(cpu50s, r.CPUP50), append(cpu99s, r.CPUP99)
		res.HTMLBytes = r.HTMLBytes
	}
	res.P50, res.P99 = median(p50s), median(res.RoundP99)
	res.CPUP50, res.CPUP99 = median(cpu50s), median(cpu99s)
	return res
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
