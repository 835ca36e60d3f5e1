package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/embeddings"
	"github.com/a2aregistry/registry/internal/embeddings/embeddingstest"
	"github.com/a2aregistry/registry/internal/relevance"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/search"
)

// runRelevance scores the search on the judged set (internal/relevance):
// success@3, MRR@10 and nDCG@10 over the judged cards among -n synthetic
// agents, lexical and, with -hybrid, hybrid side by side. -hybrid fake
// runs the stand-in embeddings API of embeddingstest (a hashed bag of
// words: it tests the plumbing and knows no meaning); -embeddings-url
// names a real OpenAI-compatible server on this machine.
func runRelevance(args []string) error {
	fs := flag.NewFlagSet("relevance", flag.ContinueOnError)
	n := fs.Int("n", 1000, "synthetic distractor agents")
	verbose := fs.Bool("v", false, "list each query's rank and first hits")
	hybrid := fs.Bool("hybrid", false, "also score the hybrid ranking (needs -embeddings-url, or -fake-embeddings)")
	fake := fs.Bool("fake-embeddings", false, "with -hybrid: embed with the in-process fake API (hashed bag of words, not a model)")
	url := fs.String("embeddings-url", "", "with -hybrid: base URL of an OpenAI-compatible embeddings API on this machine")
	model := fs.String("embeddings-model", "", "with -embeddings-url: the model")
	dim := fs.Int("embeddings-dimension", 384, "the model's dimension")
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
		var stop func()
		if hstore, stop, err = embedCatalog(ctx, dir, *url, *model, *dim); err != nil {
			return err
		}
		defer stop()
	}
	for _, set := range []string{relevance.SetJudged, relevance.SetHeldOut} {
		rep, err := relevance.Run(ctx, store, cat, set)
		if err != nil {
			return err
		}
		rep.Print(os.Stdout, *verbose)
		if hstore != nil {
			rep, err := relevance.Run(ctx, hstore, cat, set)
			if err != nil {
				return err
			}
			rep.Mode = "hybrid (" + *model + ")"
			rep.Print(os.Stdout, *verbose)
		}
	}
	return nil
}

// embedCatalog opens a second store on the relevance catalog whose
// searches are embedded, and runs the embeddings worker until every agent
// has a vector.
func embedCatalog(ctx context.Context, dir, url, model string, dim int) (*catalog.Store, func(), error) {
	hc := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		Timeout: -1, MaxRedirects: -1, MaxBodyBytes: 64 << 20})
	sem := embeddings.New(embeddings.NewClient(hc, embeddings.ClientConfig{URL: url, Model: model, Dimension: dim}),
		embeddings.Config{QueryTimeout: 10 * time.Second})
	store, err := catalog.Open(ctx, catalog.Config{DSN: "sqlite:" + filepath.Join(dir, "relevance.db"), Embedder: sem, Fusion: search.Fusion{}})
	if err != nil {
		return nil, nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); sem.Run(wctx, store) }()
	stop := func() { cancel(); <-done; store.Close() }
	start := time.Now()
	for {
		st := sem.State(store.EmbeddingCoverage())
		if st.Agents > 0 && st.Embedded == st.Agents {
			fmt.Printf("embedded %d agents with %s (%d dimensions) in %v\n", st.Agents, model, dim, time.Since(start).Round(time.Millisecond))
			return store, stop, nil
		}
		if st.Degraded && time.Since(start) > 30*time.Second {
			stop()
			return nil, nil, fmt.Errorf("embedding the catalog: %s", st.LastError)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
