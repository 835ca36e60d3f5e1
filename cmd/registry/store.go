package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/embeddings"
)

// cardLimits applies the configured card size to the parser's defaults.
func cardLimits(cfg config.Config) card.Limits {
	lim := card.DefaultLimits()
	lim.MaxBytes = int(min(cfg.Outbound.MaxCardBytes, int64(maxInt)))
	return lim
}

const maxInt = int(^uint(0) >> 1)

// openStore connects to the catalog and brings its schema up to date.
// Every command migrates: goose applies only what is pending, and PostgreSQL
// replicas take an advisory lock so they do not race.
func openStore(ctx context.Context, cfg config.Config, log *slog.Logger) (*catalog.Store, error) {
	return openStoreWith(ctx, cfg, log, nil)
}

// openStoreWith is openStore for serve: its searches are embedded by sem
// (the semantic layer) when that is not nil.
func openStoreWith(ctx context.Context, cfg config.Config, log *slog.Logger, sem *embeddings.Service) (*catalog.Store, error) {
	keys, err := cfg.Storage.SecretKeys()
	if err != nil {
		return nil, err
	}
	ccfg := catalog.Config{DSN: cfg.Storage.DB, Logger: log, CardLimits: cardLimits(cfg), SecretKeys: keys,
		Listing: catalog.ListingPolicy{RequireApproval: cfg.Listing.RequireApproval, ReapproveOnChange: cfg.Listing.ReapproveOnChange}}
	if sem != nil {
		ccfg.Embedder, ccfg.Fusion = sem, fusionOf(cfg.Embeddings)
	}
	store, err := catalog.Open(ctx, ccfg)
	if err != nil {
		return nil, err
	}
	if err := store.Migrate(ctx); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

func closeStore(store *catalog.Store, log *slog.Logger) {
	if err := store.Close(); err != nil {
		log.Error("closing catalog", "err", err)
	}
}

// withStore is the set-up of the subcommands that work on the catalog: a
// logger on stderr, the store opened and migrated, closed after fn. It
// returns fn's exit code, or exitFail when the store cannot be opened.
func withStore(ctx context.Context, name string, cfg config.Config, stderr io.Writer, fn func(store *catalog.Store, log *slog.Logger) int) int {
	log := newLogger(cfg, stderr)
	store, err := openStore(ctx, cfg, log)
	if err != nil {
		log.Error(name+" failed", "err", err)
		return exitFail
	}
	defer closeStore(store, log)
	return fn(store, log)
}
