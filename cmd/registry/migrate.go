package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
)

func runMigrate(ctx context.Context, args []string, stderr io.Writer, getenv env) int {
	cfg, fs, code, ok := loadConfig("migrate", "[flags]", config.Logging|config.Storage, args, stderr, getenv)
	if !ok {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	return withStore(ctx, "migrate", cfg, stderr, func(store *catalog.Store, log *slog.Logger) int {
		log.Info("catalog schema up to date", "db", store.Dialect())
		return exitOK
	})
}
