package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// RegistrarStore is what registration needs from the catalog: storing the
// card, and recording the registration's fetch as the agent's first check
// (its validators, health and next check). *catalog.Store implements it.
// A fake or a decorator must offer all three: the first check is part of a
// registration, not an option a store may silently lack.
type RegistrarStore interface {
	Upsert(ctx context.Context, actor catalog.Actor, in catalog.UpsertInput) (catalog.UpsertResult, error)
	CrawlTarget(ctx context.Context, agentID string) (catalog.CrawlTarget, error)
	RecordFetches(ctx context.Context, actor catalog.Actor, outs []catalog.FetchOutcome) ([]catalog.UpsertResult, error)
	// HidesCardURL tells whether one of the URLs is an agent the scope
	// does not see.
	HidesCardURL(ctx context.Context, sc catalog.Scope, cardURLs []string) (bool, error)
}

// ErrAlreadyCatalogued refuses to register a URL whose agent the caller
// may not see: the answer names neither the agent nor its id, and nothing
// is fetched, stored or audited as the caller's registration (which would
// refresh the hidden agent in their name and tell them what it is).
var ErrAlreadyCatalogued = errors.New("already catalogued")

var _ RegistrarStore = (*catalog.Store)(nil)

// CardVerifier verifies a stored card version and stores the report
// (*verify.Runner implements it), so that a registration answers with the
// signature verdict instead of "unchecked" until the background pass.
type CardVerifier interface {
	VerifyStored(ctx context.Context, t catalog.VerifyTarget) error
}

// registrarActor is who the catalog records as making a registration's
// follow-up writes (its first check): the audit log records the
// registration itself, under the actor who asked for it.
var registrarActor = catalog.System("registrar")

// Registrar registers an agent from a URL a user submitted, now rather
// than at the next crawl.
type Registrar struct {
	fetcher  *Fetcher
	store    RegistrarStore
	limits   card.Limits
	log      *slog.Logger
	policy   Policy
	verifier CardVerifier
}

// NewRegistrar wires a Registrar. A nil log discards. The refresh policy
// is the default one until UsePolicy; nothing is verified until
// UseVerifier.
func NewRegistrar(f *Fetcher, s RegistrarStore, lim card.Limits, log *slog.Logger) *Registrar {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registrar{fetcher: f, store: s, limits: lim, log: log, policy: Policy{}.withDefaults()}
}

// UsePolicy schedules the check after a registration with p, the
// crawler's policy (Crawler.Policy).
func (r *Registrar) UsePolicy(p Policy) *Registrar {
	r.policy = p.withDefaults()
	return r
}

// UseVerifier verifies every card version a registration stores before
// Register returns.
func (r *Registrar) UseVerifier(v CardVerifier) *Registrar {
	r.verifier = v
	return r
}

// Register fetches the card at input (a card URL or an origin), parses it
// and upserts it under the URL that served it. That is the candidate URL in
// its canonical form (card.CanonicalCardURL, via ResolveCardURLs), not a
// redirect target, so every spelling of one URL is one agent and the agent
// keeps its identity when the host moves the file around. A JSON object
// that is not a card is refused with card.CodeNotACard.
//
// The fetch counts as the agent's first check: its validators (ETag,
// Last-Modified), health and next check are stored as a scheduled check
// would store them, so the crawler's next request is conditional and
// comes when the card's cache headers say, not at once. With a verifier, a new version is
// verified before Register returns.
//
// Errors wrap, for errors.As / errors.Is: *FetchError (which wraps
// ErrInvalidURL for bad input) when the card could not be fetched, and
// *card.ParseError (card.ErrInvalid) when the bytes are not a card;
// ProblemOf words both for users. Any other error is the store's. The card
// is stored as actor's: the user who submitted the URL, or the system part
// that did (seeds).
//
// sc is what the caller sees: a URL whose candidates name an agent
// outside it is ErrAlreadyCatalogued before anything is fetched, and so is
// a card URL the fetch lands on.
func (r *Registrar) Register(ctx context.Context, actor catalog.Actor, sc catalog.Scope, input string) (catalog.UpsertResult, error) {
	if candidates, err := ResolveCardURLs(input); err == nil {
		if err := r.visible(ctx, sc, candidates...); err != nil {
			return catalog.UpsertResult{}, err
		}
	}
	res, err := r.fetcher.Fetch(ctx, input, Conditional{})
	if err != nil {
		r.log.WarnContext(ctx, "registering agent: fetch failed", "input", input, "error", err)
		return catalog.UpsertResult{}, fmt.Errorf("registering %s: %w", input, err)
	}
	if err := r.visible(ctx, sc, res.URL); err != nil {
		return catalog.UpsertResult{}, err
	}
	c, err := card.Parse(res.Body, r.limits)
	if err != nil {
		r.log.WarnContext(ctx, "registering agent: card rejected", "card_url", res.URL, "error", err)
		return catalog.UpsertResult{}, fmt.Errorf("registering %s: card from %s: %w", input, res.URL, err)
	}
	out, err := r.store.Upsert(ctx, actor, catalog.UpsertInput{
		CardURL:    res.URL,
		Card:       c,
		Source:     catalog.SourceURL,
		ReceivedAt: res.ReceivedAt,
		// Scheduled as the policy would after this check; recordCheck
		// below refines it with the crawl state.
		NextCheckAt: r.policy.NextCheck(res.ReceivedAt, cacheHeadersOf(res)),
	})
	if err != nil {
		r.log.ErrorContext(ctx, "registering agent: storing card failed", "card_url", res.URL, "error", err)
		return catalog.UpsertResult{}, fmt.Errorf("registering %s: storing card: %w", input, err)
	}
	if err := r.recordCheck(ctx, out.Agent.ID, res); err != nil {
		// The card is stored; the crawler checks it again at once.
		r.log.WarnContext(ctx, "registering agent: recording the check failed", "agent_id", out.Agent.ID, "error", err)
	}
	if r.verifier != nil && out.NewVersion {
		t := catalog.VerifyTarget{AgentID: out.Agent.ID, CardURL: out.Agent.CardURL, Version: out.Agent.CurrentVersion, Raw: c.Raw}
		if err := r.verifier.VerifyStored(ctx, t); err != nil {
			// The background verifier picks the version up.
			r.log.WarnContext(ctx, "registering agent: verifying failed", "agent_id", out.Agent.ID, "error", err)
		}
	}
	r.log.InfoContext(ctx, "agent registered",
		"agent_id", out.Agent.ID, "card_url", res.URL, "created", out.Created,
		"new_version", out.NewVersion, "legacy_path", res.LegacyPath, "latency_ms", res.Latency.Milliseconds())
	return out, nil
}

// recordCheck stores the registration's fetch as a successful check of
// the agent: validators, health, fetch log and the next check per policy.
func (r *Registrar) recordCheck(ctx context.Context, agentID string, res *Result) error {
	t, err := r.store.CrawlTarget(ctx, agentID)
	if err != nil {
		return err
	}
	o := catalog.FetchOutcome{
		AgentID: agentID, At: res.ReceivedAt, URL: res.URL, LegacyPath: res.LegacyPath,
		Status: res.Status, Latency: res.Latency, ETag: res.ETag, LastModified: res.LastModified,
	}
	r.policy.Apply(o.At, t, cacheHeadersOf(res), &o)
	_, err = r.store.RecordFetches(ctx, registrarActor, []catalog.FetchOutcome{o})
	return err
}

// visible refuses card URLs of an agent outside sc (ErrAlreadyCatalogued).
func (r *Registrar) visible(ctx context.Context, sc catalog.Scope, cardURLs ...string) error {
	hidden, err := r.store.HidesCardURL(ctx, sc, cardURLs)
	if err != nil {
		return fmt.Errorf("registering: %w", err)
	}
	if hidden {
		return fmt.Errorf("registering: %w", ErrAlreadyCatalogued)
	}
	return nil
}
