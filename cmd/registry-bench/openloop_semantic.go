package main

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/a2aregistry/registry/internal/embeddings/embeddingstest"
)

// Serve's modes in an open-loop run with -embeddings: the same catalog
// served with the semantic layer on (hybrid) and off (lexical), in turn.
const (
	modeHybrid  = "hybrid"
	modeLexical = "lexical"
)

// semanticArgs are serve's flags that turn the semantic layer on against
// the benchmark's own embeddings API. Its loopback address is opened by
// the --allow-networks 127.0.0.0/8 every open-loop serve runs with, as
// docs/operations.md says a local embeddings server needs.
func semanticArgs(emb *embeddingstest.Server, dim int) []string {
	return []string{"--embeddings-url", emb.BaseURL(), "--embeddings-model", emb.ModelName(),
		"--embeddings-dimension", strconv.Itoa(dim)}
}

// modesOf is the order of serve's modes in round (1-based): alternated, so
// that neither always runs first and consecutive rounds share a process.
func modesOf(round int, semantic bool) []string {
	if !semantic {
		return []string{""}
	}
	if round%2 == 1 {
		return []string{modeHybrid, modeLexical}
	}
	return []string{modeLexical, modeHybrid}
}

// serveStart is one start of serve in an open-loop run.
type serveStart struct {
	Mode string `json:"mode,omitempty"`
	// Restart is set when serve started over a catalog whose vectors
	// were all stored already, with nothing changed since.
	Restart bool `json:"restart,omitempty"`
	startResult
	Mem memoryResult `json:"memory_after_start"`
	// VectorsAt is the time from serve's start until every agent in its
	// index had a vector (embedded, or loaded from the catalog), in
	// seconds; VectorMem is serve's memory then and VectorBytes the
	// vectors' (registry_embeddings_vector_bytes). Hybrid mode only.
	VectorsAt   float64      `json:"vectors_at_s,omitempty"`
	VectorMem   memoryResult `json:"memory_with_vectors"`
	VectorBytes float64      `json:"vector_bytes,omitempty"`
	// Embedded counts the texts serve sent to the embeddings API until
	// then: the agents' it did not find stored, and the few searches that
	// probed for its first answer.
	Embedded float64 `json:"agents_embedded,omitempty"`
}

// waitEmbedded waits until every agent in serve's index has a vector of
// its model (registry_embeddings_agents_embedded reaching _indexed, and
// that n agents), and returns how long after serve's start that was, the
// vectors' memory and how many texts went to the API since the API's
// count was texts0.
func waitEmbedded(srv *serveProc, emb *embeddingstest.Server, n int, limit time.Duration, texts0 int64) (at, bytes, sent float64, err error) {
	t0, lastLog := time.Now(), time.Now()
	for {
		m, err := srv.metrics()
		if err == nil && m["registry_embeddings_agents_indexed"] >= float64(n) &&
			m["registry_embeddings_agents_embedded"] >= m["registry_embeddings_agents_indexed"] {
			return time.Since(srv.started).Seconds(), m["registry_embeddings_vector_bytes"], float64(emb.Texts.Load() - texts0), nil
		}
		if time.Since(t0) > limit {
			return 0, 0, 0, fmt.Errorf("agents not all embedded after %v (%.0f of %.0f; %v)", limit,
				m["registry_embeddings_agents_embedded"], m["registry_embeddings_agents_indexed"], err)
		}
		if time.Since(lastLog) >= 30*time.Second {
			fmt.Printf("  waiting for vectors: %.0f of %.0f agents\n", m["registry_embeddings_agents_embedded"], m["registry_embeddings_agents_indexed"])
			lastLog = time.Now()
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func printServeStart(s serveStart, agents int) {
	what := "start"
	if s.Mode != "" {
		what = s.Mode + " start"
		if s.Restart {
			what = s.Mode + " restart"
		}
	}
	printStart(what, s.startResult)
	fmt.Printf("  heap %4.0f MB  RSS %4.0f MB at the first search\n", s.Mem.HeapMB, s.Mem.RSSMB)
	if s.Mode == modeHybrid {
		fmt.Printf("  every agent with a vector %.1fs after start (%.0f texts sent to the API, the rest loaded); vectors %.0f MB (%.0f bytes an agent); heap %.0f MB, RSS %.0f MB\n",
			s.VectorsAt, s.Embedded, s.VectorBytes/(1<<20), s.VectorBytes/float64(max(1, agents)), s.VectorMem.HeapMB, s.VectorMem.RSSMB)
	}
}

// Fresh questions: with the semantic layer on, serve remembers the vectors
// of its last 1,024 search texts, and synth has 16 questions, so after the
// first few seconds a run would measure the cache, never the round trip
// to the embeddings API that a new question costs. freshQuestion j is one
// of 4,096 variants of them (a word of greeting before, of urgency after;
// 3 to 12 words), and the client never repeats one within a serve
// process.
var (
	freshLeads = []string{"", "please", "hey", "quickly", "now", "ok", "so", "also", "urgently", "kindly", "honestly", "basically", "again", "hi", "right", "well"}
	freshTails = []string{"", "please", "today", "asap", "quickly", "now", "thanks", "soon", "again", "tomorrow", "tonight", "instantly", "properly", "reliably", "cheaply", "securely"}
)

func freshQuestion(questions []string, j int) string {
	n := len(questions)
	j %= n * len(freshLeads) * len(freshTails)
	q := questions[j%n]
	if lead := freshLeads[(j/n)%len(freshLeads)]; lead != "" {
		q = lead + " " + q
	}
	if tail := freshTails[(j/n/len(freshLeads))%len(freshTails)]; tail != "" {
		q += " " + tail
	}
	return q
}

// freshTurns is how many question turns a phase (warmup included) takes
// at most: phase number p asks questions from p × freshTurns on, so no two
// phases ask the same.
func freshTurns(f openFlags, kinds int) int {
	return int((f.warmup+f.duration).Seconds()*f.rate)/kinds + 2
}

// groupKey names a phase of serve in a mode, as the report's medians do.
func groupKey(phase, mode string) string {
	if mode == "" {
		return phase
	}
	return phase + " " + mode
}

// groups lists the (phase, mode) pairs of a run in report order.
func groups(phases []string, semantic bool) [][2]string {
	var out [][2]string
	for _, p := range phases {
		modes := modesOf(1, semantic)
		slices.Sort(modes) // hybrid before lexical
		for _, m := range modes {
			out = append(out, [2]string{p, m})
		}
	}
	return out
}
