package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// RegistrarStore is what registration needs from the catalog: storing the
// cards, and recording the registration's fetch as the agent's first check
// (its validators, health and next check). *catalog.Store implements it.
// A fake or a decorator must offer all three: the first check is part of a
// registration, not an option a store may silently lack.
type RegistrarStore interface {
	UpsertBatch(ctx context.Context, actor catalog.Actor, ins []catalog.UpsertInput) ([]catalog.UpsertResult, error)
	// CrawlTargets are the crawl states of the listed agents among ids.
	CrawlTargets(ctx context.Context, agentIDs []string) ([]catalog.CrawlTarget, error)
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

// Prechecker checks a card before the write that would store it, for the
// admission policy to judge its signatures, publisher and content
// (*verify.Verifier implements it; catalog.Precheck).
type Prechecker interface {
	Precheck(ctx context.Context, c *card.Card, cardURL string) *catalog.Precheck
}

// registrarActor is who the catalog records as making a registration's
// follow-up writes (its first check): the audit log records the
// registration itself, under the actor who asked for it.
var registrarActor = catalog.System("registrar")

// Registrar registers an agent from a URL a user submitted, now rather
// than at the next crawl.
type Registrar struct {
	fetcher    *Fetcher
	store      RegistrarStore
	limits     card.Limits
	log        *slog.Logger
	policy     Policy
	verifier   CardVerifier
	prechecker Prechecker
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

// UsePrechecker prechecks every card a registration fetches before it is
// stored, so the admission policy judges its signatures: a reject rule on
// them refuses the cards it names, not every card as unchecked.
func (r *Registrar) UsePrechecker(p Prechecker) *Registrar {
	r.prechecker = p
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
	out := r.RegisterMany(ctx, actor, sc, []Registration{{Input: input}}, 1)
	return out[0].Result, out[0].Err
}

// Registration is one URL to register and how it came (nil Via: a
// person's registration, or an import).
type Registration struct {
	Input string
	Via   *catalog.Via
	// Expect, when set, judges the fetched card before it is stored: its
	// error is the registration's (a source's inline card names the
	// agent the URL must serve).
	Expect func(*card.Card) error
}

// Registered is the outcome of one Registration, as Register answers.
type Registered struct {
	Result catalog.UpsertResult
	Err    error
	// Fetched is the fetch's outcome when one arrived (for a caller that
	// reports latency), nil otherwise.
	Fetched *Result
}

// RegisterMany registers several URLs as Register does each, fetching up
// to parallel at once and storing the cards in one write (a seed list, a
// source's entries): one rule for registering, whether one URL or
// thousands. Each outcome is independent but the store's: when the write
// fails, every fetched card's outcome is that error.
func (r *Registrar) RegisterMany(ctx context.Context, actor catalog.Actor, sc catalog.Scope, regs []Registration, parallel int) []Registered {
	out := make([]Registered, len(regs))
	cards := make([]*card.Card, len(regs))
	checks := make([]*catalog.Precheck, len(regs))
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for i, reg := range regs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			for j := i; j < len(regs); j++ {
				out[j].Err = fmt.Errorf("registering %s: %w", regs[j].Input, ctx.Err())
			}
			wg.Wait()
			return out
		}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i].Fetched, cards[i], out[i].Err = r.fetchCard(ctx, sc, reg.Input)
			if out[i].Err == nil && reg.Expect != nil {
				out[i].Err = reg.Expect(cards[i])
			}
			if out[i].Err == nil && r.prechecker != nil {
				checks[i] = r.prechecker.Precheck(ctx, cards[i], out[i].Fetched.URL)
			}
		})
	}
	wg.Wait()

	var ins []catalog.UpsertInput
	var idx []int
	for i, reg := range regs {
		if out[i].Err != nil {
			continue
		}
		res := out[i].Fetched
		ins = append(ins, catalog.UpsertInput{
			CardURL:    res.URL,
			Card:       cards[i],
			Source:     catalog.SourceURL,
			ReceivedAt: res.ReceivedAt,
			// Scheduled as the policy would after this check; recordChecks
			// below refines it with the crawl state.
			NextCheckAt: r.policy.NextCheck(res.ReceivedAt, cacheHeadersOf(res)),
			Via:         reg.Via,
			Precheck:    checks[i],
		})
		idx = append(idx, i)
	}
	if len(ins) == 0 {
		return out
	}
	stored, err := r.store.UpsertBatch(ctx, actor, ins)
	if errors.Is(err, catalog.ErrRefused) {
		// The admission policy refused a card of the write: each is
		// stored on its own, so a refusal refuses only its own card.
		stored, idx, err = r.storeEach(ctx, actor, regs, out, ins, idx)
	}
	if err != nil {
		r.log.ErrorContext(ctx, "registering agents: storing cards failed", "cards", len(ins), "error", err)
		for _, i := range idx {
			out[i].Err = fmt.Errorf("registering %s: storing card: %w", regs[i].Input, err)
		}
		return out
	}
	for k, i := range idx {
		out[i].Result = stored[k]
	}
	if err := r.recordChecks(ctx, out, idx); err != nil {
		// The cards are stored; the crawler checks them again at once.
		r.log.WarnContext(ctx, "registering agents: recording the checks failed", "cards", len(idx), "error", err)
	}
	for _, i := range idx {
		o := out[i]
		if r.verifier != nil && o.Result.NewVersion {
			t := catalog.VerifyTarget{AgentID: o.Result.Agent.ID, CardURL: o.Result.Agent.CardURL,
				Version: o.Result.Agent.CurrentVersion, Raw: cards[i].Raw}
			if err := r.verifier.VerifyStored(ctx, t); err != nil {
				// The background verifier picks the version up.
				r.log.WarnContext(ctx, "registering agent: verifying failed", "agent_id", o.Result.Agent.ID, "error", err)
			}
		}
		r.log.InfoContext(ctx, "agent registered",
			"agent_id", o.Result.Agent.ID, "card_url", o.Fetched.URL, "created", o.Result.Created,
			"new_version", o.Result.NewVersion, "legacy_path", o.Fetched.LegacyPath, "latency_ms", o.Fetched.Latency.Milliseconds())
	}
	return out
}

// fetchCard fetches and parses the card at input for a registration in
// scope sc.
func (r *Registrar) fetchCard(ctx context.Context, sc catalog.Scope, input string) (*Result, *card.Card, error) {
	if candidates, err := ResolveCardURLs(input); err == nil {
		if err := r.visible(ctx, sc, candidates...); err != nil {
			return nil, nil, err
		}
	}
	res, err := r.fetcher.Fetch(ctx, input, Conditional{})
	if err != nil {
		r.log.WarnContext(ctx, "registering agent: fetch failed", "input", input, "error", err)
		return nil, nil, fmt.Errorf("registering %s: %w", input, err)
	}
	if err := r.visible(ctx, sc, res.URL); err != nil {
		return nil, nil, err
	}
	c, err := card.Parse(res.Body, r.limits)
	if err != nil {
		r.log.WarnContext(ctx, "registering agent: card rejected", "card_url", res.URL, "error", err)
		return nil, nil, fmt.Errorf("registering %s: card from %s: %w", input, res.URL, err)
	}
	return res, c, nil
}

// recordChecks stores the registrations' fetches (out at idx) as
// successful checks of their agents: validators, health, fetch log and
// the next check per policy.
func (r *Registrar) recordChecks(ctx context.Context, out []Registered, idx []int) error {
	ids := make([]string, len(idx))
	for k, i := range idx {
		ids[k] = out[i].Result.Agent.ID
	}
	ts, err := r.store.CrawlTargets(ctx, ids)
	if err != nil {
		return err
	}
	byID := make(map[string]catalog.CrawlTarget, len(ts))
	for _, t := range ts {
		byID[t.AgentID] = t
	}
	outs := make([]catalog.FetchOutcome, 0, len(idx))
	for _, i := range idx {
		res, id := out[i].Fetched, out[i].Result.Agent.ID
		t, ok := byID[id]
		if !ok {
			continue
		}
		o := catalog.FetchOutcome{
			AgentID: id, At: res.ReceivedAt, URL: res.URL, LegacyPath: res.LegacyPath,
			Status: res.Status, Latency: res.Latency, ETag: res.ETag, LastModified: res.LastModified,
		}
		r.policy.Apply(o.At, t, cacheHeadersOf(res), &o)
		outs = append(outs, o)
	}
	if len(outs) == 0 {
		return nil
	}
	_, err = r.store.RecordFetches(ctx, registrarActor, outs)
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

// storeEach stores ins one by one; a card the admission policy refuses is
// its registration's error (the rule named), the others are stored. It
// returns the stored results and the indexes of regs they belong to.
func (r *Registrar) storeEach(ctx context.Context, actor catalog.Actor, regs []Registration, out []Registered,
	ins []catalog.UpsertInput, idx []int) ([]catalog.UpsertResult, []int, error) {
	var (
		stored []catalog.UpsertResult
		kept   []int
	)
	for k, i := range idx {
		res, err := r.store.UpsertBatch(ctx, actor, ins[k:k+1])
		switch {
		case errors.Is(err, catalog.ErrRefused):
			r.log.InfoContext(ctx, "registering agent: refused by the admission policy", "card_url", ins[k].CardURL, "error", err)
			out[i].Err = fmt.Errorf("registering %s: %w", regs[i].Input, err)
		case err != nil:
			for j, kk := range kept {
				out[kk].Result = stored[j]
			}
			return nil, idx[k:], err
		default:
			stored, kept = append(stored, res[0]), append(kept, i)
		}
	}
	return stored, kept, nil
}
