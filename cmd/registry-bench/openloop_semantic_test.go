package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/synth"
)

// Fresh questions never repeat within the variants' period, and stay
// questions of a few words.
func TestFreshQuestions(t *testing.T) {
	var base []string
	for _, cl := range synth.New(1).Vocabulary().SearchClasses() {
		if cl.Name == "natural language (3-10 words)" {
			for _, q := range cl.Searches {
				base = append(base, q.Get("q"))
			}
		}
	}
	period := len(base) * len(freshLeads) * len(freshTails)
	seen := map[string]int{}
	for j := range period {
		q := freshQuestion(base, j)
		if k, ok := seen[q]; ok {
			t.Fatalf("questions %d and %d are both %q", k, j, q)
		}
		seen[q] = j
		if n := len(strings.Fields(q)); n < 3 || n > 12 {
			t.Errorf("question %d %q has %d words", j, q, n)
		}
	}
	if freshQuestion(base, 0) != base[0] || freshQuestion(base, period) != base[0] {
		t.Errorf("the first variant of the first question is %q, want it as it is", freshQuestion(base, 0))
	}
}

// The open-loop benchmark with the semantic layer on a tiny catalog: serve
// ran with the stand-in embeddings API in its hybrid mode and without it
// in its lexical mode, alternated; the first start embedded every agent,
// the restart loaded them all from the catalog; searches with text
// embedded their text only in hybrid mode.
func TestOpenLoopEmbeddingsSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the registry binary; skipped with -short")
	}
	const n = 150
	out := filepath.Join(t.TempDir(), "openloop.json")
	if err := runOpenLoop([]string{"-n", "150", "-hosts", "2", "-duration", "6s", "-warmup", "500ms", "-rounds", "2",
		"-rate", "20", "-embeddings", "32", "-json", out}); err != nil {
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
	// hybrid, its restart, lexical (rounds 1 and 2), hybrid (round 2).
	wantStarts := []struct {
		mode    string
		restart bool
	}{{modeHybrid, false}, {modeHybrid, true}, {modeLexical, false}, {modeHybrid, false}}
	if len(r.Starts) != len(wantStarts) {
		t.Fatalf("%d starts, want %d: %+v", len(r.Starts), len(wantStarts), r.Starts)
	}
	for i, w := range wantStarts {
		s := r.Starts[i]
		if s.Mode != w.mode || s.Restart != w.restart || s.FirstSearch <= 0 {
			t.Errorf("start %d: %+v, want mode %s restart %v", i, s, w.mode, w.restart)
		}
		if hybrid := s.Mode == modeHybrid; hybrid != (s.VectorsAt > 0) || hybrid != (s.VectorBytes >= n*32*4) {
			t.Errorf("start %d (%s): vectors at %.1fs, %.0f bytes", i, s.Mode, s.VectorsAt, s.VectorBytes)
		}
	}
	// Besides agents' texts, the API embeds the searches that wait for
	// serve's first answer: a handful.
	if r.Starts[0].Embedded < n || r.Starts[0].Embedded > n+5 || r.Starts[1].Embedded > 5 {
		t.Errorf("the first start sent %.0f texts to the API (want %d agents'), the restart %.0f (want none of the agents')", r.Starts[0].Embedded, n, r.Starts[1].Embedded)
	}
	wantModes := []string{modeHybrid, modeHybrid, modeLexical, modeLexical, modeLexical, modeLexical, modeHybrid, modeHybrid}
	if len(r.Phases) != len(wantModes) {
		t.Fatalf("%d phases, want %d", len(r.Phases), len(wantModes))
	}
	for i, ph := range r.Phases {
		if ph.Mode != wantModes[i] {
			t.Errorf("phase %d (round %d, %s) in mode %q, want %q", i, ph.Round, ph.Phase, ph.Mode, wantModes[i])
		}
		for _, k := range allKinds {
			if l := ph.Kinds[k]; l.N == 0 || l.Errors > 0 {
				t.Errorf("round %d, %s %s, %s: %+v", ph.Round, ph.Phase, ph.Mode, k, l)
			}
		}
		if nl := ph.Kinds[kindNL]; (ph.Mode == modeHybrid) != (nl.EmbedP99 > 0) {
			t.Errorf("round %d, %s %s: nl's embedding p99 %.2f ms", ph.Round, ph.Phase, ph.Mode, nl.EmbedP99)
		}
	}
	for _, p := range []string{"idle", "crawling"} {
		if r.HybridOverLexicalP99[p][kindNL] <= 0 {
			t.Errorf("no hybrid / lexical ratio for %s: %+v", p, r.HybridOverLexicalP99)
		}
	}
}
