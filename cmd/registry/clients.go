package main

import (
	"fmt"
	"log/slog"

	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/embeddings"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/search"
)

// registrySelf is the registry's own server — its listen address and
// public URL — which no outbound client may reach, whatever
// --allow-networks opens (safehttp.Self): a card, JWKS, token or probe URL
// naming it would have the registry call its own API from inside. One
// value is shared by every client of a process, so that serve's Bind (the
// port a listen address of port 0 got) and a later Self.Exempt (the
// registry's own card and interfaces, once it is an A2A agent) reach them
// all. Subcommands that serve nothing still refuse it: a registry may be
// serving there.
func registrySelf(s config.Server) (*safehttp.Self, error) {
	self, err := safehttp.NewSelf(s.Listen, s.PublicURL)
	if err != nil {
		return nil, fmt.Errorf("the registry's own address: %w", err)
	}
	return self, nil
}

// newOutboundClient is the guarded HTTP client every subcommand reaches
// agents with: the configured address allowlist, fetch timeout and card
// size cap, our User-Agent, and never the registry itself. perHost keeps
// that many idle connections to one host (the crawler's per-host
// concurrency, so crawl connections are reused, not reopened); zero keeps
// the client's default.
func newOutboundClient(cfg config.Config, self *safehttp.Self, perHost int) *safehttp.Client {
	return safehttp.New(safehttp.Config{
		Self:                self,
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
func newProxyClient(cfg config.Config, self *safehttp.Self) *safehttp.Client {
	return safehttp.New(safehttp.Config{
		Self:          self,
		AllowNetworks: cfg.Outbound.AllowNetworks,
		Timeout:       -1,
		MaxBodyBytes:  proxyBodyBytes,
		MaxRedirects:  -1,
		UserAgent:     "a2a-registry/" + versionString(),
		Resolver:      cfg.Outbound.Resolver,
	})
}

// newEmbeddings is search's semantic layer when --embeddings-url is set,
// nil otherwise. Its requests go through a guarded client of their own —
// the same address allowlist and never the registry itself, no redirects
// (a POST is not replayed elsewhere), a body cap sized for a batch of
// vectors in JSON — and each is bounded by the layer's own timeouts.
func newEmbeddings(cfg config.Config, self *safehttp.Self, log *slog.Logger) (*embeddings.Service, *safehttp.Client, error) {
	e := cfg.Embeddings
	if !e.Enabled() {
		return nil, nil, nil
	}
	key, err := e.Key()
	if err != nil {
		return nil, nil, err
	}
	hc := safehttp.New(safehttp.Config{
		Self:          self,
		AllowNetworks: cfg.Outbound.AllowNetworks,
		Timeout:       -1,
		// A float in JSON takes up to about 25 bytes.
		MaxBodyBytes: int64(e.BatchSize)*int64(e.Dimension)*25 + 1<<20,
		MaxRedirects: -1,
		UserAgent:    "a2a-registry/" + versionString(),
		Resolver:     cfg.Outbound.Resolver,
	})
	client := embeddings.NewClient(hc, embeddings.ClientConfig{URL: e.URL, Model: e.Model, Dimension: e.Dimension, Key: key.Reveal()})
	return embeddings.New(client, embeddings.Config{BatchSize: e.BatchSize, Timeout: e.Timeout, QueryTimeout: e.QueryTimeout,
		QueryPrefix: e.QueryPrefix, DocumentPrefix: e.DocumentPrefix, Log: log.With("component", "embeddings")}), hc, nil
}

// fusionOf is the search index's fusion of the configured weights.
func fusionOf(e config.Embeddings) search.Fusion {
	return search.Fusion{LexicalWeight: e.LexicalWeight, VectorWeight: e.VectorWeight, MinSimilarity: float32(e.MinSimilarity)}
}

// newManifestClient is the guarded client sources read manifests with:
// the same address allowlist and fetch timeout as cards, and the
// manifest size cap (--source-max-bytes), which is larger than a card's.
func newManifestClient(cfg config.Config, self *safehttp.Self) *safehttp.Client {
	return safehttp.New(safehttp.Config{
		Self:          self,
		AllowNetworks: cfg.Outbound.AllowNetworks,
		Timeout:       cfg.Outbound.FetchTimeout,
		MaxBodyBytes:  cfg.Sources.MaxBytes,
		UserAgent:     "a2a-registry/" + versionString(),
		Resolver:      cfg.Outbound.Resolver,
	})
}
