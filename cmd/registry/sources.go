package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/sources"
)

const sourcesUsage = `Usage:
  registry sources list [--json]
  registry sources add [--registry [--token-env NAME]] URL
  registry sources show [--json] ID
  registry sources remove ID
  registry sources refresh ID

Manage sources: ARD or AI Catalog manifests, or origins the registry resolves
to one, whose agents it catalogues, and peer registries it federates from
(--registry; a bearer token the peer expects is read from the environment
variable --token-env names, stored encrypted and never shown; see
docs/sources.md). A running server checks
a new source within seconds and then every --source-interval; refresh checks
one now, in this process. Removing a source withdraws the agents nothing else
vouches for (history kept).
`

// runSources manages sources from the command line, on the catalog
// directly, as "keys" does; the API's /sources routes do the same.
func runSources(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, sourcesUsage)
		return exitUsage
	}
	var asJSON, registry bool
	var tokenEnv string
	jsonFlag := func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print JSON") }
	addFlags := func(fs *flag.FlagSet) {
		fs.BoolVar(&registry, "registry", false, "the URL is a peer registry to federate from (its origin or ARD search base)")
		fs.StringVar(&tokenEnv, "token-env", "", "name of the environment variable holding the peer's bearer token")
	}
	noFlags := func(*flag.FlagSet) {}
	type action struct {
		usage string
		args  int
		flags func(*flag.FlagSet)
		run   func(svc *sources.Service, log *slog.Logger, args []string) int
	}
	actions := map[string]action{
		"list": {"[--json]", 0, jsonFlag, func(svc *sources.Service, log *slog.Logger, _ []string) int {
			ss, err := svc.List(ctx)
			if err != nil {
				log.Error("sources list failed", "err", err)
				return exitFail
			}
			return writeSources(stdout, ss, asJSON)
		}},
		"add": {"[--registry [--token-env NAME]] URL", 1, addFlags, func(svc *sources.Service, log *slog.Logger, args []string) int {
			req := sources.Request{URL: args[0]}
			if registry {
				req.Kind = catalog.SourceRegistry
			}
			if tokenEnv != "" {
				if req.Token = getenv(tokenEnv); req.Token == "" {
					fmt.Fprintf(stderr, "registry sources add: the environment variable %s is empty or unset\n", tokenEnv)
					return exitUsage
				}
			}
			src, err := svc.Add(ctx, cliActor, req)
			switch {
			case errors.Is(err, sources.ErrInvalidURL), errors.Is(err, sources.ErrInvalidToken), errors.Is(err, sources.ErrInvalidKind):
				fmt.Fprintf(stderr, "registry sources add: %v\n", err)
				return exitUsage
			case errors.Is(err, catalog.ErrConflict):
				fmt.Fprintf(stderr, "registry sources add: %s is a source already\n", args[0])
				return exitFail
			case err != nil:
				log.Error("sources add failed", "err", err)
				return exitFail
			}
			fmt.Fprintf(stdout, "added %s (%s); a running server checks it within seconds, or run: registry sources refresh %s\n", src.ID, src.URL, src.ID)
			return exitOK
		}},
		"show": {"[--json] ID", 1, jsonFlag, func(svc *sources.Service, log *slog.Logger, args []string) int {
			src, entries, err := svc.Get(ctx, args[0])
			if err != nil {
				return sourceErr(stderr, log, "show", args[0], err)
			}
			return writeSource(stdout, src, entries, asJSON)
		}},
		"remove": {"ID", 1, noFlags, func(svc *sources.Service, log *slog.Logger, args []string) int {
			withdrawn, err := svc.Delete(ctx, cliActor, args[0])
			if err != nil {
				return sourceErr(stderr, log, "remove", args[0], err)
			}
			fmt.Fprintf(stdout, "removed %s; %d agents only it vouched for were withdrawn\n", args[0], len(withdrawn))
			return exitOK
		}},
		"refresh": {"ID", 1, noFlags, func(svc *sources.Service, log *slog.Logger, args []string) int {
			if _, err := svc.Refresh(ctx, args[0]); err != nil {
				return sourceErr(stderr, log, "refresh", args[0], err)
			}
			src, entries, err := svc.Get(ctx, args[0])
			if err != nil {
				return sourceErr(stderr, log, "refresh", args[0], err)
			}
			if code := writeSource(stdout, src, entries, false); code != exitOK || src.Status != catalog.SourceOK {
				return exitFail
			}
			return exitOK
		}},
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, sourcesUsage)
		return exitOK
	}
	act, ok := actions[name]
	if !ok {
		fmt.Fprintf(stderr, "registry sources: unknown action %q\n\n%s", name, sourcesUsage)
		return exitUsage
	}
	cfg, fs, code, ok := loadConfig("sources "+name, act.usage, config.Logging|config.Storage|config.Cards|config.Fetching|config.Crawling,
		args[1:], stderr, getenv, act.flags)
	if !ok {
		return code
	}
	if fs.NArg() != act.args {
		fs.Usage()
		return exitUsage
	}
	self, err := registrySelf(cfg.Server)
	if err != nil {
		fmt.Fprintf(stderr, "registry sources %s: %v\n", name, err)
		return exitUsage
	}
	return withStore(ctx, "sources "+name, cfg, stderr, func(store *catalog.Store, log *slog.Logger) int {
		client := newOutboundClient(cfg, self, 0)
		defer client.CloseIdleConnections()
		manifests := newManifestClient(cfg, self)
		defer manifests.CloseIdleConnections()
		reg := crawler.NewRegistrar(crawler.NewFetcher(client, cfg.Outbound.MaxCardBytes), store, cardLimits(cfg), log)
		return act.run(newSources(cfg, store, reg, manifests, log), log, fs.Args())
	})
}

func sourceErr(stderr io.Writer, log *slog.Logger, action, id string, err error) int {
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		fmt.Fprintf(stderr, "registry sources %s: no source %s\n", action, id)
	case errors.Is(err, sources.ErrBusy):
		fmt.Fprintf(stderr, "registry sources %s: %v\n", action, err)
	default:
		log.Error("sources "+action+" failed", "err", err)
	}
	return exitFail
}

// sourceJSON is a source as the command prints it.
type sourceJSON struct {
	ID                  string            `json:"id"`
	URL                 string            `json:"url"`
	Status              string            `json:"status"`
	Problem             string            `json:"problem,omitempty"`
	Message             string            `json:"message,omitempty"`
	ResolvedURL         string            `json:"resolved_url,omitempty"`
	ResolvedVia         string            `json:"resolved_via,omitempty"`
	CheckedAt           *time.Time        `json:"checked_at,omitempty"`
	NextCheckAt         time.Time         `json:"next_check_at"`
	ConsecutiveFailures int               `json:"consecutive_failures"`
	EntryCount          int               `json:"entry_count"`
	Kind                string            `json:"kind"`
	TokenSet            bool              `json:"token_set,omitempty"`
	Cursor              string            `json:"cursor,omitempty"`
	ParentID            string            `json:"parent_id,omitempty"`
	PeerURL             string            `json:"peer_url,omitempty"`
	Entries             []sourceEntryJSON `json:"entries,omitempty"`
	CreatedBy           string            `json:"created_by,omitempty"`
	CreatedAt           time.Time         `json:"created_at"`
}

type sourceEntryJSON struct {
	Identifier string `json:"identifier"`
	Type       string `json:"type,omitempty"`
	URL        string `json:"url,omitempty"`
	Depth      int    `json:"depth"`
	Outcome    string `json:"outcome"`
	Reason     string `json:"reason,omitempty"`
	Message    string `json:"message,omitempty"`
	AgentID    string `json:"agent_id,omitempty"`
	TrustFlag  string `json:"trust_flag,omitempty"`
}

func newSourceJSON(s catalog.Source, entries []catalog.SourceEntry) sourceJSON {
	out := sourceJSON{ID: s.ID, URL: s.URL, Status: s.Status, Problem: s.Problem, Message: s.Message, ResolvedURL: s.ResolvedURL,
		ResolvedVia: s.ResolvedVia, CheckedAt: s.CheckedAt, NextCheckAt: s.NextCheckAt, ConsecutiveFailures: s.ConsecutiveFailures,
		EntryCount: s.EntryCount, CreatedBy: s.CreatedBy, CreatedAt: s.CreatedAt, Kind: s.Kind, TokenSet: s.HasToken, Cursor: s.Cursor,
		ParentID: s.ParentID, PeerURL: s.PeerURL}
	for _, e := range entries {
		out.Entries = append(out.Entries, sourceEntryJSON{Identifier: e.Identifier, Type: e.Type, URL: e.URL, Depth: e.Depth,
			Outcome: e.Outcome, Reason: e.Reason, Message: e.Message, AgentID: e.AgentID, TrustFlag: e.TrustFlag})
	}
	return out
}

func writeSources(stdout io.Writer, ss []catalog.Source, asJSON bool) int {
	if asJSON {
		out := make([]sourceJSON, len(ss))
		for i, s := range ss {
			out[i] = newSourceJSON(s, nil)
		}
		return encodeJSON(stdout, out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tURL\tSTATUS\tENTRIES\tCHECKED\tMESSAGE")
	for _, s := range ss {
		checked := "never"
		if s.CheckedAt != nil {
			checked = s.CheckedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", s.ID, s.Kind, s.URL, s.Status, s.EntryCount, checked, s.Message)
	}
	if err := tw.Flush(); err != nil {
		return exitFail
	}
	return exitOK
}

func writeSource(stdout io.Writer, s catalog.Source, entries []catalog.SourceEntry, asJSON bool) int {
	if asJSON {
		return encodeJSON(stdout, newSourceJSON(s, entries))
	}
	fmt.Fprintf(stdout, "source %s\n  url: %s\n  status: %s", s.ID, s.URL, s.Status)
	if s.Problem != "" {
		fmt.Fprintf(stdout, " (%s)", s.Problem)
	}
	fmt.Fprintf(stdout, "\n  %s\n", s.Message)
	if s.ResolvedURL != "" {
		fmt.Fprintf(stdout, "  resolved to %s via %s\n", s.ResolvedURL, s.ResolvedVia)
	}
	if s.Kind == catalog.SourceRegistry {
		fmt.Fprintf(stdout, "  peer registry %s (token set: %t, feed cursor: %q)\n", s.PeerURL, s.HasToken, s.Cursor)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if len(entries) > 0 {
		fmt.Fprintln(tw, "IDENTIFIER\tOUTCOME\tREASON\tAGENT")
	}
	for _, e := range entries {
		reason := e.Reason
		if e.TrustFlag != "" {
			reason = "flagged: " + e.TrustFlag
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Identifier, e.Outcome, reason, e.AgentID)
	}
	if err := tw.Flush(); err != nil {
		return exitFail
	}
	return exitOK
}

func encodeJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return exitFail
	}
	return exitOK
}
