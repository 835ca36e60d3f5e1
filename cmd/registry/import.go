package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/importer"
	"github.com/a2aregistry/registry/internal/verify"
)

// runImport adds card files to the catalog, one line per file on stdout:
//
//	PATH: created|updated|unchanged CARD_URL (NAME)
//	PATH: error: REASON
//
// Each file is parsed whole before a single upsert, so a failed file leaves
// the catalog as it was. The exit code is non-zero if any file failed.
//
// A card is filed under its content hash, unless --url says where it is
// served: then under that canonical card URL, the agent registering or
// crawling the URL updates (one file only, since a URL names one agent).
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	var servedAt, fromExport, policyPath string
	urlFlag := func(fs *flag.FlagSet) {
		fs.StringVar(&servedAt, "url", "", "the card URL the (single) FILE is served at; the card is filed under that agent")
		fs.StringVar(&fromExport, "from-export", "", "restore an empty catalog from FILE, written by `registry export`")
		fs.StringVar(&policyPath, "policy", "", "admission policy file: cards it refuses are not imported (an error line each), the others judged by it")
	}
	cfg, fs, code, ok := loadConfig("import", "[flags] FILE... | --url URL FILE | --from-export FILE", config.Logging|config.Storage|config.Cards|config.Fetching, args, stderr, getenv, urlFlag)
	if !ok {
		return code
	}
	if fromExport != "" {
		return runImportExport(ctx, cfg, fs, fromExport, servedAt, stdout, stderr)
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "registry import: no files given")
		fs.Usage()
		return exitUsage
	}
	if servedAt != "" && fs.NArg() != 1 {
		fmt.Fprintln(stderr, "registry import: --url names one agent: give exactly one file")
		fs.Usage()
		return exitUsage
	}
	if _, err := importer.CardURL(nil, servedAt); err != nil {
		fmt.Fprintf(stderr, "registry import: %v\n", err)
		return exitUsage
	}
	var pol *policyFile
	if policyPath != "" {
		var err error
		if pol, err = loadPolicyFile(policyPath, newLogger(cfg, stderr)); err != nil {
			fmt.Fprintf(stderr, "registry import: %v\n", err)
			return exitFail
		}
	}
	return withStore(ctx, "import", cfg, stderr, func(store *catalog.Store, _ *slog.Logger) int {
		if pol != nil {
			pol.attach(func(adm *verify.Admission) { store.SetAdmission(adm) })
		}
		im := &importer.Importer{Store: store, Limits: cardLimits(cfg)}
		if pol != nil {
			// The policy judges the signatures of the cards it admits:
			// keys pinned in the catalog, and jku keys fetched through the
			// guarded client.
			self, err := registrySelf(cfg.Server)
			if err != nil {
				fmt.Fprintf(stderr, "registry import: %v\n", err)
				return exitFail
			}
			client := newOutboundClient(cfg, self, 0)
			defer client.CloseIdleConnections()
			im.Prechecker = verify.New(verify.Options{Client: client, Keys: verify.CatalogKeys{Store: store},
				Names: verify.CatalogNames{Store: store}, Logger: newLogger(cfg, stderr)})
		}
		if failed := importFiles(ctx, im, fs.Args(), servedAt, stdout); failed > 0 {
			fmt.Fprintf(stderr, "registry import: %d of %d files failed\n", failed, fs.NArg())
			return exitFail
		}
		return exitOK
	})
}

// importFiles imports each path (at servedAt, when not "": see
// importer.FileAt), reports it on out and returns how many failed.
func importFiles(ctx context.Context, im *importer.Importer, paths []string, servedAt string, out io.Writer) (failed int) {
	for _, path := range paths {
		if ctx.Err() != nil {
			fmt.Fprintf(out, "%s: error: %v\n", path, context.Cause(ctx))
			failed++
			continue
		}
		res, err := im.FileAt(ctx, path, servedAt)
		if err != nil {
			fmt.Fprintf(out, "%s: error: %v\n", path, err)
			failed++
			continue
		}
		fmt.Fprintf(out, "%s: %s %s (%q)\n", path, res.Outcome, res.CardURL, res.Name)
	}
	return failed
}
