// Package relevance measures how well the catalog's search answers
// questions people ask: a judged set of queries in users' words, each with
// the agents a good answer shows (graded), run against a catalog of
// hand-written and real-world cards among synthetic ones, scored by
// success@3, MRR@10 and nDCG@10 (Järvelin & Kekäläinen, "Cumulated
// gain-based evaluation of IR techniques", TOIS 20(4), 2002).
//
// The judged set was written before the search was tuned against it, and
// its queries avoid the cards' own wording; keep it that way: add queries,
// never reword one to fit the ranking. Synthetic agents are judged by the
// skills they offer (a synthetic agent with the hotel-booking skill is a
// good answer to "book a hotel room"), the others are distractors.
package relevance

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/synth"
)

//go:embed testdata/cards.json testdata/judged.json testdata/heldout.json testdata/real/*.json
var files embed.FS

// Judgment is one query and the agents a good answer shows: judged cards
// by name, synthetic agents by the id of a skill they offer. Grade 3 is
// the agent asked for, 2 a good answer, 1 a partial one.
type Judgment struct {
	Query    string         `json:"q"`
	Relevant map[string]int `json:"relevant"`
	Synth    map[string]int `json:"synth,omitempty"`
}

// Sets of judged queries: the judged set, written before the search was
// tuned and tuned against since, and the held-out set, written after the
// tuning and never tuned against (its figures tell how far the tuning
// generalises). Tune against neither; when the held-out set has been
// looked at to change the search, write a new one.
const (
	SetJudged  = "judged"
	SetHeldOut = "heldout"
)

// Set returns a set of judged queries by name.
func Set(name string) ([]Judgment, error) {
	raw, err := files.ReadFile("testdata/" + name + ".json")
	if err != nil {
		return nil, err
	}
	var js []Judgment
	if err := json.Unmarshal(raw, &js); err != nil {
		return nil, fmt.Errorf("decoding judged set: %w", err)
	}
	return js, nil
}

// shortCard is a hand-written card as testdata/cards.json holds it: the
// parts search reads; cardJSON adds what A2A requires of the rest.
type shortCard struct {
	Name        string   `json:"name"`
	Provider    string   `json:"provider"`
	Description string   `json:"description"`
	InputModes  []string `json:"inputModes"`
	OutputModes []string `json:"outputModes"`
	Skills      []struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
		Examples    []string `json:"examples,omitempty"`
	} `json:"skills"`
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func (c shortCard) cardJSON() ([]byte, string, error) {
	slug := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(c.Name), "-"), "-")
	base := "https://" + slug + ".agents.example"
	modes := func(m []string) []string {
		if len(m) == 0 {
			return []string{"text/plain", "application/json"}
		}
		return m
	}
	full := map[string]any{
		"protocolVersion":    "0.3.0",
		"name":               c.Name,
		"description":        c.Description,
		"url":                base + "/a2a",
		"preferredTransport": "JSONRPC",
		"version":            "1.0.0",
		"provider":           map[string]string{"organization": c.Provider, "url": base},
		"capabilities":       map[string]bool{"streaming": false},
		"defaultInputModes":  modes(c.InputModes),
		"defaultOutputModes": modes(c.OutputModes),
		"skills":             c.Skills,
	}
	raw, err := json.Marshal(full)
	return raw, base + "/.well-known/agent-card.json", err
}

// Catalog describes the catalog a run searches.
type Catalog struct {
	// Synthetic is the number of synthetic distractor agents.
	Synthetic int
	// Judged counts the hand-written and real-world cards.
	Judged int
}

// Load stores the judged cards and n synthetic agents in store, which
// should be empty.
func Load(ctx context.Context, store *catalog.Store, n int) (Catalog, error) {
	lim := card.DefaultLimits()
	actor := catalog.System("relevance")
	var ins []catalog.UpsertInput
	add := func(raw []byte, url string) error {
		c, err := card.Parse(raw, lim)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", url, err)
		}
		ins = append(ins, catalog.UpsertInput{CardURL: url, Card: c, Source: catalog.SourceImport})
		return nil
	}
	raw, err := files.ReadFile("testdata/cards.json")
	if err != nil {
		return Catalog{}, err
	}
	var short []shortCard
	if err := json.Unmarshal(raw, &short); err != nil {
		return Catalog{}, fmt.Errorf("decoding cards: %w", err)
	}
	for _, c := range short {
		raw, url, err := c.cardJSON()
		if err != nil {
			return Catalog{}, err
		}
		if err := add(raw, url); err != nil {
			return Catalog{}, err
		}
	}
	real, err := fs.Glob(files, "testdata/real/*.json")
	if err != nil {
		return Catalog{}, err
	}
	for _, p := range real {
		raw, err := files.ReadFile(p)
		if err != nil {
			return Catalog{}, err
		}
		name := strings.TrimSuffix(path.Base(p), ".json")
		if err := add(raw, "https://"+strings.ReplaceAll(name, "_", "-")+".real.example/.well-known/agent-card.json"); err != nil {
			return Catalog{}, err
		}
	}
	cat := Catalog{Synthetic: n, Judged: len(ins)}
	gen := synth.New(1)
	for i := range n {
		if err := add(gen.Card(i), gen.CardURL(i)); err != nil {
			return Catalog{}, err
		}
	}
	for from := 0; from < len(ins); from += 500 {
		if _, err := store.UpsertBatch(ctx, actor, ins[from:min(from+500, len(ins))]); err != nil {
			return Catalog{}, fmt.Errorf("storing cards: %w", err)
		}
	}
	return cat, nil
}

// OpenTemp opens a fresh SQLite catalog in dir, migrated.
func OpenTemp(ctx context.Context, dir string) (*catalog.Store, error) {
	store, err := catalog.Open(ctx, catalog.Config{DSN: "sqlite:" + filepath.Join(dir, "relevance.db")})
	if err != nil {
		return nil, err
	}
	if err := store.Migrate(ctx); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// QueryResult is how one judged query fared.
type QueryResult struct {
	Query string
	// Top names the first hits, at most ten.
	Top []string
	// Rank is the 1-based rank of the first hit of grade 2 or more, 0 when
	// none is in the first ten.
	Rank int
	NDCG float64
	// Took is the search's wall time (with the semantic layer on, the
	// embedding of the query's text included unless remembered).
	Took time.Duration
}

// Report holds the figures of a run.
type Report struct {
	// Set names the set of queries run.
	Set                 string
	Catalog             Catalog
	Queries             []QueryResult
	SuccessAt3, MRR10   float64
	NDCG10              float64
	Succeeded, Answered int
	// Mode labels the ranking measured: "lexical" unless the caller says
	// otherwise; Hybrid counts the queries the semantic layer ranked too.
	Mode   string
	Hybrid int
}

// Run asks every query of the named set of store and scores the answers.
// Synthetic agents are told apart by their card URLs, so that one named
// like a judged card is not taken for it.
func Run(ctx context.Context, store *catalog.Store, cat Catalog, set string) (Report, error) {
	js, err := Set(set)
	if err != nil {
		return Report{}, err
	}
	// Every question meets a built index: a search that comes early in
	// a large build answers ErrIndexNotReady (slow machines, the race
	// detector), which says nothing of relevance.
	if err := store.WarmIndex(ctx); err != nil {
		return Report{}, err
	}
	rep := Report{Catalog: cat, Set: set}
	for _, j := range js {
		start := time.Now()
		page, err := store.Search(ctx, catalog.Query{Text: j.Query, Limit: 10, FacetLimit: 1})
		if err != nil {
			return Report{}, fmt.Errorf("searching %q: %w", j.Query, err)
		}
		r := QueryResult{Query: j.Query, Took: time.Since(start)}
		var gains []int
		for i, it := range page.Items {
			r.Top = append(r.Top, it.Name)
			g := 0
			if !synthetic(it.CardURL) {
				g = j.Relevant[it.Name]
			} else {
				for _, sk := range it.Skills {
					g = max(g, j.Synth[sk.ID])
				}
			}
			gains = append(gains, g)
			if g >= 2 && r.Rank == 0 {
				r.Rank = i + 1
			}
		}
		if len(page.Items) > 0 {
			rep.Answered++
		}
		if page.Semantic != nil && page.Semantic.Hybrid {
			rep.Hybrid++
		}
		ideal, err := idealGains(ctx, store, j)
		if err != nil {
			return Report{}, err
		}
		r.NDCG = ndcg(gains, ideal)
		if r.Rank > 0 && r.Rank <= 3 {
			rep.Succeeded++
		}
		if r.Rank > 0 {
			rep.MRR10 += 1 / float64(r.Rank)
		}
		rep.NDCG10 += r.NDCG
		rep.Queries = append(rep.Queries, r)
	}
	n := float64(len(js))
	rep.SuccessAt3 = float64(rep.Succeeded) / n
	rep.MRR10 /= n
	rep.NDCG10 /= n
	return rep, nil
}

// synthetic tells a synthetic agent's card URL (synth.Generator.CardURL)
// from a judged card's: judged cards live under .example hosts of ours.
func synthetic(url string) bool {
	h := hostOf(url)
	return !strings.HasSuffix(h, ".agents.example") && !strings.HasSuffix(h, ".real.example")
}

func hostOf(url string) string {
	s := strings.TrimPrefix(url, "https://")
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	return s
}

// idealGains lists the grades of every agent judged relevant to j: the
// judged cards, and the synthetic agents offering a judged skill (counted
// by a skill filter, at most ten each).
func idealGains(ctx context.Context, store *catalog.Store, j Judgment) ([]int, error) {
	var out []int
	for _, g := range j.Relevant {
		out = append(out, g)
	}
	for id, g := range j.Synth {
		page, err := store.Search(ctx, catalog.Query{Filters: map[string][]string{"skill": {id}}, Limit: 10, FacetLimit: 1})
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			if synthetic(it.CardURL) {
				out = append(out, g)
			}
		}
	}
	return out, nil
}

// ndcg is nDCG@10 of the gains (grades in rank order) against the ideal
// order of the judged grades, with gain 2^g-1.
func ndcg(gains, judged []int) float64 {
	dcg := func(gs []int) float64 {
		s := 0.0
		for i, g := range gs[:min(len(gs), 10)] {
			s += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i+2))
		}
		return s
	}
	var ideal []int
	for _, g := range judged {
		ideal = append(ideal, g)
	}
	slices.SortFunc(ideal, func(a, b int) int { return b - a })
	best := dcg(ideal)
	if best == 0 {
		return 0
	}
	return dcg(gains) / best
}

// Print writes the report: the figures, then each query's first hits.
func (r Report) Print(w io.Writer, verbose bool) {
	fmt.Fprintf(w, "%s set: %d judged cards among %d synthetic agents; %d queries, %d answered\n",
		r.Set, r.Catalog.Judged, r.Catalog.Synthetic, len(r.Queries), r.Answered)
	mode := r.mode()
	fmt.Fprintf(w, "%s: success@3 %.3f (%d/%d)  MRR@10 %.3f  nDCG@10 %.3f", mode,
		r.SuccessAt3, r.Succeeded, len(r.Queries), r.MRR10, r.NDCG10)
	if r.Hybrid > 0 || r.Mode != "" {
		fmt.Fprintf(w, "  (%d/%d ranked hybrid)", r.Hybrid, len(r.Queries))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  search latency %s\n", r.LatencySummary())
	if !verbose {
		return
	}
	for _, q := range r.Queries {
		mark := "miss"
		if q.Rank > 0 {
			mark = fmt.Sprintf("#%d", q.Rank)
		}
		top := q.Top[:min(len(q.Top), 3)]
		fmt.Fprintf(w, "  %-5s %-55q %s\n", mark, q.Query, strings.Join(top, " | "))
	}
}

// LatencySummary gives the median, 90th percentile and maximum of the
// searches' wall times.
func (r Report) LatencySummary() string {
	ds := make([]time.Duration, 0, len(r.Queries))
	for _, q := range r.Queries {
		ds = append(ds, q.Took)
	}
	if len(ds) == 0 {
		return "none"
	}
	slices.Sort(ds)
	at := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	return fmt.Sprintf("p50 %s  p90 %s  max %s (%d searches)", ms(at(0.5)), ms(at(0.9)), ms(ds[len(ds)-1]), len(ds))
}

// PrintChanges lists the queries whose first good hit moved between two
// runs of the same set (before → after), the rest being unchanged.
func PrintChanges(w io.Writer, before, after Report) {
	rank := func(r int) string {
		if r == 0 {
			return "miss"
		}
		return fmt.Sprintf("#%d", r)
	}
	byQuery := make(map[string]QueryResult, len(after.Queries))
	for _, q := range after.Queries {
		byQuery[q.Query] = q
	}
	var better, worse int
	for _, b := range before.Queries {
		a, ok := byQuery[b.Query]
		if !ok || a.Rank == b.Rank {
			continue
		}
		if a.Rank != 0 && (b.Rank == 0 || a.Rank < b.Rank) {
			better++
		} else {
			worse++
		}
		fmt.Fprintf(w, "  %-5s → %-5s %q\n", rank(b.Rank), rank(a.Rank), b.Query)
	}
	fmt.Fprintf(w, "  %s → %s: %d queries ranked better, %d worse, %d the same\n", before.mode(), after.mode(), better, worse, len(before.Queries)-better-worse)
}

func (r Report) mode() string {
	if r.Mode == "" {
		return "lexical"
	}
	return r.Mode
}

// NameResult is how the searches for the hand-written cards' own names
// fared: an exact match ranks first (issue #22), whatever else the words or
// a vector favour.
type NameResult struct {
	First, Asked int
	// Misses lists the names not ranked first, with their rank (0 when
	// not in the first ten).
	Misses []NameMiss
}

// NameMiss is a name search that did not put its card first.
type NameMiss struct {
	Name string
	Rank int
}

// RunNames searches store for the name of every hand-written card.
func RunNames(ctx context.Context, store *catalog.Store) (NameResult, error) {
	raw, err := files.ReadFile("testdata/cards.json")
	if err != nil {
		return NameResult{}, err
	}
	var short []shortCard
	if err := json.Unmarshal(raw, &short); err != nil {
		return NameResult{}, fmt.Errorf("decoding cards: %w", err)
	}
	if err := store.WarmIndex(ctx); err != nil {
		return NameResult{}, err
	}
	var r NameResult
	for _, c := range short {
		page, err := store.Search(ctx, catalog.Query{Text: c.Name, Limit: 10, FacetLimit: 1})
		if err != nil {
			return NameResult{}, fmt.Errorf("searching %q: %w", c.Name, err)
		}
		rank := 0
		for i, it := range page.Items {
			if it.Name == c.Name && !synthetic(it.CardURL) {
				rank = i + 1
				break
			}
		}
		r.Asked++
		if rank == 1 {
			r.First++
		} else {
			r.Misses = append(r.Misses, NameMiss{Name: c.Name, Rank: rank})
		}
	}
	return r, nil
}

// String is the result on one line.
func (r NameResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cards' own names: %d/%d ranked first", r.First, r.Asked)
	for i, m := range r.Misses {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString(", ")
		}
		if m.Rank == 0 {
			fmt.Fprintf(&b, "%q miss", m.Name)
		} else {
			fmt.Fprintf(&b, "%q #%d", m.Name, m.Rank)
		}
	}
	if len(r.Misses) > 0 {
		b.WriteString(")")
	}
	return b.String()
}
