package crawler

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// Store is what registration needs from the catalog.
type Store interface {
	Upsert(ctx context.Context, actor catalog.Actor, in catalog.UpsertInput) (catalog.UpsertResult, error)
}

// registrarActor is who the catalog records as registering an agent.
// Until sign-in exists no user can be named; then it is the one who
// submitted the URL.
var registrarActor = catalog.System("registrar")

// Registrar registers an agent from a URL a user submitted, now rather
// than at the next crawl.
type Registrar struct {
	fetcher *Fetcher
	store   Store
	limits  card.Limits
	log     *slog.Logger
}

// NewRegistrar wires a Registrar. A nil log discards.
func NewRegistrar(f *Fetcher, s Store, lim card.Limits, log *slog.Logger) *Registrar {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registrar{fetcher: f, store: s, limits: lim, log: log}
}

// Register fetches the card at input (a card URL or an origin), parses it
// and upserts it under the URL that served it. That is the candidate URL,
// not a redirect target, so the agent keeps its identity when the host
// moves the file around.
//
// Errors wrap, for errors.As / errors.Is: *FetchError (which wraps
// ErrInvalidURL for bad input) when the card could not be fetched, and
// *card.ParseError (card.ErrInvalid) when the bytes are not a card. Any
// other error is the store's.
func (r *Registrar) Register(ctx context.Context, input string) (catalog.UpsertResult, error) {
	res, err := r.fetcher.Fetch(ctx, input, Conditional{})
	if err != nil {
		r.log.WarnContext(ctx, "registering agent: fetch failed", "input", input, "error", err)
		return catalog.UpsertResult{}, fmt.Errorf("registering %s: %w", input, err)
	}
	c, err := card.Parse(res.Body, r.limits)
	if err != nil {
		r.log.WarnContext(ctx, "registering agent: card rejected", "card_url", res.URL, "error", err)
		return catalog.UpsertResult{}, fmt.Errorf("registering %s: card from %s: %w", input, res.URL, err)
	}
	out, err := r.store.Upsert(ctx, registrarActor, catalog.UpsertInput{
		CardURL:    res.URL,
		Card:       c,
		Source:     catalog.SourceURL,
		ReceivedAt: res.ReceivedAt,
	})
	if err != nil {
		r.log.ErrorContext(ctx, "registering agent: storing card failed", "card_url", res.URL, "error", err)
		return catalog.UpsertResult{}, fmt.Errorf("registering %s: storing card: %w", input, err)
	}
	r.log.InfoContext(ctx, "agent registered",
		"agent_id", out.Agent.ID, "card_url", res.URL, "created", out.Created,
		"new_version", out.NewVersion, "legacy_path", res.LegacyPath, "latency_ms", res.Latency.Milliseconds())
	return out, nil
}
