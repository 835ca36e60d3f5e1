package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/crawler"
)

// runCrawl fetches and parses each URL as the crawler would, without a
// catalog, and reports what it saw: a check an agent's owner can run on
// their own card. It exits non-zero when any URL failed.
func runCrawl(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	var asJSON bool
	cfg, fs, code, ok := loadConfig("crawl", "[flags] URL...", config.Logging|config.Cards|config.Fetching, args, stderr, getenv,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&asJSON, "json", false, "print one JSON report per URL (a JSON array) instead of text")
		})
	if !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "registry crawl: no URL given")
		fs.Usage()
		return exitUsage
	}
	self, err := registrySelf(cfg.Server)
	if err != nil {
		fmt.Fprintf(stderr, "registry crawl: %v\n", err)
		return exitUsage
	}
	client := newOutboundClient(cfg, self, 0)
	defer client.CloseIdleConnections()
	fetcher := crawler.NewFetcher(client, cfg.Outbound.MaxCardBytes)
	pol := crawler.Policy{MinInterval: cfg.Crawl.MinInterval, MaxInterval: cfg.Crawl.MaxInterval, DownAfter: cfg.Crawl.DownAfter}

	var reports []crawler.CrawlReport
	failed := 0
	for i, u := range fs.Args() {
		r := crawler.Inspect(ctx, fetcher, u, cardLimits(cfg), pol)
		if !r.OK {
			failed++
		}
		if asJSON {
			reports = append(reports, r)
			continue
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := r.WriteText(stdout); err != nil {
			fmt.Fprintf(stderr, "registry crawl: %v\n", err)
			return exitFail
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
			fmt.Fprintf(stderr, "registry crawl: %v\n", err)
			return exitFail
		}
	}
	if failed > 0 {
		return exitFail
	}
	return exitOK
}
