package main

import (
	"log/slog"

	"github.com/a2aregistry/registry/internal/api"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// newRegistrar builds what serves POST /api/v1/agents: a fetch through the
// guarded client, a parse, an upsert.
func newRegistrar(cfg config.Config, store *catalog.Store, client *safehttp.Client, log *slog.Logger) api.Registrar {
	fetcher := crawler.NewFetcher(client, cfg.MaxCardBytes)
	return crawler.NewRegistrar(fetcher, store, cardLimits(cfg), log)
}
