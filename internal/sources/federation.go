package sources

// Federation: a source of kind registry is a peer registry whose agents
// this registry catalogues (docs/sources.md#federation). A peer of this
// kind advertises its change feed in its ARD manifest's registry entry
// (metadata change_feed, registry_id); it is followed from the last seq
// read, so removals propagate. Any other ARD registry is paged through
// GET /agents, every page of a complete sync; entries missing from a
// complete sync are removals. Either way each card URL goes through the
// normal registration path (fetched and verified here: trust is never
// inherited), the provenance relation is federatedFrom, and agents the
// peer itself knows only through federation are skipped (no loops).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/crawler"
)

// How a peer registry is read (catalog.Source.ResolvedVia of a registry
// source).
const (
	ViaChangeFeed = "change_feed"
	ViaARDAgents  = "ard_agents"
)

// Problems of a peer registry; stored and shown, so stable.
const (
	// ProblemSelf: the peer is this registry (same registry id).
	ProblemSelf = "self"
	// ProblemNotRegistry: the URL names no registry (no registry entry
	// in the origin's ARD manifest, and no search base path).
	ProblemNotRegistry = "not_a_registry"
	// ProblemBadPage: a page of the peer is not the JSON it should be.
	ProblemBadPage = "bad_page"
	// ProblemCursorBackwards: the peer's change feed went back before the
	// cursor this registry holds.
	ProblemCursorBackwards = "cursor_backwards"
	// ProblemPagingLoop: the peer's GET /agents handed out a page token
	// twice in one sync.
	ProblemPagingLoop = "paging_loop"
	// ProblemSyncTimeout: reading the peer took longer than the time
	// limit of a sync.
	ProblemSyncTimeout = "sync_timeout"
)

// Reasons of entries federation skips.
const (
	// ReasonFederatedByPeer: the peer knows the agent only through
	// federation itself; this registry does not take it onward.
	ReasonFederatedByPeer = "federated_by_peer"
	// ReasonSelf: a registry entry that names this registry.
	ReasonSelf = "self"
)

// Defaults of the federation settings.
const (
	DefaultMaxPeerEntries = 100_000
	DefaultSyncTimeout    = 5 * time.Minute
	// feedPageSize and ardPageSize are the pages asked of peers: the
	// change feed's and ARD's maxima (spec/ard.md §7.4).
	feedPageSize = 1000
	ardPageSize  = 100
	maxTokenLen  = 4096
)

// Errors of Add.
var (
	// ErrInvalidToken wraps a token that is not an RFC 6750 b64token, or
	// one given for a source that is not a registry.
	ErrInvalidToken = errors.New("invalid peer token")
	// ErrInvalidKind wraps a kind other than manifest and registry.
	ErrInvalidKind = errors.New("invalid source kind")
)

// registryMeta is the metadata of a registry entry of this kind (see the
// ARD door's manifest).
type registryMeta struct {
	ChangeFeed string `json:"change_feed"`
	RegistryID string `json:"registry_id"`
}

// peer is a registry as resolved for one sync.
type peer struct {
	base, feed, id, name string
}

// validToken tells an RFC 6750 §2.1 b64token.
func validToken(t string) bool {
	if t == "" || len(t) > maxTokenLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-._~+/=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// selfID is this registry's id, read once (it never changes); "" when it
// cannot be read (the check that uses it then relies on the guarded
// client's own refusal of the registry's addresses).
func (s *Service) selfID(ctx context.Context) string {
	s.mu.Lock()
	id := s.registryID
	s.mu.Unlock()
	if id != "" {
		return id
	}
	id, err := s.store.RegistryID(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "reading the registry id", "err", err)
		return ""
	}
	s.mu.Lock()
	s.registryID = id
	s.mu.Unlock()
	return id
}

// header is what a request to the peer of src carries: its bearer token,
// if any. The token is read from the catalog for each sync and goes
// nowhere else (not in a status, an entry or a log line).
func (s *Service) header(ctx context.Context, src catalog.Source) (http.Header, error) {
	h := http.Header{}
	if !src.HasToken {
		return h, nil
	}
	tok, err := s.store.SourceToken(ctx, src.ID)
	if err != nil {
		return nil, err
	}
	h.Set("Authorization", "Bearer "+tok)
	return h, nil
}

// federate reads a peer registry source.
func (s *Service) federate(ctx context.Context, src catalog.Source) catalog.SourceCheck {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.SyncTimeout)
	defer cancel()
	h, err := s.header(ctx, src)
	if err != nil {
		s.log.ErrorContext(ctx, "reading a peer's token", "source_id", src.ID, "err", err)
		return failed("store", "the peer's token could not be read (are the secret keys configured as when it was stored?)")
	}
	self := s.selfID(ctx)
	p, fail := s.resolvePeer(ctx, src, h, self)
	if fail != nil {
		return s.timedOut(ctx, *fail)
	}
	var c catalog.SourceCheck
	if p.feed != "" {
		c = s.followFeed(ctx, src, p, h, self)
	} else {
		c = s.pageAgents(ctx, src, p, h)
	}
	c = s.timedOut(ctx, c)
	if c.Status == catalog.SourceOK {
		c.PeerID, c.PeerURL, c.PeerName = p.id, p.base, p.name
	}
	return c
}

// timedOut words a failure of a sync whose time ran out as such.
func (s *Service) timedOut(ctx context.Context, c catalog.SourceCheck) catalog.SourceCheck {
	if c.Status == catalog.SourceFailed && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return failed(ProblemSyncTimeout, fmt.Sprintf("reading the peer took longer than %s (the time limit of a sync); nothing was changed", s.cfg.SyncTimeout))
	}
	return c
}

// resolvePeer finds how to read the registry src names: the registry
// entry of its origin's ARD manifest whose url is src's URL (or, for an
// origin, its only registry entry), else src's URL as an ARD search base.
func (s *Service) resolvePeer(ctx context.Context, src catalog.Source, h http.Header, self string) (peer, *catalog.SourceCheck) {
	canon, err := card.CanonicalCardURL(src.URL)
	if err != nil {
		f := failed(ProblemNotRegistry, "the source URL is not an http(s) URL")
		return peer{}, &f
	}
	origin, isOrig := isOrigin(canon)
	if !isOrig {
		origin, _ = card.CanonicalOrigin(canon)
	}
	var found []peer
	res, err := s.fetcher.FetchURLWith(ctx, origin+ardPath, crawler.Conditional{}, h)
	if err == nil {
		found = registryEntries(res.Body, origin)
	}
	for _, p := range found {
		if strings.TrimSuffix(p.base, "/") == strings.TrimSuffix(canon, "/") || (isOrig && len(found) == 1) {
			if self != "" && p.id == self {
				f := failed(ProblemSelf, "the peer is this registry itself (same registry id); a registry does not federate from itself")
				return peer{}, &f
			}
			return p, nil
		}
	}
	if isOrig {
		if err != nil && (res == nil || res.Status != http.StatusNotFound) {
			f := fetchFailed("the peer's manifest "+origin+ardPath, err)
			return peer{}, &f
		}
		f := failed(ProblemNotRegistry, "the origin "+origin+" lists no registry (an application/ai-registry+json entry) in its ARD manifest; give the registry's search base URL instead")
		return peer{}, &f
	}
	// An ARD registry that does not list itself: its URL is the base.
	return peer{base: strings.TrimSuffix(canon, "/") + "/"}, nil
}

// registryEntries are the registry entries of an ARD manifest, with the
// change feed of those that advertise one on the manifest's own origin (a
// feed elsewhere is ignored: the peer's token goes to its origin only).
func registryEntries(body []byte, origin string) []peer {
	raws, ok, err := parseManifest(body, DefaultMaxEntries)
	if err != nil || !ok {
		return nil
	}
	var out []peer
	for _, raw := range raws {
		e, err := decodeEntry(raw)
		if err != nil || mediaType(e.Type) != TypeRegistry || e.URL == "" {
			continue
		}
		base, err := card.CanonicalCardURL(e.URL)
		if err != nil {
			continue
		}
		p := peer{base: strings.TrimSuffix(base, "/") + "/", name: e.DisplayName}
		var meta struct {
			Metadata registryMeta `json:"metadata"`
		}
		if json.Unmarshal(raw, &meta) == nil {
			p.id = meta.Metadata.RegistryID
			if f, err := card.CanonicalCardURL(meta.Metadata.ChangeFeed); err == nil && sameOrigin(f, origin) && sameOrigin(base, origin) {
				p.feed = f
			}
		}
		out = append(out, p)
	}
	return out
}

func sameOrigin(u, origin string) bool {
	o, err := card.CanonicalOrigin(u)
	return err == nil && o == origin
}

// feedPage is a page of a peer's change feed (the JSON API's ChangeList).
type feedPage struct {
	Items *[]struct {
		Seq       int64  `json:"seq"`
		Kind      string `json:"kind"`
		CardURL   string `json:"card_url"`
		Federated bool   `json:"federated"`
	} `json:"items"`
	NextSince  *int64 `json:"next_since"`
	RegistryID string `json:"registry_id"`
}

// feedState is what the feed last said of a card URL.
type feedState struct {
	removed, federated bool
}

// followFeed reads a peer's change feed from the source's cursor, at most
// MaxPeerEntries changes in one sync (the rest follows at once, in the
// next check), and catalogues what it says: present agents registered,
// removed ones (and those the peer only federates) no longer vouched for
// by this peer. A page that is not the feed's shape, or a cursor that
// goes back, fails the sync and changes nothing.
func (s *Service) followFeed(ctx context.Context, src catalog.Source, p peer, h http.Header, self string) catalog.SourceCheck {
	var since int64
	if src.Cursor != "" {
		n, err := strconv.ParseInt(src.Cursor, 10, 64)
		if err != nil || n < 0 {
			return failed("store", "the stored cursor "+strconv.Quote(src.Cursor)+" is not a seq")
		}
		since = n
	}
	start := since
	states := map[string]feedState{}
	var order []string
	read, partial := 0, false
	for {
		u := p.feed + "?since=" + strconv.FormatInt(since, 10) + "&limit=" + strconv.Itoa(feedPageSize)
		res, err := s.fetcher.FetchURLWith(ctx, u, crawler.Conditional{}, h)
		if err != nil {
			return fetchFailed("the peer's change feed "+p.feed, err)
		}
		var pg feedPage
		if err := json.Unmarshal(res.Body, &pg); err != nil || pg.Items == nil || pg.NextSince == nil {
			return failed(ProblemBadPage, "a page of the peer's change feed "+p.feed+" is not a change list (items, next_since); nothing was changed")
		}
		if self != "" && pg.RegistryID == self {
			return failed(ProblemSelf, "the peer's change feed is this registry's own (same registry id); a registry does not federate from itself")
		}
		if *pg.NextSince < since {
			return failed(ProblemCursorBackwards, fmt.Sprintf("the peer's change feed answered next_since %d to since %d: its feed went back (restored from a backup?); nothing was changed — delete and add the source again to read it from the start", *pg.NextSince, since))
		}
		for _, it := range *pg.Items {
			if it.Seq <= since || it.Seq > *pg.NextSince {
				return failed(ProblemCursorBackwards, fmt.Sprintf("the peer's change feed listed seq %d outside (%d, %d]; nothing was changed", it.Seq, since, *pg.NextSince))
			}
			if _, ok := states[it.CardURL]; !ok {
				order = append(order, it.CardURL)
			}
			states[it.CardURL] = feedState{removed: it.Kind == catalog.ChangeRemoved, federated: it.Federated}
		}
		read += len(*pg.Items)
		if len(*pg.Items) == 0 || *pg.NextSince == since {
			break
		}
		since = *pg.NextSince
		if read >= s.cfg.MaxPeerEntries {
			partial = true
			break
		}
	}
	c := catalog.SourceCheck{Status: catalog.SourceOK, ResolvedURL: p.feed, ResolvedVia: ViaChangeFeed,
		Cursor: strconv.FormatInt(since, 10), Incremental: true}
	var pending []pendingEntry
	var settled []catalog.SourceEntry
	for _, cardURL := range order {
		st := states[cardURL]
		se := catalog.SourceEntry{ManifestURL: p.feed, Identifier: urnOf(cardURL), Type: TypeA2ACard, URL: cardURL}
		switch {
		case se.Identifier == "":
			se.Outcome, se.Reason, se.Message = catalog.EntrySkipped, crawler.ClassInvalidURL, "the peer's card URL is not an http(s) URL (a card it imported)"
			settled = append(settled, se)
		case st.removed:
			c.Removed = append(c.Removed, se.Identifier)
		case st.federated:
			se.Outcome, se.Reason, se.Message = catalog.EntrySkipped, ReasonFederatedByPeer, "the peer knows this agent only from another registry: not federated onward"
			settled = append(settled, se)
		default:
			pending = append(pending, pendingEntry{pos: len(pending), entry: se, input: cardURL})
		}
	}
	cat := s.catalogue(ctx, src, p.feed, pending)
	if cat.Status != catalog.SourceOK {
		return cat
	}
	c.Entries, c.Keep = append(cat.Entries, settled...), cat.Keep
	c.Changed = len(c.Entries)+len(c.Removed) > 0
	c.Message = fmt.Sprintf("%d changes read (seq %d to %d): %s, %d removed at the peer", read, start, since,
		strings.TrimSuffix(outcomes(c.Entries), "."), len(c.Removed))
	if partial {
		// The rest is read at once, not after an interval.
		c.Message += fmt.Sprintf("; %d changes read, the cap of one sync (--federation-max-entries): the next check, due now, reads on", s.cfg.MaxPeerEntries)
		c.NextCheckAt = time.Now()
	}
	return c
}

// outcomes counts entries by outcome, in words.
func outcomes(entries []catalog.SourceEntry) string {
	n := map[string]int{}
	for _, e := range entries {
		n[e.Outcome]++
	}
	return fmt.Sprintf("%d catalogued, %d unchanged, %d skipped", n[catalog.EntryCatalogued], n[catalog.EntryUnchanged], n[catalog.EntrySkipped])
}

// agentsPage is a page of ARD GET /agents (spec/ard.md §7.4).
type agentsPage struct {
	Items     *[]json.RawMessage `json:"items"`
	PageToken string             `json:"pageToken"`
}

// entryMeta is what an ARD entry of a registry of this kind says of its
// agent's provenance (the door's metadata.provenance).
type entryMeta struct {
	Metadata struct {
		Provenance string `json:"provenance"`
	} `json:"metadata"`
}

// pageAgents reads every page of an ARD registry's GET /agents. Only a
// complete sync changes anything: entries it no longer lists are
// removals then; a failed page, a page token seen twice or more than
// MaxPeerEntries entries fail the sync.
func (s *Service) pageAgents(ctx context.Context, src catalog.Source, p peer, h http.Header) catalog.SourceCheck {
	list := p.base + "agents"
	var raws []json.RawMessage
	tokens := map[string]bool{}
	token := ""
	for {
		u := list + "?pageSize=" + strconv.Itoa(ardPageSize)
		if token != "" {
			u += "&pageToken=" + url.QueryEscape(token)
		}
		res, err := s.fetcher.FetchURLWith(ctx, u, crawler.Conditional{}, h)
		if err != nil {
			return fetchFailed("the peer's agent list "+list, err)
		}
		var pg agentsPage
		if err := json.Unmarshal(res.Body, &pg); err != nil || pg.Items == nil {
			return failed(ProblemBadPage, "a page of the peer's agent list "+list+" is not an ARD list (items); nothing was changed")
		}
		raws = append(raws, *pg.Items...)
		if len(raws) > s.cfg.MaxPeerEntries {
			return failed(ProblemTooManyEntries, fmt.Sprintf("the peer lists more than %d agents (the cap per sync, --federation-max-entries); nothing was changed", s.cfg.MaxPeerEntries))
		}
		if pg.PageToken == "" {
			break
		}
		if tokens[pg.PageToken] {
			return failed(ProblemPagingLoop, "the peer's agent list handed out the same page token twice in one sync; nothing was changed")
		}
		tokens[pg.PageToken] = true
		token = pg.PageToken
	}
	var own []json.RawMessage
	var skipped []positioned
	for i, raw := range raws {
		var m entryMeta
		if json.Unmarshal(raw, &m) == nil && m.Metadata.Provenance == catalog.RelationFederatedFrom {
			e, _ := decodeEntry(raw)
			skipped = append(skipped, positioned{i + 1, catalog.SourceEntry{ManifestURL: list, Identifier: card.NormalizeURN(e.Identifier),
				DisplayName: e.DisplayName, Type: e.Type, URL: e.URL, Outcome: catalog.EntrySkipped, Reason: ReasonFederatedByPeer,
				Message: "the peer knows this agent only from another registry: not federated onward"}})
			continue
		}
		own = append(own, raw)
	}
	w := &walker{s: s, visited: map[string]bool{list: true}, seen: map[string]bool{}, peer: true, max: s.cfg.MaxPeerEntries}
	if err := w.walk(ctx, list, own, 0); err != nil {
		return failed(ProblemTooManyEntries, err.Error()+"; nothing was changed")
	}
	c := s.catalogue(ctx, src, list, w.pending)
	if c.Status != catalog.SourceOK {
		return c
	}
	c.Entries = append(mergeEntries(w.settled, c.Entries), entriesOf(skipped)...)
	c.ResolvedURL, c.ResolvedVia = list, ViaARDAgents
	c.Message = fmt.Sprintf("%d agents listed by the peer: %s", len(raws), outcomes(c.Entries))
	return c
}

func entriesOf(ps []positioned) []catalog.SourceEntry {
	out := make([]catalog.SourceEntry, len(ps))
	for i, p := range ps {
		out[i] = p.entry
	}
	return out
}

// followRegistries makes a registry source (kind registry, parent src)
// of each registry entry of src's manifest, deletes those of entries that
// left it, and returns the entries settled as followed (or skipped).
func (s *Service) followRegistries(ctx context.Context, src catalog.Source, regs []registryRef) ([]positioned, error) {
	all, err := s.store.Sources(ctx)
	if err != nil {
		return nil, err
	}
	self := ""
	if len(regs) > 0 {
		self = s.selfID(ctx)
	}
	children := map[string]catalog.Source{}
	taken := map[string]bool{}
	for _, c := range all {
		taken[c.URL] = true
		if c.ParentID == src.ID {
			children[c.URL] = c
		}
	}
	named := map[string]bool{}
	out := make([]positioned, 0, len(regs))
	for _, r := range regs {
		e := r.entry
		canon, err := card.CanonicalCardURL(e.URL)
		switch {
		case err != nil:
			e.Outcome, e.Reason, e.Message = catalog.EntrySkipped, ReasonInvalidEntry, "the registry entry's url is not an http(s) URL"
		case self != "" && r.id == self:
			e.Outcome, e.Reason, e.Message = catalog.EntrySkipped, ReasonSelf, "this registry itself: not federated"
		default:
			named[canon] = true
			child, ok := children[canon]
			switch {
			case ok:
			case taken[canon]:
				e.Outcome, e.Reason, e.Message = catalog.EntrySkipped, ReasonDuplicate, "a source of this URL exists already"
				out = append(out, positioned{r.pos, e})
				continue
			default:
				child, err = s.store.CreateSource(ctx, sourcesActor, catalog.NewSource{URL: canon, Kind: catalog.SourceRegistry, ParentID: src.ID})
				if err != nil && !errors.Is(err, catalog.ErrConflict) {
					return nil, err
				}
				children[canon], taken[canon] = child, true
			}
			e.Outcome, e.Message = EntryFollowed, "federated from through source "+child.ID
		}
		out = append(out, positioned{r.pos, e})
	}
	for u, c := range children {
		if !named[u] {
			if _, err := s.store.DeleteSource(ctx, sourcesActor, c.ID); err != nil && !errors.Is(err, catalog.ErrNotFound) {
				return nil, err
			}
		}
	}
	return out, nil
}
