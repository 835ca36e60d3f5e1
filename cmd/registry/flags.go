package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/a2aregistry/registry/internal/config"
)

// loadConfig parses a subcommand's flags and environment. ok is false when
// the command must stop with code (help printed, or a usage or
// configuration error reported on stderr).
//
// extra registers the command's own flags (those that are no setting, such
// as --json) before parsing.
func loadConfig(name, synopsis string, groups config.Group, args []string, stderr io.Writer, getenv env, extra ...func(*flag.FlagSet)) (cfg config.Config, fs *flag.FlagSet, code int, ok bool) {
	fs = flag.NewFlagSet("registry "+name, flag.ContinueOnError)
	for _, f := range extra {
		f(fs)
	}
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: registry %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	cfg, err := config.Load(fs, groups, args, getenv)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return cfg, fs, exitOK, false
	case errors.Is(err, config.ErrInvalid):
		fmt.Fprintf(stderr, "registry %s: %v\n", name, err)
		return cfg, fs, exitUsage, false
	case err != nil:
		// The flag package already printed the error and the usage.
		return cfg, fs, exitUsage, false
	}
	return cfg, fs, exitOK, true
}

// newLogger writes to w (stderr) in the configured format and level.
func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.Log.Level}
	if cfg.Log.Format == config.LogFormatJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
