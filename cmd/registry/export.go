package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/verify"
)

// The export format: JSON lines, one object per line with a "type". The
// first line is the header; then every source, every agent, then every
// trusted key.
// Raw card bytes are base64 (encoding/json's []byte), so they come back
// byte for byte. An agent's annotations and listing state travel with it;
// annotations kept for a removed agent's return have lines of their own,
// after the agents, and so do collections with their members (which name
// agents, so they come after them). Each agent carries its provenance
// (how it came, ended rows included); sources come before the agents,
// each with the entries of its last check, so that an agent is indexed
// with the representative queries of the entries naming it. Sign-in sessions, verification
// reports, the fetch log and the change feed are not exported: the first
// are secrets, the others are rebuilt or belong to the old catalog.
const (
	exportFormat        = "a2a-registry-export"
	exportFormatVersion = 1
	// maxExportLine bounds one line: an agent with all its versions.
	maxExportLine = 256 << 20
)

type exportLine struct {
	Type       string          `json:"type"` // header, agent, annotations, collection, source, trusted_key
	Header     *exportHeader   `json:"header,omitempty"`
	Agent      *exportAgent    `json:"agent,omitempty"`
	TrustedKey *exportTrustKey `json:"trusted_key,omitempty"`
	// Annotations are those of a card URL without an agent.
	Annotations *exportOrphanAnnotations `json:"annotations,omitempty"`
	Collection  *exportCollection        `json:"collection,omitempty"`
	Source      *exportSource            `json:"source,omitempty"`
}

// exportSource is a source and the entries of its last check. A peer
// registry's token is not exported (an export is no place for a
// credential); its lease stays with the old catalog.
type exportSource struct {
	ID                  string     `json:"id"`
	URL                 string     `json:"url"`
	CreatedAt           time.Time  `json:"created_at"`
	CreatedBy           string     `json:"created_by,omitempty"`
	ResolvedURL         string     `json:"resolved_url,omitempty"`
	ResolvedVia         string     `json:"resolved_via,omitempty"`
	Status              string     `json:"status"`
	Problem             string     `json:"problem,omitempty"`
	Message             string     `json:"message,omitempty"`
	ETag                string     `json:"etag,omitempty"`
	LastModified        string     `json:"last_modified,omitempty"`
	CheckedAt           *time.Time `json:"checked_at,omitempty"`
	ChangedAt           *time.Time `json:"changed_at,omitempty"`
	NextCheckAt         time.Time  `json:"next_check_at"`
	ConsecutiveFailures int        `json:"consecutive_failures,omitempty"`
	EntryCount          int        `json:"entry_count"`
	// Kind and the rest are a peer registry's (docs/sources.md#federation).
	Kind     string              `json:"kind,omitempty"`
	Cursor   string              `json:"cursor,omitempty"`
	ParentID string              `json:"parent_id,omitempty"`
	PeerID   string              `json:"peer_id,omitempty"`
	PeerURL  string              `json:"peer_url,omitempty"`
	PeerName string              `json:"peer_name,omitempty"`
	Entries  []exportSourceEntry `json:"entries"`
}

type exportSourceEntry struct {
	ManifestURL           string   `json:"manifest_url"`
	Depth                 int      `json:"depth,omitempty"`
	Identifier            string   `json:"identifier"`
	DisplayName           string   `json:"display_name,omitempty"`
	Type                  string   `json:"type,omitempty"`
	URL                   string   `json:"url,omitempty"`
	Outcome               string   `json:"outcome"`
	Reason                string   `json:"reason,omitempty"`
	Message               string   `json:"message,omitempty"`
	AgentID               string   `json:"agent_id,omitempty"`
	TrustFlag             string   `json:"trust_flag,omitempty"`
	Tags                  []string `json:"tags,omitempty"`
	RepresentativeQueries []string `json:"representative_queries,omitempty"`
	TrustManifest         string   `json:"trust_manifest,omitempty"`
	ETag                  string   `json:"etag,omitempty"`
	LastModified          string   `json:"last_modified,omitempty"`
}

// exportProvenance is one way an agent came.
type exportProvenance struct {
	Kind        string     `json:"kind"`
	OriginKey   string     `json:"origin_key,omitempty"`
	By          string     `json:"by,omitempty"`
	SourceID    string     `json:"source_id,omitempty"`
	SourceURL   string     `json:"source_url,omitempty"`
	ManifestURL string     `json:"manifest_url,omitempty"`
	EntryID     string     `json:"entry_id,omitempty"`
	Relation    string     `json:"relation,omitempty"`
	FirstAt     time.Time  `json:"first_at"`
	LastAt      time.Time  `json:"last_at"`
	EndedAt     *time.Time `json:"ended_at,omitempty"`
}

type exportHeader struct {
	Format          string    `json:"format"`
	Version         int       `json:"version"`
	ExportedAt      time.Time `json:"exported_at"`
	RegistryVersion string    `json:"registry_version"`
	SchemaVersion   int64     `json:"schema_version"`
	Database        string    `json:"database"`
}

type exportAgent struct {
	ID        string          `json:"id"`
	CardURL   string          `json:"card_url"`
	Health    string          `json:"health"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	FetchedAt time.Time       `json:"fetched_at"`
	Versions  []exportVersion `json:"versions"`
	Crawl     exportCrawl     `json:"crawl"`
	// Annotations are the operator's; absent when the agent has none.
	// Exports without them (older releases) import as unannotated.
	Annotations *exportAnnotations `json:"annotations,omitempty"`
	// Removed is present for an agent an admin removed; it stays removed
	// (and restorable by registering its URL) after an import.
	Removed *exportRemoval `json:"removed,omitempty"`
	// Listing is the agent's listing state. Exports made before the
	// lifecycle existed have none: their agents import approved.
	Listing *exportListing `json:"listing,omitempty"`
	// Provenance is how the agent came, ended rows included. Exports
	// without it (older releases) import credited as their versions say.
	Provenance []exportProvenance `json:"provenance,omitempty"`
}

type exportListing struct {
	State           string     `json:"state"`
	Reason          string     `json:"reason,omitempty"`
	Replacement     string     `json:"replacement,omitempty"`
	By              string     `json:"by,omitempty"`
	At              *time.Time `json:"at,omitempty"`
	ApprovedVersion int        `json:"approved_version"`
}

type exportCollection struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Groups      []string       `json:"groups"`
	CreatedAt   time.Time      `json:"created_at"`
	Members     []exportMember `json:"members"`
}

type exportMember struct {
	AgentID string    `json:"agent_id"`
	AddedAt time.Time `json:"added_at"`
}

type exportOrphanAnnotations struct {
	CardURL     string            `json:"card_url"`
	Annotations exportAnnotations `json:"annotations"`
}

type exportAnnotations struct {
	OwnerTeam      string            `json:"owner_team,omitempty"`
	Contact        string            `json:"contact,omitempty"`
	Classification string            `json:"classification,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	Notes          string            `json:"notes,omitempty"`
	ChangedAt      time.Time         `json:"changed_at"`
	ChangedBy      string            `json:"changed_by,omitempty"`
}

type exportRemoval struct {
	At time.Time `json:"at"`
	By string    `json:"by"`
	// Withdrawn says why the registry withdrew it (nothing vouched for
	// it any more); absent for an admin's removal.
	Withdrawn string `json:"withdrawn,omitempty"`
}

type exportVersion struct {
	Number     int       `json:"number"`
	Source     string    `json:"source"`
	ReceivedAt time.Time `json:"received_at"`
	Raw        []byte    `json:"raw"` // base64
}

type exportCrawl struct {
	NextCheckAt         time.Time  `json:"next_check_at"`
	Paused              bool       `json:"paused"`
	ETag                string     `json:"etag,omitempty"`
	LastModified        string     `json:"last_modified,omitempty"`
	ServedURL           string     `json:"served_url,omitempty"`
	LegacyPath          bool       `json:"legacy_path,omitempty"`
	ConsecutiveFailures int        `json:"consecutive_failures,omitempty"`
	LastCheckAt         *time.Time `json:"last_check_at,omitempty"`
	LastSuccessAt       *time.Time `json:"last_success_at,omitempty"`
	LastErrorClass      string     `json:"last_error_class,omitempty"`
	LastErrorMessage    string     `json:"last_error_message,omitempty"`
	LastErrorStatus     int        `json:"last_error_status,omitempty"`
	LastErrorAt         *time.Time `json:"last_error_at,omitempty"`
}

type exportTrustKey struct {
	ID         string          `json:"id"`
	KID        string          `json:"kid"`
	JWK        json.RawMessage `json:"jwk"`
	Thumbprint string          `json:"thumbprint"`
	Origins    []string        `json:"origins"`
	NotAfter   *time.Time      `json:"not_after,omitempty"`
	RevokedAt  *time.Time      `json:"revoked_at,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
}

// runExport writes the catalog as JSON lines to --out or stdout.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	var out string
	cfg, fs, code, ok := loadConfig("export", "[flags]", config.Logging|config.Storage|config.Cards, args, stderr, getenv,
		func(fs *flag.FlagSet) { fs.StringVar(&out, "out", "", "write to FILE instead of stdout") })
	if !ok {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	return withStore(ctx, "export", cfg, stderr, func(store *catalog.Store, log *slog.Logger) int {
		w := stdout
		if out != "" {
			f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				log.Error("export failed", "err", err)
				return exitFail
			}
			defer f.Close()
			w = f
		}
		agents, keys, err := exportCatalog(ctx, store, w)
		if err != nil {
			log.Error("export failed", "err", err)
			return exitFail
		}
		log.Info("exported catalog", "agents", agents, "trusted_keys", keys)
		return exitOK
	})
}

// exportCatalog writes the header, every agent and every trusted key.
func exportCatalog(ctx context.Context, store *catalog.Store, w io.Writer) (agents, keys int, err error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	schema, _, err := store.SchemaVersion(ctx)
	if err != nil {
		return 0, 0, err
	}
	if err := enc.Encode(exportLine{Type: "header", Header: &exportHeader{Format: exportFormat, Version: exportFormatVersion,
		ExportedAt: time.Now().UTC(), RegistryVersion: versionString(), SchemaVersion: schema, Database: store.Dialect()}}); err != nil {
		return 0, 0, err
	}
	err = store.ExportSources(ctx, func(src catalog.ExportedSource) error {
		return enc.Encode(exportLine{Type: "source", Source: sourceToExport(src)})
	})
	if err != nil {
		return 0, 0, err
	}
	err = store.ExportAgents(ctx, func(a catalog.ExportedAgent) error {
		agents++
		return enc.Encode(exportLine{Type: "agent", Agent: agentToExport(a)})
	})
	if err != nil {
		return agents, 0, err
	}
	err = store.ExportOrphanAnnotations(ctx, func(e catalog.ExportedAnnotations) error {
		n := toExportAnnotations(&e.Annotations)
		return enc.Encode(exportLine{Type: "annotations", Annotations: &exportOrphanAnnotations{CardURL: e.CardURL, Annotations: *n}})
	})
	if err != nil {
		return agents, 0, err
	}
	err = store.ExportCollections(ctx, func(c catalog.ExportedCollection) error {
		return enc.Encode(exportLine{Type: "collection", Collection: collectionToExport(c)})
	})
	if err != nil {
		return agents, 0, err
	}
	tks, err := store.TrustedKeys(ctx)
	if err != nil {
		return agents, 0, err
	}
	for _, k := range tks {
		line := exportLine{Type: "trusted_key", TrustedKey: &exportTrustKey{ID: k.ID, KID: k.KID, JWK: k.JWK,
			Thumbprint: k.Thumbprint, Origins: k.Origins, NotAfter: catalog.ExportTimePtr(k.NotAfter),
			RevokedAt: catalog.ExportTimePtr(k.RevokedAt), CreatedAt: *catalog.ExportTimePtr(&k.CreatedAt)}}
		if err := enc.Encode(line); err != nil {
			return agents, keys, err
		}
		keys++
	}
	return agents, keys, bw.Flush()
}

func agentToExport(a catalog.ExportedAgent) *exportAgent {
	c := a.Crawl
	e := &exportAgent{ID: a.ID, CardURL: a.CardURL, Health: a.Health, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
		FetchedAt: a.FetchedAt, Crawl: exportCrawl{NextCheckAt: c.NextCheckAt, Paused: c.Paused, ETag: c.ETag,
			LastModified: c.LastModified, ServedURL: c.ServedURL, LegacyPath: c.LegacyPath, ConsecutiveFailures: c.ConsecutiveFailures,
			LastCheckAt: c.LastCheckAt, LastSuccessAt: c.LastSuccessAt, LastErrorClass: c.LastErrorClass,
			LastErrorMessage: c.LastErrorMessage, LastErrorStatus: c.LastErrorStatus, LastErrorAt: c.LastErrorAt}}
	if a.Removed != nil {
		e.Removed = &exportRemoval{At: a.Removed.At, By: a.Removed.By, Withdrawn: a.Removed.Withdrawn}
	}
	if l := a.Listing; l != nil {
		e.Listing = &exportListing{State: l.State, Reason: l.Reason, Replacement: l.Replacement, By: l.By, At: l.At,
			ApprovedVersion: l.ApprovedVersion}
	}
	for _, v := range a.Versions {
		e.Versions = append(e.Versions, exportVersion{Number: v.Number, Source: v.Source, ReceivedAt: v.ReceivedAt, Raw: v.Raw})
	}
	if a.Annotations != nil {
		e.Annotations = toExportAnnotations(a.Annotations)
	}
	for _, p := range a.Provenance {
		e.Provenance = append(e.Provenance, exportProvenance{Kind: p.Kind, OriginKey: p.OriginKey, By: p.By, SourceID: p.SourceID,
			SourceURL: p.SourceURL, ManifestURL: p.ManifestURL, EntryID: p.EntryID, Relation: p.Relation, FirstAt: p.FirstAt,
			LastAt: p.LastAt, EndedAt: p.EndedAt})
	}
	return e
}

func agentFromExport(e *exportAgent) catalog.ExportedAgent {
	c := e.Crawl
	a := catalog.ExportedAgent{ID: e.ID, CardURL: e.CardURL, Health: e.Health, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
		FetchedAt: e.FetchedAt, Crawl: catalog.ExportedCrawl{NextCheckAt: c.NextCheckAt, Paused: c.Paused, ETag: c.ETag,
			LastModified: c.LastModified, ServedURL: c.ServedURL, LegacyPath: c.LegacyPath, ConsecutiveFailures: c.ConsecutiveFailures,
			LastCheckAt: c.LastCheckAt, LastSuccessAt: c.LastSuccessAt, LastErrorClass: c.LastErrorClass,
			LastErrorMessage: c.LastErrorMessage, LastErrorStatus: c.LastErrorStatus, LastErrorAt: c.LastErrorAt}}
	if e.Removed != nil {
		a.Removed = &catalog.Removal{At: e.Removed.At, By: e.Removed.By, Withdrawn: e.Removed.Withdrawn}
	}
	if l := e.Listing; l != nil {
		a.Listing = &catalog.Listing{State: l.State, Reason: l.Reason, Replacement: l.Replacement, By: l.By, At: l.At,
			ApprovedVersion: l.ApprovedVersion}
	}
	for _, v := range e.Versions {
		a.Versions = append(a.Versions, catalog.ExportedVersion{Number: v.Number, Source: v.Source, ReceivedAt: v.ReceivedAt, Raw: v.Raw})
	}
	if e.Annotations != nil {
		n := fromExportAnnotations(*e.Annotations)
		a.Annotations = &n
	}
	for _, p := range e.Provenance {
		a.Provenance = append(a.Provenance, catalog.ExportedProvenance{OriginKey: p.OriginKey, Provenance: catalog.Provenance{
			Kind: p.Kind, By: p.By, SourceID: p.SourceID, SourceURL: p.SourceURL, ManifestURL: p.ManifestURL, EntryID: p.EntryID,
			Relation: p.Relation, FirstAt: p.FirstAt, LastAt: p.LastAt, EndedAt: p.EndedAt}})
	}
	return a
}

func sourceToExport(s catalog.ExportedSource) *exportSource {
	e := &exportSource{ID: s.ID, URL: s.URL, CreatedAt: s.CreatedAt, CreatedBy: s.CreatedBy, ResolvedURL: s.ResolvedURL,
		ResolvedVia: s.ResolvedVia, Status: s.Status, Problem: s.Problem, Message: s.Message, ETag: s.ETag,
		LastModified: s.LastModified, CheckedAt: s.CheckedAt, ChangedAt: s.ChangedAt, NextCheckAt: s.NextCheckAt,
		ConsecutiveFailures: s.ConsecutiveFailures, EntryCount: s.EntryCount, Kind: s.Kind, Cursor: s.Cursor, ParentID: s.ParentID,
		PeerID: s.PeerID, PeerURL: s.PeerURL, PeerName: s.PeerName, Entries: make([]exportSourceEntry, len(s.Entries))}
	for i, en := range s.Entries {
		e.Entries[i] = exportSourceEntry{ManifestURL: en.ManifestURL, Depth: en.Depth, Identifier: en.Identifier,
			DisplayName: en.DisplayName, Type: en.Type, URL: en.URL, Outcome: en.Outcome, Reason: en.Reason, Message: en.Message,
			AgentID: en.AgentID, TrustFlag: en.TrustFlag, Tags: en.Tags, RepresentativeQueries: en.RepresentativeQueries,
			TrustManifest: en.TrustManifest, ETag: en.ETag, LastModified: en.LastModified}
	}
	return e
}

func sourceFromExport(e *exportSource) catalog.ExportedSource {
	s := catalog.ExportedSource{Source: catalog.Source{ID: e.ID, URL: e.URL, CreatedAt: e.CreatedAt, CreatedBy: e.CreatedBy,
		ResolvedURL: e.ResolvedURL, ResolvedVia: e.ResolvedVia, Status: e.Status, Problem: e.Problem, Message: e.Message,
		ETag: e.ETag, LastModified: e.LastModified, CheckedAt: e.CheckedAt, ChangedAt: e.ChangedAt, NextCheckAt: e.NextCheckAt,
		ConsecutiveFailures: e.ConsecutiveFailures, EntryCount: e.EntryCount, Kind: e.Kind, Cursor: e.Cursor, ParentID: e.ParentID,
		PeerID: e.PeerID, PeerURL: e.PeerURL, PeerName: e.PeerName}, Entries: make([]catalog.SourceEntry, len(e.Entries))}
	for i, en := range e.Entries {
		s.Entries[i] = catalog.SourceEntry{Position: i, ManifestURL: en.ManifestURL, Depth: en.Depth, Identifier: en.Identifier,
			DisplayName: en.DisplayName, Type: en.Type, URL: en.URL, Outcome: en.Outcome, Reason: en.Reason, Message: en.Message,
			AgentID: en.AgentID, TrustFlag: en.TrustFlag, Tags: en.Tags, RepresentativeQueries: en.RepresentativeQueries,
			TrustManifest: en.TrustManifest, ETag: en.ETag, LastModified: en.LastModified}
	}
	return s
}

func toExportAnnotations(n *catalog.Annotations) *exportAnnotations {
	return &exportAnnotations{OwnerTeam: n.OwnerTeam, Contact: n.Contact, Classification: n.Classification,
		Labels: n.Labels, Notes: n.Notes, ChangedAt: n.ChangedAt, ChangedBy: n.ChangedBy}
}

func fromExportAnnotations(n exportAnnotations) catalog.Annotations {
	return catalog.Annotations{OwnerTeam: n.OwnerTeam, Contact: n.Contact, Classification: n.Classification,
		Labels: n.Labels, Notes: n.Notes, ChangedAt: n.ChangedAt, ChangedBy: n.ChangedBy}
}

func collectionToExport(c catalog.ExportedCollection) *exportCollection {
	e := &exportCollection{Name: c.Name, Description: c.Description, Groups: c.Groups, CreatedAt: c.CreatedAt,
		Members: make([]exportMember, len(c.Members))}
	for i, m := range c.Members {
		e.Members[i] = exportMember{AgentID: m.AgentID, AddedAt: m.AddedAt}
	}
	return e
}

func collectionFromExport(e *exportCollection) catalog.ExportedCollection {
	c := catalog.ExportedCollection{Name: e.Name, Description: e.Description, Groups: e.Groups, CreatedAt: e.CreatedAt,
		Members: make([]catalog.ExportedMember, len(e.Members))}
	for i, m := range e.Members {
		c.Members[i] = catalog.ExportedMember{AgentID: m.AgentID, AddedAt: m.AddedAt}
	}
	return c
}

// errBadExport marks a file that is not an export this release reads.
var errBadExport = errors.New("not a registry export")

// runImportExport restores an empty catalog from an export file.
func runImportExport(ctx context.Context, cfg config.Config, fs *flag.FlagSet, path, servedAt string, stdout, stderr io.Writer) int {
	if fs.NArg() > 0 || servedAt != "" {
		fmt.Fprintln(stderr, "registry import: --from-export takes no card files and no --url")
		fs.Usage()
		return exitUsage
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "registry import: %v\n", err)
		return exitFail
	}
	defer f.Close()
	return withStore(ctx, "import", cfg, stderr, func(store *catalog.Store, log *slog.Logger) int {
		agents, keys, err := importCatalog(ctx, store, f, cfg)
		if err != nil {
			log.Error("import failed", "file", path, "agents_restored", agents, "err", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "%s: restored %d agents and %d trusted keys\n", path, agents, keys)
		return exitOK
	})
}

// maxImportErrors bounds how many bad lines an import names before it
// stops looking: enough to fix a file, not a flood.
const maxImportErrors = 20

// importCatalog reads an export into store, which must be empty. Every
// line is checked first, as a live write would check it (ids, canonical
// card URLs, known health and listing states, cards that parse, trusted
// keys as pinning makes them), and a file with any bad line is refused
// with each bad line named, before anything is written. Only then is the
// file read again and applied. An import that fails while writing (the
// database, not the file) leaves the agents restored so far: empty the
// catalog and run it again.
func importCatalog(ctx context.Context, store *catalog.Store, r io.ReadSeeker, cfg config.Config) (agents, keys int, err error) {
	if err := store.CheckEmpty(ctx); err != nil {
		return 0, 0, err
	}
	lim := cardLimits(cfg)
	if err := checkExport(r, lim); err != nil {
		return 0, 0, err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return 0, 0, fmt.Errorf("reading export again: %w", err)
	}
	err = eachExportLine(r, func(line int, l exportLine) error {
		switch l.Type {
		case "agent":
			// Cards are parsed again under --max-card-bytes: raise it
			// if the old catalog accepted larger ones.
			if err := store.ImportAgent(ctx, cliActor, agentFromExport(l.Agent), lim); err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
			agents++
		case "annotations":
			if err := store.RestoreAnnotations(ctx, orphanFromExport(l.Annotations)); err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
		case "collection":
			if err := store.RestoreCollection(ctx, cliActor, collectionFromExport(l.Collection)); err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
		case "source":
			if err := store.RestoreSource(ctx, cliActor, sourceFromExport(l.Source)); err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
		case "trusted_key":
			if err := store.RestoreTrustedKey(ctx, keyFromExport(l.TrustedKey)); err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
			keys++
		}
		return nil
	})
	return agents, keys, err
}

// checkExport reads the whole export and checks every line; the error
// names each bad line (up to maxImportErrors) and duplicates of an agent
// id or card URL, which no catalog can hold.
func checkExport(r io.Reader, lim card.Limits) error {
	var bad []error
	ids, urls := map[string]int{}, map[string]int{}
	err := eachExportLine(r, func(line int, l exportLine) error {
		var err error
		switch l.Type {
		case "agent":
			a := agentFromExport(l.Agent)
			err = a.Check(lim)
			if err == nil {
				err = firstSeen(ids, a.ID, line, "agent id")
			}
			if err == nil {
				err = firstSeen(urls, a.CardURL, line, "card URL")
			}
		case "annotations":
			err = orphanFromExport(l.Annotations).Check()
		case "collection":
			err = collectionFromExport(l.Collection).Check()
		case "source":
			err = sourceFromExport(l.Source).Check()
		case "trusted_key":
			err = verify.CheckRestoredKey(keyFromExport(l.TrustedKey))
		}
		if err != nil {
			bad = append(bad, fmt.Errorf("line %d: %w", line, err))
			if len(bad) == maxImportErrors {
				return fmt.Errorf("%w: stopped after %d bad lines", errBadExport, maxImportErrors)
			}
		}
		return nil
	})
	if err != nil {
		bad = append(bad, err)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: nothing was imported: %w", errBadExport, errors.Join(bad...))
	}
	return nil
}

func firstSeen(seen map[string]int, key string, line int, what string) error {
	if first, ok := seen[key]; ok {
		return fmt.Errorf("%w: %s %s already on line %d", catalog.ErrInvalidImport, what, key, first)
	}
	seen[key] = line
	return nil
}

// eachExportLine calls fn with every entry after the header, numbered
// from 1 as editors number lines; an entry whose type has no body, or an
// unknown type, ends the read as errBadExport.
func eachExportLine(r io.Reader, fn func(line int, l exportLine) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxExportLine)
	line := 0
	for sc.Scan() {
		line++
		var l exportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("%w: line %d: %w", errBadExport, line, err)
		}
		if line == 1 {
			if l.Type != "header" || l.Header == nil || l.Header.Format != exportFormat || l.Header.Version != exportFormatVersion {
				return fmt.Errorf("%w: no %s version %d header", errBadExport, exportFormat, exportFormatVersion)
			}
			continue
		}
		switch {
		case l.Type == "agent" && l.Agent != nil, l.Type == "annotations" && l.Annotations != nil,
			l.Type == "collection" && l.Collection != nil, l.Type == "trusted_key" && l.TrustedKey != nil,
			l.Type == "source" && l.Source != nil:
		default:
			return fmt.Errorf("%w: line %d: unknown entry %q", errBadExport, line, l.Type)
		}
		if err := fn(line, l); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading export: %w", err)
	}
	if line == 0 {
		return fmt.Errorf("%w: empty file", errBadExport)
	}
	return nil
}

func orphanFromExport(e *exportOrphanAnnotations) catalog.ExportedAnnotations {
	return catalog.ExportedAnnotations{CardURL: e.CardURL, Annotations: fromExportAnnotations(e.Annotations)}
}

func keyFromExport(k *exportTrustKey) catalog.TrustedKey {
	return catalog.TrustedKey{ID: k.ID, KID: k.KID, JWK: k.JWK, Thumbprint: k.Thumbprint,
		Origins: k.Origins, NotAfter: k.NotAfter, RevokedAt: k.RevokedAt, CreatedAt: k.CreatedAt}
}
