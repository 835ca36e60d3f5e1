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
		AllowNetworks:       cfg.Outbound.AllowNetworks,
		Timeout:             cfg.Outbound.FetchTimeout,
		MaxBodyBytes:        cfg.Outbound.MaxCardBytes,
		UserAgent:           "a2a-registry/" + versionString(),
		MaxIdleConnsPerHost: perHost,
		Resolver:            cfg.Outbound.Resolver,
	})
}

// proxyBodyBytes caps one response of an agent under test (a stream's
// whole body included); the run's duration limit bounds its time.
const proxyBodyBytes = 32 << 20

// newProxyClient is the guarded client test runs reach agents with: the
// same address allowlist, no overall timeout (streams last up to
// --run-max-duration, which bounds each run instead), a larger body cap
// than cards get, and no redirects: a run calls only URLs the card
// declares, and a redirect would name another.
func newProxyClient(cfg config.Config) *safehttp.Client {
	return safehttp.New(safehttp.Config{
		AllowNetworks: cfg.Outbound.AllowNetworks,
		Timeout:       -1,
		MaxBodyBytes:  proxyBodyBytes,
		MaxRedirects:  -1,
		UserAgent:     "a2a-registry/" + versionString(),
		Resolver:      cfg.Outbound.Resolver,
	})
}
