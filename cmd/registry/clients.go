package main

import (
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// newOutboundClient is the guarded HTTP client every subcommand reaches
// agents with: the configured address allowlist, fetch timeout and card
// size cap, and our User-Agent. perHost keeps that many idle connections
// to one host (the crawler's per-host concurrency, so crawl connections
// are reused, not reopened); zero keeps the client's default.
func newOutboundClient(cfg config.Config, perHost int) *safehttp.Client {
	return safehttp.New(safehttp.Config{
		AllowNetworks:       cfg.AllowNetworks,
		Timeout:             cfg.FetchTimeout,
		MaxBodyBytes:        cfg.MaxCardBytes,
		UserAgent:           "a2a-registry/" + versionString(),
		MaxIdleConnsPerHost: perHost,
	})
}
