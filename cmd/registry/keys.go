package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/verify"
)

const keysUsage = `Usage:
  registry keys add --origin ORIGIN... [--kid KID] [--not-after TIME] JWK_FILE
  registry keys list [--json]
  registry keys revoke ID

Manage the trust store of pinned card-signing keys. A pinned key overrides
a signature's jku for cards on its origins; adding or revoking one makes the
running registry re-verify the cards whose signatures name its kid.
`

// runKeys manages the catalog's trusted keys. An admin-only HTTP API will
// replace it once sign-in exists; until then the database is the access
// control.
func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, keysUsage)
		return exitUsage
	}
	switch args[0] {
	case "add":
		return runKeysAdd(ctx, args[1:], stdout, stderr, getenv)
	case "list":
		return runKeysList(ctx, args[1:], stdout, stderr, getenv)
	case "revoke":
		return runKeysRevoke(ctx, args[1:], stdout, stderr, getenv)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, keysUsage)
		return exitOK
	}
	fmt.Fprintf(stderr, "registry keys: unknown action %q\n\n%s", args[0], keysUsage)
	return exitUsage
}

func runKeysAdd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	var (
		kid, notAfter string
		origins       stringsFlag
	)
	cfg, fs, code, ok := loadConfig("keys add", "--origin ORIGIN... [--kid KID] [--not-after TIME] JWK_FILE",
		config.Logging|config.Storage, args, stderr, getenv, func(fs *flag.FlagSet) {
			fs.Var(&origins, "origin", "card origin (https://host[:port]) the key may sign for, or * for any; repeatable, at least one")
			fs.StringVar(&kid, "kid", "", "the kid signatures name (default: the JWK's kid)")
			fs.StringVar(&notAfter, "not-after", "", "expiry of the key, RFC 3339 (e.g. 2027-01-01T00:00:00Z)")
		})
	if !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "registry keys add: give exactly one JWK file")
		fs.Usage()
		return exitUsage
	}
	var expiry time.Time
	if notAfter != "" {
		t, err := time.Parse(time.RFC3339, notAfter)
		if err != nil {
			fmt.Fprintf(stderr, "registry keys add: --not-after: %v\n", err)
			return exitUsage
		}
		expiry = t
	}
	data, err := readFileMax(fs.Arg(0), verify.DefaultMaxJWKSBytes)
	if err != nil {
		fmt.Fprintf(stderr, "registry keys add: %v\n", err)
		return exitFail
	}
	k, err := verify.NewTrustedKey(data, kid, origins, expiry)
	if err != nil {
		fmt.Fprintf(stderr, "registry keys add: %s: %v\n", fs.Arg(0), err)
		return exitUsage
	}
	return withStore(ctx, "keys add", cfg, stderr, func(store *catalog.Store, log *slog.Logger) int {
		added, err := store.AddTrustedKey(ctx, keysActor, k)
		if errors.Is(err, catalog.ErrConflict) {
			fmt.Fprintf(stderr, "registry keys add: this key (thumbprint %s) is pinned already; revoke it first to change it\n", k.Thumbprint)
			return exitFail
		}
		if err != nil {
			log.Error("keys add failed", "err", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "added %s (kid %s, thumbprint %s) for %s\n", added.ID, added.KID, added.Thumbprint, strings.Join(added.Origins, ", "))
		return exitOK
	})
}

func runKeysList(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	var asJSON bool
	cfg, fs, code, ok := loadConfig("keys list", "[--json]", config.Logging|config.Storage, args, stderr, getenv,
		func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print the keys as JSON") })
	if !ok {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	return withStore(ctx, "keys list", cfg, stderr, func(store *catalog.Store, log *slog.Logger) int {
		keys, err := store.TrustedKeys(ctx)
		if err != nil {
			log.Error("keys list failed", "err", err)
			return exitFail
		}
		return writeKeys(stdout, keys, asJSON)
	})
}

func writeKeys(stdout io.Writer, keys []catalog.TrustedKey, asJSON bool) int {
	if asJSON {
		out := make([]trustedKeyJSON, len(keys))
		for i, k := range keys {
			out[i] = newTrustedKeyJSON(k)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return exitFail
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKID\tTHUMBPRINT\tORIGINS\tNOT AFTER\tREVOKED")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.KID, k.Thumbprint, strings.Join(k.Origins, ","),
			timeOrDash(k.NotAfter), timeOrDash(k.RevokedAt))
	}
	if err := tw.Flush(); err != nil {
		return exitFail
	}
	return exitOK
}

func runKeysRevoke(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	cfg, fs, code, ok := loadConfig("keys revoke", "ID", config.Logging|config.Storage, args, stderr, getenv)
	if !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "registry keys revoke: give exactly one key id (see registry keys list)")
		fs.Usage()
		return exitUsage
	}
	return withStore(ctx, "keys revoke", cfg, stderr, func(store *catalog.Store, log *slog.Logger) int {
		k, err := store.RevokeTrustedKey(ctx, keysActor, fs.Arg(0), time.Now())
		if errors.Is(err, catalog.ErrNotFound) {
			fmt.Fprintf(stderr, "registry keys revoke: no trusted key %s\n", fs.Arg(0))
			return exitFail
		}
		if err != nil {
			log.Error("keys revoke failed", "err", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "revoked %s (kid %s) at %s\n", k.ID, k.KID, k.RevokedAt.Format(time.RFC3339))
		return exitOK
	})
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// cliActor is who the catalog records as changing the trust store from
// the command line.
var cliActor = catalog.System("cli")

// keysActor is cliActor, audited: a key pinned or revoked from the
// command line changes whose signatures verify, as one changed through the
// API does, so the audit log records it (with no request to name).
var keysActor = cliActor.For(catalog.Request{})

// trustedKeyJSON is one key as `keys list --json` prints it.
type trustedKeyJSON struct {
	ID         string          `json:"id"`
	KID        string          `json:"kid"`
	JWK        json.RawMessage `json:"jwk"`
	Thumbprint string          `json:"thumbprint"`
	Origins    []string        `json:"origins"`
	NotAfter   *time.Time      `json:"not_after,omitempty"`
	RevokedAt  *time.Time      `json:"revoked_at,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
}

func newTrustedKeyJSON(k catalog.TrustedKey) trustedKeyJSON {
	return trustedKeyJSON{ID: k.ID, KID: k.KID, JWK: k.JWK, Thumbprint: k.Thumbprint, Origins: k.Origins,
		NotAfter: k.NotAfter, RevokedAt: k.RevokedAt, CreatedAt: k.CreatedAt}
}
