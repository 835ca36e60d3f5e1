package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The benchmark is a developer tool, but one that rots silently: run it
// on a tiny catalog and check that it measured every query class.
func TestCatalogBenchmarkSmoke(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.json")
	if err := runCatalog([]string{"-n", "300", "-queries", "5", "-per-tx", "10", "-json", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Ingest.Cards != 300 || r.PerTx.Cards != 10 || len(r.Queries) != 8 || r.GetByID.P50 <= 0 || len(r.Like) == 0 {
		t.Fatalf("incomplete report: %+v", r)
	}
}

// The mixed benchmark runs the real binary: check on a tiny catalog that
// both phases searched, the crawler stored versions and both starts
// answered a search.
func TestMixedBenchmarkSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the registry binary; skipped with -short")
	}
	out := filepath.Join(t.TempDir(), "mixed.json")
	if err := runMixed([]string{"-n", "200", "-hosts", "2", "-duration", "3s", "-queries", "20", "-json", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r mixedReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Idle.N != 20 || r.Crawl.N == 0 || r.VersionsPerSec <= 0 || r.IdleStart.FirstSearch <= 0 || r.CrawlStart.FirstSearch <= 0 {
		t.Fatalf("incomplete report: %+v", r)
	}
	// The client (a child process) saw serve's own timings and the
	// query classes.
	for name, s := range map[string]searchResult{"idle": r.Idle, "crawling": r.Crawl} {
		if s.ServerP50 <= 0 || s.ServerP99 < s.ServerP50 || s.Tail == nil || s.Tail.Handler <= 0 || len(s.ByClass) == 0 {
			t.Errorf("%s: no server timings or classes: %+v", name, s)
		}
		n := 0
		for _, c := range s.ByClass {
			n += c.N
		}
		if n != s.N {
			t.Errorf("%s: classes count %d searches of %d", name, n, s.N)
		}
	}
}

// The console benchmark on a tiny catalog: every page class measured in
// every round, and a first visit weighed with its assets.
func TestConsoleBenchmarkSmoke(t *testing.T) {
	out := filepath.Join(t.TempDir(), "console.json")
	if err := runConsole([]string{"-n", "300", "-requests", "5", "-rounds", "2", "-json", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r consoleReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Pages) != 4 || len(r.API) != 4 || len(r.Weight) != 3 {
		t.Fatalf("incomplete report: %+v", r)
	}
	for _, p := range r.Pages {
		if p.P50 <= 0 || len(p.RoundP99) != 2 || p.HTMLBytes < 1000 {
			t.Errorf("page %s: %+v", p.Name, p)
		}
	}
	for _, w := range r.Weight {
		if w.HTML < 1000 || w.Assets < 1000 || w.Total != w.HTML+w.Assets {
			t.Errorf("first visit %s: %+v", w.Page, w)
		}
	}
}

// The scoped benchmark runs catalog.Search for two scopes over a curated
// catalog: check on a small one that every class reports both.
func TestScopedBenchmarkSmoke(t *testing.T) {
	out := filepath.Join(t.TempDir(), "scoped.json")
	if err := runScoped([]string{"-n", "400", "-queries", "5", "-json", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r scopedReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Agents != 400 || len(r.Classes) == 0 || r.All.P50 <= 0 || r.Scoped.P50 <= 0 {
		t.Fatalf("incomplete report: %+v", r)
	}
	for _, c := range r.Classes {
		if c.Unrestricted.P99 <= 0 || c.Scoped.P99 <= 0 || c.Ratio <= 0 {
			t.Errorf("class %s: %+v", c.Name, c)
		}
	}
}

// The open-loop benchmark on a tiny catalog: every kind answered without
// errors in both phases of both rounds, the crawler stored versions only
// while crawling, the verifier's first pass over the never-verified
// catalog ended before the first idle phase and no idle phase verified
// anything, and the doors' differences were taken.
func TestOpenLoopBenchmarkSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the registry binary; skipped with -short")
	}
	out := filepath.Join(t.TempDir(), "openloop.json")
	// Phases outlast the crawler's 5 s poll: its 200 agents are all
	// checked in one burst per poll, which a 2 s phase missed more often
	// than not.
	if err := runOpenLoop([]string{"-n", "200", "-hosts", "2", "-duration", "6s", "-warmup", "500ms", "-rounds", "2",
		"-rate", "20", "-kinds", strings.Join(knownKinds, ","), "-json", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r openReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Phases) != 4 || r.Start.FirstSearch <= 0 {
		t.Fatalf("incomplete report: %+v", r)
	}
	if r.FirstPass.AfterStart < r.Start.FirstSearch || r.FirstPass.Verifications < 1 {
		t.Errorf("no wait for the verifier's first pass: %+v", r.FirstPass)
	}
	for _, ph := range r.Phases {
		if crawling := ph.Phase == "crawling"; crawling != (ph.VersionsPerSec > 0) {
			t.Errorf("round %d, %s: %.0f versions stored/s", ph.Round, ph.Phase, ph.VersionsPerSec)
		}
		if ph.Phase == "idle" && ph.VerificationsPerSec > 0 {
			t.Errorf("round %d, idle: %.1f verifications/s", ph.Round, ph.VerificationsPerSec)
		}
		for _, k := range knownKinds {
			if l := ph.Kinds[k]; l.N == 0 || l.Errors > 0 || l.P99 < l.P50 {
				t.Errorf("round %d, %s, %s: %+v", ph.Round, ph.Phase, k, l)
			}
		}
		if l := ph.Kinds[kindNL]; l.HandlerP50 <= 0 {
			t.Errorf("round %d, %s: no handler timing for questions: %+v", ph.Round, ph.Phase, l)
		}
		if l := ph.Kinds[kindFloor]; l.HandlerP50 != 0 {
			t.Errorf("round %d, %s: the floor reports a search handler: %+v", ph.Round, ph.Phase, l)
		}
	}
	if len(r.DoorAddedP50[kindMCP]) != 2 || len(r.DoorAddedP50[kindA2A]) != 2 || len(r.CrawlIdleP99) != len(knownKinds) {
		t.Errorf("no door differences or ratios: %+v %+v", r.DoorAddedP50, r.CrawlIdleP99)
	}
}

func TestParseKinds(t *testing.T) {
	got, err := parseKinds("nl, floor")
	if err != nil || !slices.Equal(got, []string{kindNL, kindFloor}) {
		t.Fatalf("parseKinds(nl, floor) = %v, %v", got, err)
	}
	if _, err := parseKinds("nl,healthz"); err == nil || !strings.Contains(err.Error(), `"healthz"`) {
		t.Fatalf("an unknown kind: %v", err)
	}
}
