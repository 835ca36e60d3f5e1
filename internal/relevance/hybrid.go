package relevance

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/embeddings"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/search"
)

// Hybrid says how to rank the catalog with the semantic layer on: the
// embeddings API (on this machine), how agents are sent to it, and the
// fusion.
type Hybrid struct {
	Client embeddings.ClientConfig
	Config embeddings.Config
	Fusion search.Fusion
	// Patience is how long the catalog may go without progress in its
	// embedding before OpenHybrid gives up; zero means a minute.
	Patience time.Duration
}

// OpenHybrid opens a second store on the catalog OpenTemp made in dir,
// whose searches are embedded, and runs the embeddings worker until every
// agent has a vector. stop ends the worker and closes the store.
func OpenHybrid(ctx context.Context, dir string, h Hybrid) (store *catalog.Store, took time.Duration, stop func(), err error) {
	hc := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		Timeout: -1, MaxRedirects: -1, MaxBodyBytes: 64 << 20})
	sem := embeddings.New(embeddings.NewClient(hc, h.Client), h.Config)
	store, err = catalog.Open(ctx, catalog.Config{DSN: "sqlite:" + filepath.Join(dir, "relevance.db"), Embedder: sem, Fusion: h.Fusion})
	if err != nil {
		return nil, 0, nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); sem.Run(wctx, store) }()
	stop = func() { cancel(); <-done; store.Close() }
	patience := h.Patience
	if patience <= 0 {
		patience = time.Minute
	}
	start := time.Now()
	progress, last := start, -1
	for {
		st := sem.State(store.EmbeddingCoverage())
		if st.Agents > 0 && st.Embedded == st.Agents {
			return store, time.Since(start), stop, nil
		}
		if st.Embedded != last {
			progress, last = time.Now(), st.Embedded
		}
		// The worker retries a failed batch with backoff; a catalog
		// whose embedding has stalled that long is not going to finish.
		if st.Degraded && time.Since(progress) > patience {
			stop()
			return nil, 0, nil, fmt.Errorf("embedding the catalog (%d of %d agents done): %s", st.Embedded, st.Agents, st.LastError)
		}
		select {
		case <-ctx.Done():
			stop()
			return nil, 0, nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
