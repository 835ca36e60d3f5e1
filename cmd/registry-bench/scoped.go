package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"runtime"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/query"
	"github.com/a2aregistry/registry/internal/synth"
)

// scoped measures what caller-scoped visibility costs search (issue 13):
// the same queries through catalog.Search for an unrestricted caller
// (catalog.ScopeAll) and for a viewer in 3 groups, over a catalog with
// collections, some of them restricted, and agents in every listing
// state. The two scopes alternate query by query, so both see the same
// machine load.

type scopedFlags struct {
	catalogFlags
	collections, restricted, groups int
	member, deprecated, pending     float64
}

type scopedReport struct {
	Backend     string        `json:"backend"`
	Agents      int           `json:"agents"`
	Collections int           `json:"collections"`
	Restricted  int           `json:"restricted"`
	Groups      int           `json:"caller_groups"`
	CPUs        int           `json:"cpus"`
	Classes     []scopedClass `json:"classes"`
	All         latencyResult `json:"all_queries_unrestricted"`
	Scoped      latencyResult `json:"all_queries_scoped"`
}

type scopedClass struct {
	Name         string        `json:"name"`
	Unrestricted latencyResult `json:"unrestricted"`
	Scoped       latencyResult `json:"scoped"`
	// Ratio is the scoped p99 over the unrestricted one.
	Ratio float64 `json:"p99_ratio"`
}

func runScoped(args []string) error {
	var f scopedFlags
	fs := flag.NewFlagSet("scoped", flag.ContinueOnError)
	fs.IntVar(&f.n, "n", 100_000, "agents in the synthetic catalog")
	fs.IntVar(&f.queries, "queries", 400, "searches per query class and scope")
	fs.IntVar(&f.batch, "batch", 500, "cards per transaction during the bulk load")
	fs.Int64Var(&f.seed, "seed", 1, "generator seed")
	fs.StringVar(&f.db, "db", "", "catalog DSN (default: a fresh SQLite file in a temp dir)")
	fs.StringVar(&f.pgSchema, "pg-schema", "registry_bench_scoped", "PostgreSQL schema to (re)create for the run")
	fs.StringVar(&f.out, "json", "", "also write the figures as JSON to this file")
	fs.IntVar(&f.collections, "collections", 20, "collections")
	fs.IntVar(&f.restricted, "restricted", 15, "collections restricted to a group of their own (the others are open)")
	fs.IntVar(&f.groups, "caller-groups", 3, "groups the scoped caller holds")
	fs.Float64Var(&f.member, "member", 0.4, "share of agents put in one collection (a tenth of them in a second)")
	fs.Float64Var(&f.deprecated, "deprecated", 0.02, "share of agents deprecated")
	fs.Float64Var(&f.pending, "pending", 0.02, "share of agents pending review")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.restricted > f.collections || f.groups > f.restricted {
		return fmt.Errorf("need caller-groups <= restricted <= collections")
	}
	ctx := context.Background()
	store, done, err := openBenchStore(ctx, f.catalogFlags)
	if err != nil {
		return err
	}
	defer done()
	gen := synth.New(f.seed)
	if have, err := store.Count(ctx); err != nil {
		return err
	} else if have > 0 {
		return fmt.Errorf("catalog at %s already holds %d agents: give a fresh database", f.db, have)
	}
	ing, err := bulkLoad(ctx, store, gen, f.catalogFlags)
	if err != nil {
		return err
	}
	fmt.Printf("bulk load: %d cards in %.1fs\n", f.n, ing.Seconds)
	start := time.Now()
	if err := curate(ctx, store, gen, f); err != nil {
		return err
	}
	fmt.Printf("curation (collections, memberships, listing states): %.1fs\n", time.Since(start).Seconds())
	if err := store.WarmIndex(ctx); err != nil {
		return err
	}

	rep := scopedReport{Backend: store.Dialect(), Agents: f.n, Collections: f.collections, Restricted: f.restricted,
		Groups: f.groups, CPUs: runtime.NumCPU()}
	viewer := catalog.Scope{}
	for g := range f.groups {
		viewer.Groups = append(viewer.Groups, groupName(g))
	}
	classes := queryClasses(gen.Vocabulary())
	classes = append(classes, queryClass{"collection filter", []string{"/api/v1/agents?collection=" + url.QueryEscape(collectionName(0)),
		"/api/v1/agents?collection=" + url.QueryEscape(collectionName(f.collections-1))}})
	fmt.Printf("\n%-22s %22s %22s %8s\n", "catalog.Search", "unrestricted p50/p99", "3 groups p50/p99", "p99 ×")
	var allU, allS []float64
	for _, cl := range classes {
		qs := make([]catalog.Query, len(cl.queries))
		for i, p := range cl.queries {
			u, err := url.Parse(p)
			if err != nil {
				return err
			}
			req, err := query.ParseString(u.RawQuery)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			qs[i] = req.Query(catalog.Scope{})
		}
		un, sc, err := measureScopes(ctx, store, qs, f.queries, catalog.ScopeAll, viewer)
		if err != nil {
			return fmt.Errorf("%s: %w", cl.name, err)
		}
		allU, allS = append(allU, un...), append(allS, sc...)
		c := scopedClass{Name: cl.name,
			Unrestricted: latencyResult{Name: cl.name, P50: pct(un, 50), P99: pct(un, 99), Max: pct(un, 100)},
			Scoped:       latencyResult{Name: cl.name, P50: pct(sc, 50), P99: pct(sc, 99), Max: pct(sc, 100)}}
		c.Ratio = c.Scoped.P99 / c.Unrestricted.P99
		rep.Classes = append(rep.Classes, c)
		fmt.Printf("%-22s %10.2f / %8.2f ms %10.2f / %8.2f ms %8.2f\n", cl.name, c.Unrestricted.P50, c.Unrestricted.P99,
			c.Scoped.P50, c.Scoped.P99, c.Ratio)
	}
	rep.All = latencyResult{Name: "all", P50: pct(allU, 50), P99: pct(allU, 99), Max: pct(allU, 100)}
	rep.Scoped = latencyResult{Name: "all", P50: pct(allS, 50), P99: pct(allS, 99), Max: pct(allS, 100)}
	fmt.Printf("%-22s %10.2f / %8.2f ms %10.2f / %8.2f ms %8.2f\n", "all classes", rep.All.P50, rep.All.P99,
		rep.Scoped.P50, rep.Scoped.P99, rep.Scoped.P99/rep.All.P99)
	if f.out != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(f.out, b, 0o644)
	}
	return nil
}

func collectionName(i int) string { return fmt.Sprintf("Collection %02d", i) }
func groupName(i int) string      { return fmt.Sprintf("team-%02d", i) }

// curate creates the collections (the first `restricted` each open to one
// group of its own), puts a share of the agents in one of them (a tenth
// of those in a second), and moves some agents to deprecated and pending.
func curate(ctx context.Context, store *catalog.Store, gen *synth.Generator, f scopedFlags) error {
	actor := catalog.System("bench")
	for i := range f.collections {
		c := catalog.Collection{Name: collectionName(i)}
		if i < f.restricted {
			c.Groups = []string{groupName(i)}
		}
		if _, _, err := store.SaveCollection(ctx, actor, c); err != nil {
			return err
		}
	}
	rnd := rand.New(rand.NewPCG(uint64(f.seed), 13))
	members := make([][]string, f.collections)
	for i := range f.n {
		r := rnd.Float64()
		if r >= f.member+f.deprecated+f.pending {
			continue
		}
		a, err := store.AgentByURL(ctx, gen.CardURL(i))
		if err != nil {
			return err
		}
		switch {
		case r < f.member:
			c := rnd.IntN(f.collections)
			members[c] = append(members[c], a.ID)
			if rnd.IntN(10) == 0 {
				c2 := rnd.IntN(f.collections)
				members[c2] = append(members[c2], a.ID)
			}
		case r < f.member+f.deprecated:
			if _, err := store.SetListing(ctx, actor, catalog.ScopeAll, a.ID,
				catalog.ListingChange{State: catalog.ListingDeprecated, Reason: "bench"}); err != nil {
				return err
			}
		default:
			if _, err := store.SetListing(ctx, actor, catalog.ScopeAll, a.ID, catalog.ListingChange{State: catalog.ListingPending}); err != nil {
				return err
			}
		}
	}
	for i, ids := range members {
		for start := 0; start < len(ids); start += 1000 {
			if err := store.AddToCollection(ctx, actor, collectionName(i), ids[start:min(start+1000, len(ids))]...); err != nil {
				return err
			}
		}
	}
	return nil
}

// measureScopes runs n searches per scope, alternating the two query by
// query after a warm-up, and returns their latencies in ms.
func measureScopes(ctx context.Context, store *catalog.Store, qs []catalog.Query, n int, a, b catalog.Scope) ([]float64, []float64, error) {
	run := func(q catalog.Query, sc catalog.Scope) (float64, error) {
		q.Scope = sc
		t := time.Now()
		if _, err := store.Search(ctx, q); err != nil {
			return 0, err
		}
		return float64(time.Since(t).Microseconds()) / 1000, nil
	}
	for i := range min(20, n) {
		for _, sc := range []catalog.Scope{a, b} {
			if _, err := run(qs[i%len(qs)], sc); err != nil {
				return nil, nil, err
			}
		}
	}
	la, lb := make([]float64, 0, n), make([]float64, 0, n)
	for i := range n {
		q := qs[i%len(qs)]
		first, second := a, b
		if i%2 == 1 {
			first, second = b, a
		}
		d1, err := run(q, first)
		if err != nil {
			return nil, nil, err
		}
		d2, err := run(q, second)
		if err != nil {
			return nil, nil, err
		}
		if i%2 == 1 {
			d1, d2 = d2, d1
		}
		la, lb = append(la, d1), append(lb, d2)
	}
	return la, lb, nil
}
