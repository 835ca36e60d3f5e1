package main

import (
	"context"
	"flag"
	"os"

	"github.com/a2aregistry/registry/internal/relevance"
)

// runRelevance scores the search on the judged set (internal/relevance):
// success@3, MRR@10 and nDCG@10 over the judged cards among -n synthetic
// agents, lexical only until the search has a semantic layer.
func runRelevance(args []string) error {
	fs := flag.NewFlagSet("relevance", flag.ContinueOnError)
	n := fs.Int("n", 1000, "synthetic distractor agents")
	verbose := fs.Bool("v", false, "list each query's rank and first hits")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "registry-bench-relevance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	store, err := relevance.OpenTemp(ctx, dir)
	if err != nil {
		return err
	}
	defer store.Close()
	cat, err := relevance.Load(ctx, store, *n)
	if err != nil {
		return err
	}
	for _, set := range []string{relevance.SetJudged, relevance.SetHeldOut} {
		rep, err := relevance.Run(ctx, store, cat, set)
		if err != nil {
			return err
		}
		rep.Print(os.Stdout, *verbose)
	}
	return nil
}
