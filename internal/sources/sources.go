// Package sources is the application layer of sources: URLs the registry
// reads many agents from. A source is an ARD v0.91 or AI Catalog
// manifest, or an origin resolved to one (/.well-known/ard.json,
// /.well-known/ai-catalog.json, a Link header or <link> with rel "ard" or
// "ai-catalog", robots.txt Agentmap:, then the origin's own agent card).
// Each source is checked on its own schedule under a lease, its manifest
// fetched with the crawler's conditional requests and limits through the
// guarded client; nested catalogs are followed to depth 4 with loop
// detection; each A2A entry's card URL is registered through the
// crawler's registration path with the entry as its provenance; entries
// that leave the manifest end their provenance, and the catalog withdraws
// agents nothing else vouches for. Doors call it with the caller's actor;
// it does no HTTP of its own beyond its fetches.
package sources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2aregistry/registry/internal/background"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// Trust modes of ARD's publisher-authority rule (--source-trust).
const (
	TrustReject = "reject"
	TrustFlag   = "flag"
	TrustOff    = "off"
)

// Defaults of Config.
const (
	DefaultInterval         = time.Hour
	DefaultMaxEntries       = 10_000
	DefaultMaxManifestBytes = 8 << 20
	MaxDepth                = 4
	DefaultConcurrency      = 32
	DefaultLease            = 10 * time.Minute
	// batchSize is how many entries one registration write stores.
	batchSize = 500
	minRetry  = time.Minute
)

// EntryFollowed is the outcome of a nested catalog entry the check read.
const EntryFollowed = "followed"

// ErrBusy refuses a refresh while another check of the source runs.
var ErrBusy = errors.New("a check of this source is under way")

// ErrInvalidURL wraps a source URL that is not an absolute http(s) URL.
var ErrInvalidURL = errors.New("invalid source URL")

// Config tunes the service.
type Config struct {
	// Owner names this replica's leases.
	Owner string
	// Interval is the time between checks of a source that answered.
	Interval time.Duration
	// MaxEntries caps the entries of one source, nested catalogs
	// included: a manifest with more is refused whole.
	MaxEntries int
	// Concurrency is how many cards one check fetches at once.
	Concurrency int
	// Trust is TrustReject, TrustFlag (the default) or TrustOff.
	Trust string
	Lease time.Duration
	// MaxPeerEntries caps what one sync of a peer registry reads: the
	// agents of an ARD registry (more fails the sync), the changes of a
	// change feed (more are read in the next check, due at once).
	MaxPeerEntries int
	// SyncTimeout is the time limit of reading a peer's pages in a sync.
	SyncTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.MaxEntries <= 0 {
		c.MaxEntries = DefaultMaxEntries
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Trust == "" {
		c.Trust = TrustFlag
	}
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.Owner == "" {
		c.Owner = "sources"
	}
	if c.MaxPeerEntries <= 0 {
		c.MaxPeerEntries = DefaultMaxPeerEntries
	}
	if c.SyncTimeout <= 0 {
		c.SyncTimeout = DefaultSyncTimeout
	}
	return c
}

// Store is what sources need from the catalog; *catalog.Store implements it.
type Store interface {
	CreateSource(ctx context.Context, actor catalog.Actor, in catalog.NewSource) (catalog.Source, error)
	SourceToken(ctx context.Context, id string) (string, error)
	RegistryID(ctx context.Context) (string, error)
	Sources(ctx context.Context) ([]catalog.Source, error)
	Source(ctx context.Context, id string) (catalog.Source, error)
	SourceEntries(ctx context.Context, id string) ([]catalog.SourceEntry, error)
	DeleteSource(ctx context.Context, actor catalog.Actor, id string) ([]string, error)
	ClaimSource(ctx context.Context, id, owner string, now time.Time, lease time.Duration) (catalog.Source, bool, error)
	ClaimDueSources(ctx context.Context, now time.Time, limit int, owner string, lease time.Duration) ([]catalog.Source, error)
	RecordSourceCheck(ctx context.Context, actor catalog.Actor, c catalog.SourceCheck) ([]string, error)
	AdminRemoved(ctx context.Context, cardURLs []string) (map[string]bool, error)
	SourceAgents(ctx context.Context, sourceID string) (map[string]catalog.SourceAgent, error)
}

// Registrar registers card URLs (*crawler.Registrar).
type Registrar interface {
	RegisterMany(ctx context.Context, actor catalog.Actor, sc catalog.Scope, regs []crawler.Registration, parallel int) []crawler.Registered
}

// sourcesActor is who the catalog records as storing a source's cards
// and withdrawing agents; a person's add, delete or refresh is audited
// under their own actor.
var sourcesActor = catalog.System("sources")

// Service is the sources application layer.
type Service struct {
	store   Store
	reg     Registrar
	fetcher *crawler.Fetcher
	client  *safehttp.Client
	cfg     Config
	log     *slog.Logger

	// checking holds the sources this process checks now: a lease is
	// its owner's to renew (a restarted replica takes its own back), so
	// it does not keep two checks of one replica apart.
	mu       sync.Mutex
	checking map[string]bool
	// registryID is this registry's id once read (selfID).
	registryID string
}

// New wires a Service. client is the guarded client for manifests (its
// body cap is the manifest size limit: fetcher must use it too); reg
// registers the cards.
func New(store Store, reg Registrar, fetcher *crawler.Fetcher, client *safehttp.Client, cfg Config, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, reg: reg, fetcher: fetcher, client: client, cfg: cfg.withDefaults(), log: log,
		checking: map[string]bool{}}
}

// begin marks source id as checked by this process; false when it is
// already. end unmarks it.
func (s *Service) begin(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.checking[id] {
		return false
	}
	s.checking[id] = true
	return true
}

func (s *Service) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.checking, id)
}

// Request is a source to add.
type Request struct {
	URL string
	// Kind is catalog.SourceManifest ("" too) or catalog.SourceRegistry:
	// a peer registry (its origin, or its ARD search base).
	Kind string
	// Token is a bearer token for a peer registry, sent on every request
	// to it; stored sealed, never shown.
	Token string
}

// Add stores a new source, due for its first check at once. Errors:
// ErrInvalidURL, ErrInvalidKind, ErrInvalidToken, catalog.ErrConflict for
// a URL that is a source already.
func (s *Service) Add(ctx context.Context, actor catalog.Actor, req Request) (catalog.Source, error) {
	if _, err := crawler.ResolveCardURLs(req.URL); err != nil {
		return catalog.Source{}, fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	canon, err := card.CanonicalCardURL(strings.TrimSpace(req.URL))
	if err != nil {
		return catalog.Source{}, fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	switch req.Kind {
	case "", catalog.SourceManifest:
		if req.Token != "" {
			return catalog.Source{}, fmt.Errorf("%w: a token is sent to peer registries only (kind registry)", ErrInvalidToken)
		}
	case catalog.SourceRegistry:
		if req.Token != "" && !validToken(req.Token) {
			return catalog.Source{}, fmt.Errorf("%w: a bearer token is at most %d characters of A-Z a-z 0-9 - . _ ~ + / = (RFC 6750)", ErrInvalidToken, maxTokenLen)
		}
	default:
		return catalog.Source{}, fmt.Errorf("%w: %q; give manifest or registry", ErrInvalidKind, req.Kind)
	}
	return s.store.CreateSource(ctx, actor, catalog.NewSource{URL: canon, Kind: req.Kind, Token: req.Token})
}

// Peers lists the peer registries this registry federates from that
// answered their last sync (ARD federation=referrals).
func (s *Service) Peers(ctx context.Context) ([]catalog.Source, error) {
	all, err := s.store.Sources(ctx)
	if err != nil {
		return nil, err
	}
	var out []catalog.Source
	for _, src := range all {
		if src.Kind == catalog.SourceRegistry && src.PeerURL != "" && src.Status == catalog.SourceOK {
			out = append(out, src)
		}
	}
	return out, nil
}

// List lists the sources.
func (s *Service) List(ctx context.Context) ([]catalog.Source, error) { return s.store.Sources(ctx) }

// Get reads a source and the entries of its last manifest.
func (s *Service) Get(ctx context.Context, id string) (catalog.Source, []catalog.SourceEntry, error) {
	src, err := s.store.Source(ctx, id)
	if err != nil {
		return catalog.Source{}, nil, err
	}
	entries, err := s.store.SourceEntries(ctx, id)
	return src, entries, err
}

// Delete deletes a source; the agents only it vouched for are withdrawn.
// It returns their ids.
func (s *Service) Delete(ctx context.Context, actor catalog.Actor, id string) ([]string, error) {
	all, err := s.store.Sources(ctx)
	if err != nil {
		return nil, err
	}
	var withdrawn []string
	// The peer sources its manifest's registry entries made go with it.
	for _, c := range all {
		if c.ParentID == id {
			w, err := s.store.DeleteSource(ctx, actor, c.ID)
			if err != nil && !errors.Is(err, catalog.ErrNotFound) {
				return nil, err
			}
			withdrawn = append(withdrawn, w...)
		}
	}
	w, err := s.store.DeleteSource(ctx, actor, id)
	return append(withdrawn, w...), err
}

// Refresh checks a source now, whatever its schedule, and returns it as
// the check left it. ErrBusy while another check holds it.
func (s *Service) Refresh(ctx context.Context, id string) (catalog.Source, error) {
	if !s.begin(id) {
		return catalog.Source{}, ErrBusy
	}
	defer s.end(id)
	src, ok, err := s.store.ClaimSource(ctx, id, s.cfg.Owner, time.Now(), s.cfg.Lease)
	if err != nil {
		return catalog.Source{}, err
	}
	if !ok {
		return catalog.Source{}, ErrBusy
	}
	if err := s.Check(ctx, src); err != nil {
		return catalog.Source{}, err
	}
	return s.store.Source(ctx, id)
}

// Run checks due sources until ctx ends, looking every tick.
func (s *Service) Run(ctx context.Context, tick time.Duration) {
	background.Every(ctx, s.log, "sources", tick, func(ctx context.Context) error {
		due, err := s.store.ClaimDueSources(ctx, time.Now(), 4, s.cfg.Owner, s.cfg.Lease)
		if err != nil {
			return fmt.Errorf("claiming due sources: %w", err)
		}
		for _, src := range due {
			if !s.begin(src.ID) {
				// A refresh checks it now, and records it.
				continue
			}
			err := s.Check(ctx, src)
			s.end(src.ID)
			if err != nil && ctx.Err() == nil {
				s.log.Error("checking source", "source_id", src.ID, "err", err)
			}
		}
		return nil
	})
}

// Check checks a source the caller holds the lease of and records the
// outcome. Its error is the store's; what went wrong with the source
// itself is the source's status.
func (s *Service) Check(ctx context.Context, src catalog.Source) error {
	now := time.Now().UTC()
	c := s.read(ctx, src)
	c.SourceID, c.Owner, c.At = src.ID, s.cfg.Owner, now
	switch {
	case c.Status == catalog.SourceOK && !c.NextCheckAt.IsZero():
		// The check asked to be continued soon (a capped peer sync).
	case c.Status == catalog.SourceOK:
		c.NextCheckAt = now.Add(jitter(s.cfg.Interval))
	default:
		c.ConsecutiveFailures = src.ConsecutiveFailures + 1
		c.NextCheckAt = now.Add(backoff(c.ConsecutiveFailures, s.cfg.Interval))
	}
	withdrawn, err := s.store.RecordSourceCheck(ctx, sourcesActor, c)
	if err != nil {
		return fmt.Errorf("recording check of source %s: %w", src.ID, err)
	}
	s.log.InfoContext(ctx, "source checked", "source_id", src.ID, "status", c.Status, "problem", c.Problem,
		"changed", c.Changed, "entries", len(c.Entries), "withdrawn", len(withdrawn))
	return nil
}

// backoff is the wait after the nth failure in a row: a minute doubled
// each time, at most the interval, with jitter.
func backoff(n int, interval time.Duration) time.Duration {
	d := minRetry << min(n-1, 16)
	return jitter(min(d, interval))
}

func jitter(d time.Duration) time.Duration {
	return d - time.Duration(rand.Int64N(int64(d)/10+1))
}

// failed is a check that found no usable manifest.
func failed(problem, message string) catalog.SourceCheck {
	return catalog.SourceCheck{Status: catalog.SourceFailed, Problem: problem, Message: message}
}

// fetchFailed words a fetch error as a source's problem.
func fetchFailed(what string, err error) catalog.SourceCheck {
	if p, ok := crawler.ProblemOf(err); ok {
		return failed(p.Class, what+": "+p.Message)
	}
	return failed("fetch_failed", what+": the fetch failed")
}

// read resolves and reads a source: a 304 of the manifest it resolved to
// last time changes nothing; otherwise it is resolved again when needed,
// its entries read and catalogued.
func (s *Service) read(ctx context.Context, src catalog.Source) catalog.SourceCheck {
	if src.Kind == catalog.SourceRegistry {
		return s.federate(ctx, src)
	}
	if src.ResolvedURL != "" && src.ResolvedVia != ViaAgentCard {
		res, err := s.fetcher.FetchURL(ctx, src.ResolvedURL, crawler.Conditional{ETag: src.ETag, LastModified: src.LastModified})
		switch {
		case err == nil && res.NotModified:
			sw, err := s.sweepNested(ctx, src)
			if err != nil {
				return failed("store", "the catalog could not be read; the check will be retried")
			}
			if !sw.changed {
				return catalog.SourceCheck{Status: catalog.SourceOK, ResolvedURL: src.ResolvedURL, ResolvedVia: src.ResolvedVia,
					ETag: res.ETag, LastModified: res.LastModified, Message: sw.unchangedMessage()}
			}
			// A nested catalog changed: the manifest's body, to read whole.
			full, err := s.fetcher.FetchURL(ctx, src.ResolvedURL, crawler.Conditional{})
			if err != nil {
				return fetchFailed("the manifest "+src.ResolvedURL, err)
			}
			return s.fromManifest(ctx, src, full, src.ResolvedVia, sw.fetched)
		case err == nil:
			return s.fromManifest(ctx, src, res, src.ResolvedVia, nil)
		case res == nil || (res.Status != http.StatusNotFound && res.Status != http.StatusGone):
			return fetchFailed("the manifest "+src.ResolvedURL, err)
		}
		// Gone from where it was: resolve the source again.
	}
	origin, isOrig := isOrigin(src.URL)
	if !isOrig {
		res, err := s.fetcher.FetchURL(ctx, src.URL, crawler.Conditional{})
		if err != nil {
			return fetchFailed("the source "+src.URL, err)
		}
		return s.fromManifest(ctx, src, res, ViaManifest, nil)
	}
	var firstErr error
	for _, c := range []struct{ path, via string }{{ardPath, ViaARD}, {aiCatalogPath, ViaAICatalog}} {
		res, err := s.fetcher.FetchURL(ctx, origin+c.path, crawler.Conditional{})
		if err == nil {
			return s.fromManifest(ctx, src, res, c.via, nil)
		}
		if firstErr == nil && (res == nil || res.Status != http.StatusNotFound) {
			firstErr = err
		}
	}
	if u, via := s.discoverLinks(ctx, origin); u != "" {
		res, err := s.fetcher.FetchURL(ctx, u, crawler.Conditional{})
		if err != nil {
			return fetchFailed("the manifest "+u+" ("+via+")", err)
		}
		return s.fromManifest(ctx, src, res, via, nil)
	}
	// No manifest: the origin's own agent card, through the registration
	// path (which tries agent-card.json, then the legacy agent.json).
	urls, _ := crawler.ResolveCardURLs(origin)
	c := s.catalogue(ctx, src, origin+"/", []pendingEntry{{entry: catalog.SourceEntry{ManifestURL: origin + "/",
		Identifier: urnOf(urls[0]), Type: TypeA2ACard, URL: origin + "/"}, input: origin}})
	if len(c.Entries) == 1 && c.Entries[0].Outcome == catalog.EntrySkipped {
		if firstErr != nil {
			return fetchFailed("the origin "+origin, firstErr)
		}
		return failed(ProblemNothingFound, "the origin "+origin+" publishes no manifest (ard.json, ai-catalog.json, a Link, robots.txt Agentmap) and no agent card: "+c.Entries[0].Message)
	}
	c.ResolvedURL, c.ResolvedVia = urls[0], ViaAgentCard
	return c
}

func urnOf(cardURL string) string {
	u, err := card.URNOf(cardURL)
	if err != nil {
		return ""
	}
	return u
}

// fromManifest reads the entries of a fetched manifest (or of the one
// card a manifest URL served) and catalogues them; nested catalogs in
// fetched (by canonical URL) are not fetched again.
func (s *Service) fromManifest(ctx context.Context, src catalog.Source, res *crawler.Result, via string,
	fetched map[string]*crawler.Result) catalog.SourceCheck {
	entries, isManifest, err := parseManifest(res.Body, s.cfg.MaxEntries)
	var tooMany *tooManyError
	switch {
	case errors.As(err, &tooMany):
		return failed(ProblemTooManyEntries, tooMany.Error()+"; nothing was changed")
	case err != nil:
		return failed(ProblemNotManifest, err.Error())
	case !isManifest:
		// A card URL given as a source: one entry, itself.
		if _, perr := card.Parse(res.Body, card.DefaultLimits()); perr != nil {
			return failed(ProblemNotManifest, "the source "+res.URL+" is neither a manifest (no entries array) nor an agent card")
		}
		c := s.catalogue(ctx, src, res.URL, []pendingEntry{{entry: catalog.SourceEntry{ManifestURL: res.URL,
			Identifier: urnOf(res.URL), Type: TypeA2ACard, URL: res.URL}, input: res.URL}})
		c.ResolvedURL, c.ResolvedVia, c.ETag, c.LastModified = res.URL, ViaAgentCard, "", ""
		return c
	}
	w := &walker{s: s, visited: map[string]bool{res.URL: true}, seen: map[string]bool{}, fetched: fetched, max: s.cfg.MaxEntries}
	if err := w.walk(ctx, res.URL, entries, 0); err != nil {
		return failed(ProblemTooManyEntries, err.Error()+"; nothing was changed")
	}
	followed, err := s.followRegistries(ctx, src, w.registries)
	if err != nil {
		s.log.ErrorContext(ctx, "following a manifest's registries", "source_id", src.ID, "err", err)
		return failed("store", "the catalog could not store the manifest's peer registries; the check will be retried")
	}
	w.settled = append(w.settled, followed...)
	slices.SortStableFunc(w.settled, func(a, b positioned) int { return a.pos - b.pos })
	c := s.catalogue(ctx, src, res.URL, w.pending)
	// The entries in manifest order: those the walk settled and those it
	// left to registration, by position.
	c.Entries = mergeEntries(w.settled, c.Entries)
	c.ResolvedURL, c.ResolvedVia, c.ETag, c.LastModified = res.URL, via, res.ETag, res.LastModified
	return c
}

// pendingEntry is an A2A entry the walk leaves to registration.
type pendingEntry struct {
	pos   int
	entry catalog.SourceEntry
	input string
	// expect judges the fetched card (an inline card's), nil for none.
	expect func(*card.Card) error
}

// walker reads a manifest's entries and those of the catalogs it nests.
type walker struct {
	s       *Service
	visited map[string]bool
	seen    map[string]bool
	total   int
	settled []positioned
	pending []pendingEntry
	// fetched are nested catalogs read already by this check.
	fetched map[string]*crawler.Result
	// peer is set for a peer registry's list: its nested catalogs and
	// registries are not followed, and what it says of an agent beyond
	// the card URL (tags, queries, trust manifest) is not kept — trust is
	// never inherited.
	peer bool
	max  int
	// registries are the registry entries of a manifest, each with the
	// registry id it advertises (followRegistries).
	registries []registryRef
}

type registryRef struct {
	positioned
	id string
}

type positioned struct {
	pos   int
	entry catalog.SourceEntry
}

func (w *walker) settle(e catalog.SourceEntry, reason, message string) {
	e.Outcome, e.Reason, e.Message = catalog.EntrySkipped, reason, message
	w.settled = append(w.settled, positioned{w.total, e})
}

// walk reads entries of the manifest at manifestURL, depth deep; only
// too many entries in all stops it.
func (w *walker) walk(ctx context.Context, manifestURL string, raws []json.RawMessage, depth int) error {
	for _, raw := range raws {
		w.total++
		if w.total > w.max {
			return &tooManyError{max: w.max}
		}
		e, err := decodeEntry(raw)
		base := catalog.SourceEntry{ManifestURL: manifestURL, Depth: depth}
		if err != nil {
			w.settle(base, ReasonInvalidEntry, err.Error())
			continue
		}
		id := card.NormalizeURN(e.Identifier)
		se := base
		se.Identifier, se.DisplayName, se.Type, se.URL = id, e.DisplayName, e.Type, e.URL
		if !w.peer {
			se.Tags, se.RepresentativeQueries = e.Tags, e.RepresentativeQueries
			if len(e.TrustManifest) > 0 && string(e.TrustManifest) != "null" {
				se.TrustManifest = string(e.TrustManifest)
			}
		}
		t := mediaType(e.Type)
		switch {
		case !card.URNPattern.MatchString(id):
			w.settle(se, ReasonInvalidURN, fmt.Sprintf("the identifier %q is not urn:air:<publisher>[:<namespace>]:<name>", e.Identifier))
		case w.peer && (t == TypeCatalog || t == TypeRegistry):
			w.settle(se, ReasonRegistry, "listed by a peer registry: its catalogs and registries are not followed (no onward federation)")
		case t == TypeCatalog:
			if err := w.nested(ctx, se, depth); err != nil {
				return err
			}
		case t == TypeRegistry:
			var meta struct {
				Metadata registryMeta `json:"metadata"`
			}
			_ = json.Unmarshal(raw, &meta) // decodeEntry read it already
			w.registries = append(w.registries, registryRef{positioned{w.total, se}, meta.Metadata.RegistryID})
		case t != TypeA2ACard && t != TypeAgentCard:
			w.settle(se, ReasonNotA2A, fmt.Sprintf("type %q is not an A2A agent card", e.Type))
		case e.URL == "" && w.peer:
			w.settle(se, ReasonInlineCard, "an inline card listed by a peer registry: the registry catalogues cards by the URL that serves them")
		case e.URL == "":
			input, expect, reason, message := inlineTarget(manifestURL, e.Data)
			if reason != "" {
				w.settle(se, reason, message)
				continue
			}
			w.accept(se, e, pendingEntry{entry: se, input: input, expect: expect})
		default:
			w.accept(se, e, pendingEntry{entry: se, input: e.URL})
		}
	}
	return nil
}

// accept leaves an A2A entry to registration, unless it repeats an
// identifier or (--source-trust=reject) its trustManifest disagrees
// with its publisher.
func (w *walker) accept(se catalog.SourceEntry, e rawEntry, p pendingEntry) {
	id := se.Identifier
	switch {
	case w.seen[id]:
		w.settle(se, ReasonDuplicate, "the identifier is listed already by an earlier entry")
		return
	case !w.peer && w.s.cfg.Trust != TrustOff && trustDisagrees(e.TrustManifest, id):
		if w.s.cfg.Trust == TrustReject {
			w.settle(se, ReasonPublisherMismatch, "the trustManifest identity's domain is not the identifier's publisher "+publisherOf(id)+" (ARD §4.5.1)")
			return
		}
		p.entry.TrustFlag = ReasonPublisherMismatch
	}
	w.seen[id] = true
	p.pos = w.total
	w.pending = append(w.pending, p)
}

// nested follows a nested catalog entry (depth limit, loops, its fetch).
func (w *walker) nested(ctx context.Context, se catalog.SourceEntry, depth int) error {
	if se.URL == "" {
		w.settle(se, ReasonInvalidEntry, "a nested catalog without a url")
		return nil
	}
	if depth+1 > MaxDepth {
		w.settle(se, ReasonDepthLimit, fmt.Sprintf("nested deeper than %d catalogs", MaxDepth))
		return nil
	}
	canon, err := card.CanonicalCardURL(se.URL)
	if err != nil {
		w.settle(se, ReasonInvalidEntry, "the nested catalog's url is not an http(s) URL")
		return nil
	}
	if w.visited[canon] {
		w.settle(se, ReasonLoop, "this catalog was read already in this check (a loop of nested catalogs)")
		return nil
	}
	w.visited[canon] = true
	res, ok := w.fetched[canon]
	if !ok {
		res, err = w.s.fetcher.FetchURL(ctx, canon, crawler.Conditional{})
	}
	if err != nil {
		p, _ := crawler.ProblemOf(err)
		w.settle(se, p.Class, "the nested catalog could not be read: "+p.Message)
		return nil
	}
	entries, isManifest, err := parseManifest(res.Body, w.max)
	var tooMany *tooManyError
	switch {
	case errors.As(err, &tooMany):
		return tooMany
	case err != nil || !isManifest:
		w.settle(se, ProblemNotManifest, "the nested catalog is not a manifest")
		return nil
	}
	followed := se
	followed.Outcome, followed.Message = EntryFollowed, fmt.Sprintf("%d entries read", len(entries))
	followed.ETag, followed.LastModified = res.ETag, res.LastModified
	w.settled = append(w.settled, positioned{w.total, followed})
	return w.walk(ctx, canon, entries, depth+1)
}

// mergeEntries puts settled and catalogued entries back in reading order.
func mergeEntries(settled []positioned, catalogued []catalog.SourceEntry) []catalog.SourceEntry {
	out := make([]catalog.SourceEntry, 0, len(settled)+len(catalogued))
	i, j := 0, 0
	for i < len(settled) || j < len(catalogued) {
		if j == len(catalogued) || (i < len(settled) && settled[i].pos <= catalogued[j].Position) {
			out = append(out, settled[i].entry)
			i++
			continue
		}
		out = append(out, catalogued[j])
		j++
	}
	for k := range out {
		out[k].Position = k
	}
	return out
}

// catalogue registers the pending A2A entries of a source (those already
// catalogued from it under the same card URL are unchanged, an admin's
// removal is respected) and returns a check whose Entries are theirs,
// Position holding their reading position.
func (s *Service) catalogue(ctx context.Context, src catalog.Source, manifestURL string, pending []pendingEntry) catalog.SourceCheck {
	c := catalog.SourceCheck{Status: catalog.SourceOK, Changed: true}
	active, err := s.store.SourceAgents(ctx, src.ID)
	if err != nil {
		return failed("store", "the catalog could not be read; the check will be retried")
	}
	var toRegister []int
	var candidates []string
	cands := make([][]string, len(pending))
	for i, p := range pending {
		urls, err := crawler.ResolveCardURLs(p.input)
		if err != nil {
			pending[i].entry.Outcome, pending[i].entry.Reason = catalog.EntrySkipped, crawler.ClassInvalidURL
			pending[i].entry.Message = "the entry's url is not an http(s) URL"
			continue
		}
		cands[i] = urls
		candidates = append(candidates, urls...)
	}
	removed, err := s.store.AdminRemoved(ctx, candidates)
	if err != nil {
		return failed("store", "the catalog could not be read; the check will be retried")
	}
	for i, p := range pending {
		if p.entry.Outcome != "" {
			continue
		}
		e := &pending[i].entry
		if a, ok := active[e.Identifier]; ok && containsString(cands[i], a.CardURL) {
			e.Outcome, e.AgentID = catalog.EntryUnchanged, a.ID
			c.Keep = append(c.Keep, e.Identifier)
			continue
		}
		if anyIn(cands[i], removed) {
			e.Outcome, e.Reason, e.Message = catalog.EntrySkipped, ReasonRemovedByAdmin, "an admin removed this agent; register it by hand to bring it back"
			continue
		}
		toRegister = append(toRegister, i)
	}
	for start := 0; start < len(toRegister); start += batchSize {
		batch := toRegister[start:min(start+batchSize, len(toRegister))]
		regs := make([]crawler.Registration, len(batch))
		for k, i := range batch {
			e := pending[i].entry
			rel := relation(e.ManifestURL, cands[i][0])
			if src.Kind == catalog.SourceRegistry {
				rel = catalog.RelationFederatedFrom
			}
			regs[k] = crawler.Registration{Input: pending[i].input, Via: &catalog.Via{Kind: catalog.ProvenanceSource,
				SourceID: src.ID, SourceURL: src.URL, ManifestURL: e.ManifestURL, EntryID: e.Identifier,
				Relation: rel}, Expect: pending[i].expect}
		}
		out := s.reg.RegisterMany(ctx, sourcesActor, catalog.ScopeAll, regs, s.cfg.Concurrency)
		for k, i := range batch {
			e := &pending[i].entry
			o := out[k]
			switch p, ok := crawler.ProblemOf(o.Err); {
			case o.Err == nil:
				e.Outcome, e.AgentID = catalog.EntryCatalogued, o.Result.Agent.ID
				c.Keep = append(c.Keep, e.Identifier)
			case ok:
				e.Outcome, e.Reason, e.Message = catalog.EntrySkipped, p.Class, p.Message
				if p.Class != crawler.ClassBlockedAddress && p.Class != crawler.ClassInvalidURL && p.Class != crawler.ClassNotACard {
					// A card that fails for now still stands in the manifest.
					c.Keep = append(c.Keep, e.Identifier)
				}
			case errors.Is(o.Err, errInlineMismatch):
				e.Outcome, e.Reason = catalog.EntrySkipped, ReasonInlineMismatch
				e.Message = "the card " + o.Fetched.URL + " is another agent: none of its interfaces is the inline card's"
			case errors.Is(o.Err, crawler.ErrAlreadyCatalogued):
				e.Outcome, e.Reason, e.Message = catalog.EntrySkipped, ReasonHidden, "the agent is catalogued already"
			default:
				// The store failed: the whole check is retried, nothing
				// recorded as the entries' fate.
				s.log.ErrorContext(ctx, "registering a source's entries", "source_id", src.ID, "err", o.Err)
				return failed("store", "the catalog could not store the cards; the check will be retried")
			}
		}
	}
	counts := map[string]int{}
	c.Entries = make([]catalog.SourceEntry, len(pending))
	for i, p := range pending {
		c.Entries[i] = p.entry
		c.Entries[i].Position = p.pos
		counts[p.entry.Outcome]++
	}
	c.Message = fmt.Sprintf("%d A2A entries: %d catalogued, %d unchanged, %d skipped", len(pending),
		counts[catalog.EntryCatalogued], counts[catalog.EntryUnchanged], counts[catalog.EntrySkipped])
	return c
}

// relation is publishedFrom when the manifest is on the card's own host,
// discoveredFrom otherwise.
func relation(manifestURL, cardURL string) string {
	if hostOf(manifestURL) != "" && hostOf(manifestURL) == hostOf(cardURL) {
		return catalog.RelationPublishedFrom
	}
	return catalog.RelationDiscoveredFrom
}

func hostOf(u string) string {
	o, err := card.CanonicalOrigin(u)
	if err != nil {
		return ""
	}
	o = o[strings.Index(o, "://")+3:]
	if i := strings.LastIndexByte(o, ':'); i >= 0 && !strings.HasSuffix(o, "]") {
		o = o[:i]
	}
	return o
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func anyIn(list []string, set map[string]bool) bool {
	for _, v := range list {
		if set[v] {
			return true
		}
	}
	return false
}
