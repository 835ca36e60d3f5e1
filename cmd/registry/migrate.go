package main

import (
	"context"
	"io"

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
	log := newLogger(cfg, stderr)
	store, err := openStore(ctx, cfg, log)
	if err != nil {
		log.Error("migrate failed", "err", err)
		return exitFail
	}
	defer closeStore(store, log)
	log.Info("catalog schema up to date", "db", store.Dialect())
	return exitOK
}
