package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/embeddings"
	"github.com/a2aregistry/registry/internal/embeddings/embeddingstest"
	"github.com/a2aregistry/registry/internal/relevance"
	"github.com/a2aregistry/registry/internal/search"
)

// runRelevance scores the search on the judged set (internal/relevance):
// success@3, MRR@10 and nDCG@10 over the judged cards among -n synthetic
// agents, lexical and, with -hybrid, hybrid side by side. -hybrid fake
// runs the stand-in embeddings API of embeddingstest (a hashed bag of
// words: it tests the plumbing and knows no meaning); -embeddings-url
// names a real OpenAI-compatible server on this machine (such as
// internal/relevance/testdata/embedserver, a real model run offline).
func runRelevance(args []string) error {
	fs := flag.NewFlagSet("relevance", flag.ContinueOnError)
	n := fs.Int("n", 1000, "synthetic distractor agents")
	verbose := fs.Bool("v", false, "list each query's rank and first hits")
	hybrid := fs.Bool("hybrid", false, "also score the hybrid ranking (needs -embeddings-url, or -fake-embeddings)")
	fake := fs.Bool("fake-embeddings", false, "with -hybrid: embed with the in-process fake API (hashed bag of words, not a model)")
	url := fs.String("embeddings-url", "", "with -hybrid: base URL of an OpenAI-compatible embeddings API on this machine")
	model := fs.String("embeddings-model", "", "with -embeddings-url: the model")
	dim := fs.Int("embeddings-dimension", 384, "the model's dimension")
	batch := fs.Int("embeddings-batch-size", embeddings.DefaultBatchSize, "agents' texts sent in one request")
	timeout := fs.Duration("embeddings-timeout", embeddings.DefaultTimeout, "time limit of one request embedding agents' texts (a model on a loaded CPU needs more than serve's default)")
	lexW := fs.Float64("lexical-weight", 1, "weight of the lexical ranking in the fusion (serve --embeddings-lexical-weight)")
	vecW := fs.Float64("vector-weight", 1, "weight of the vector ranking in the fusion (serve --embeddings-vector-weight)")
	minSim := fs.Float64("min-similarity", 0, "cosine similarity below which an agent is not found by its vector alone (serve --embeddings-min-similarity)")
	queryPrefix := fs.String("embeddings-query-prefix", "", "text put before each question sent to the API (serve --embeddings-query-prefix)")
	docPrefix := fs.String("embeddings-document-prefix", "", "text put before each agent's text sent to the API (serve --embeddings-document-prefix)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *lexW < 0 || *vecW < 0 || *lexW+*vecW == 0 {
		return errors.New("-lexical-weight and -vector-weight must be ≥ 0, not both 0")
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
	var hstore *catalog.Store
	if *hybrid {
		if *fake {
			srv := embeddingstest.New(*dim)
			defer srv.Close()
			*url, *model = srv.BaseURL(), embeddingstest.Model
		}
		if *url == "" || *model == "" {
			return errors.New("-hybrid needs -fake-embeddings or -embeddings-url and -embeddings-model")
		}
		h := relevance.Hybrid{
			Client: embeddings.ClientConfig{URL: *url, Model: *model, Dimension: *dim},
			Config: embeddings.Config{BatchSize: *batch, Timeout: *timeout, QueryTimeout: 10 * time.Second,
				QueryPrefix: *queryPrefix, DocumentPrefix: *docPrefix},
			Fusion: search.Fusion{LexicalWeight: *lexW, VectorWeight: *vecW, MinSimilarity: float32(*minSim)},
		}
		st, took, stop, err := relevance.OpenHybrid(ctx, dir, h)
		if err != nil {
			return err
		}
		defer stop()
		hstore = st
		fmt.Printf("embedded %d agents with %s (%d dimensions, prefixes %q and %q) in %v; fusion: lexical weight %g, vector weight %g, min similarity %g\n",
			cat.Judged+cat.Synthetic, *model, *dim, *queryPrefix, *docPrefix, took.Round(time.Millisecond), *lexW, *vecW, *minSim)
	}
	names, err := relevance.RunNames(ctx, store)
	if err != nil {
		return err
	}
	fmt.Println("lexical:", names)
	if hstore != nil {
		names, err := relevance.RunNames(ctx, hstore)
		if err != nil {
			return err
		}
		fmt.Printf("hybrid (%s): %s\n", *model, names)
	}
	for _, set := range []string{relevance.SetJudged, relevance.SetHeldOut} {
		rep, err := relevance.Run(ctx, store, cat, set)
		if err != nil {
			return err
		}
		rep.Print(os.Stdout, *verbose)
		if hstore == nil {
			continue
		}
		hrep, err := relevance.Run(ctx, hstore, cat, set)
		if err != nil {
			return err
		}
		hrep.Mode = "hybrid (" + *model + ")"
		hrep.Print(os.Stdout, *verbose)
		// Again, with every query's vector remembered: the search's own
		// time, without the API's.
		warm, err := relevance.Run(ctx, hstore, cat, set)
		if err != nil {
			return err
		}
		fmt.Printf("hybrid, query vectors cached: latency %s\n", warm.LatencySummary())
		relevance.PrintChanges(os.Stdout, rep, hrep)
	}
	return nil
}
