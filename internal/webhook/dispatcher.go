package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/query"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// Store is the part of the catalog the dispatcher uses.
type Store interface {
	Webhooks(ctx context.Context) ([]catalog.Webhook, error)
	WebhookCursor(ctx context.Context) (int64, error)
	Events(ctx context.Context, since int64, limit int) ([]catalog.Event, error)
	Search(ctx context.Context, q catalog.Query) (catalog.Page, error)
	EnqueueWebhookDeliveries(ctx context.Context, from, to int64, ds []catalog.NewWebhookDelivery, now time.Time) error
	ClaimWebhookDeliveries(ctx context.Context, now time.Time, limit int, lease time.Duration) ([]catalog.DueDelivery, error)
	FinishWebhookDeliveries(ctx context.Context, fs []catalog.FinishedDelivery) error
}

// Defaults of Config.
const (
	DefaultInterval   = 500 * time.Millisecond
	DefaultRetryFor   = 24 * time.Hour
	DefaultFirstRetry = 5 * time.Second
	DefaultMaxRetry   = time.Hour
	DefaultLease      = 2 * time.Minute
	DefaultBatch      = 500
	defaultFanOut     = 500
	// sendConcurrency bounds the attempts one batch makes at once.
	sendConcurrency = 64
)

// Config tunes a Dispatcher; zero fields take the defaults.
type Config struct {
	// Interval is how often the feed and the due deliveries are polled.
	Interval time.Duration
	// RetryFor is how long a delivery is retried before its subscription
	// is disabled.
	RetryFor time.Duration
	// FirstRetry is the delay after the first failure; it doubles per
	// attempt up to MaxRetry, with jitter.
	FirstRetry, MaxRetry time.Duration
	// Lease is how long a claimed delivery is another replica's to leave
	// alone; longer than the client's timeout.
	Lease time.Duration
	// Batch is how many deliveries one poll claims. A poll's cost is
	// mostly its statements, whatever its size: at 100 a dispatcher on
	// PostgreSQL made about 400 deliveries/s on the loaded 2 cores, short
	// of a sustained 1,000 (BenchmarkDeliveryLatency).
	Batch int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.RetryFor <= 0 {
		c.RetryFor = DefaultRetryFor
	}
	if c.FirstRetry <= 0 {
		c.FirstRetry = DefaultFirstRetry
	}
	if c.MaxRetry <= 0 {
		c.MaxRetry = DefaultMaxRetry
	}
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Dispatcher fans events out and delivers them.
type Dispatcher struct {
	store  Store
	client *safehttp.Client
	log    *slog.Logger
	cfg    Config
}

// New returns a Dispatcher sending through client, the registry's guarded
// outbound client: a receiver on a private address is refused unless
// --allow-networks opens it, and the registry itself never.
func New(store Store, client *safehttp.Client, log *slog.Logger, cfg Config) *Dispatcher {
	return &Dispatcher{store: store, client: client, log: log, cfg: cfg.withDefaults()}
}

// Run polls until ctx ends, then returns once the attempts in flight are
// recorded or abandoned (their leases expire and they are sent again).
func (d *Dispatcher) Run(ctx context.Context) {
	t := time.NewTicker(d.cfg.Interval)
	defer t.Stop()
	for {
		n, err := d.step(ctx)
		if err != nil && ctx.Err() == nil {
			d.log.Error("webhook dispatch", "err", err)
		}
		if n == d.cfg.Batch && err == nil && ctx.Err() == nil {
			continue // a full batch: more are likely due now
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Step fans out the new feed entries and sends the due deliveries once.
// Until the search index is built, filters cannot be matched: the fan-out
// waits (the cursor stays) and deliveries already fanned out still go.
func (d *Dispatcher) Step(ctx context.Context) error {
	_, err := d.step(ctx)
	return err
}

// step is Step, also telling how many deliveries it claimed.
func (d *Dispatcher) step(ctx context.Context) (int, error) {
	if err := d.FanOut(ctx); err != nil && !errors.Is(err, catalog.ErrIndexNotReady) {
		return 0, err
	}
	return d.deliver(ctx)
}

// FanOut turns the feed entries after the cursor into deliveries, one per
// entry and subscription whose event types and filter it matches.
func (d *Dispatcher) FanOut(ctx context.Context) error {
	for {
		from, err := d.store.WebhookCursor(ctx)
		if err != nil {
			return err
		}
		changes, err := d.store.Events(ctx, from, defaultFanOut)
		if err != nil || len(changes) == 0 {
			return err
		}
		hooks, err := d.store.Webhooks(ctx)
		if err != nil {
			return err
		}
		var ds []catalog.NewWebhookDelivery
		for _, c := range changes {
			typ, ok := eventTypes[c.Kind]
			if !ok {
				continue
			}
			for _, h := range hooks {
				if h.DisabledAt != nil || !wants(h, typ) {
					continue
				}
				if !agentless(typ) {
					if ok, err := d.matches(ctx, h.Filter, c.CardURL); err != nil {
						return err
					} else if !ok {
						continue
					}
				}
				body, err := json.Marshal(payload{Type: typ, Timestamp: c.At, Data: eventData{
					AgentID: c.AgentID, CardURL: c.CardURL, Version: c.Version, Seq: c.Seq, Detail: c.Detail}})
				if err != nil {
					return fmt.Errorf("encoding webhook payload: %w", err)
				}
				ds = append(ds, catalog.NewWebhookDelivery{WebhookID: h.ID, Seq: c.Seq, AgentID: c.AgentID,
					EventType: typ, Payload: string(body)})
			}
		}
		err = d.store.EnqueueWebhookDeliveries(ctx, from, changes[len(changes)-1].Seq, ds, d.cfg.Now())
		if err != nil && !errors.Is(err, catalog.ErrCursorMoved) {
			return err
		}
		if len(changes) < defaultFanOut {
			return nil
		}
	}
}

// payload is the Standard Webhooks body: type, timestamp, data.
type payload struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      eventData `json:"data"`
}

type eventData struct {
	AgentID string `json:"agent_id"`
	CardURL string `json:"card_url"`
	Version int    `json:"version"`
	Seq     int64  `json:"seq"`
	// Detail is what the event says beyond its agent (health from/to, …);
	// absent for agent.registered, agent.updated, agent.removed and
	// agent.restored.
	Detail json.RawMessage `json:"detail,omitempty"`
}

func wants(h catalog.Webhook, typ string) bool {
	for _, t := range h.EventTypes {
		if t == typ {
			return true
		}
	}
	return false
}

// matches tells whether the agent at cardURL matches the subscription's
// filter, a search query string (internal/query), as it is now: a search
// narrowed to that one agent. An agent out of search (removed) matches
// only a subscription without a filter.
func (d *Dispatcher) matches(ctx context.Context, filter, cardURL string) (bool, error) {
	if filter == "" {
		return true, nil
	}
	req, err := query.ParseString(filter)
	if err != nil {
		return false, nil // validated at creation; a rule changed since matches nothing
	}
	q := req.Query(catalog.ScopeAll)
	q.Limit = 1
	q.AnyOf = append(q.AnyOf, catalog.FilterGroup{Field: catalog.FilterCardURL, Values: []string{cardURL}})
	page, err := d.store.Search(ctx, q)
	if err != nil {
		return false, fmt.Errorf("matching webhook filter: %w", err)
	}
	return len(page.Items) > 0, nil
}

// Deliver sends the due deliveries, concurrently across agents (each
// claimed one is its agent's first pending), and records each attempt.
func (d *Dispatcher) Deliver(ctx context.Context) error {
	_, err := d.deliver(ctx)
	return err
}

func (d *Dispatcher) deliver(ctx context.Context) (int, error) {
	due, err := d.store.ClaimWebhookDeliveries(ctx, d.cfg.Now(), d.cfg.Batch, d.cfg.Lease)
	if err != nil {
		return 0, err
	}
	// Every attempt of the batch is recorded in one transaction once all
	// are made: a crash before it only sends them again (at least once).
	done := make([]catalog.FinishedDelivery, len(due))
	var wg sync.WaitGroup
	sem := make(chan struct{}, sendConcurrency)
	for i, dd := range due {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			done[i] = catalog.FinishedDelivery{WebhookID: dd.WebhookID, PK: dd.PK, Attempt: d.attempt(ctx, dd)}
		})
	}
	wg.Wait()
	return len(due), d.store.FinishWebhookDeliveries(context.WithoutCancel(ctx), done)
}

// attempt sends one delivery and decides what follows.
func (d *Dispatcher) attempt(ctx context.Context, dd catalog.DueDelivery) catalog.WebhookAttempt {
	now := d.cfg.Now()
	status, err := d.send(ctx, dd, now)
	a := catalog.WebhookAttempt{At: now, Status: status}
	if err == nil {
		a.OK = true
		return a
	}
	a.Err = err.Error()
	firstFailure := now
	if dd.FirstFailureAt != nil {
		firstFailure = *dd.FirstFailureAt
	}
	if now.Sub(firstFailure) >= d.cfg.RetryFor {
		a.Disable = fmt.Sprintf("deliveries failing since %s: %s", firstFailure.UTC().Format(time.RFC3339), a.Err)
		d.log.Warn("webhook disabled", "webhook_id", dd.WebhookID, "err", a.Err)
		return a
	}
	a.Next = now.Add(d.backoff(dd.Attempts))
	return a
}

// backoff is FirstRetry doubled per attempt made, capped at MaxRetry,
// less up to a fifth of jitter so receivers coming back are not hit by
// every subscription at once.
func (d *Dispatcher) backoff(attempts int) time.Duration {
	b := d.cfg.FirstRetry
	for i := 0; i < attempts && b < d.cfg.MaxRetry; i++ {
		b *= 2
	}
	b = min(b, d.cfg.MaxRetry)
	return b - time.Duration(rand.Int64N(int64(b)/5+1))
}

// ErrStatus is wrapped by a failure the receiver answered.
var ErrStatus = errors.New("webhook: receiver answered an error")

// send posts the delivery. Any 2xx is success (Standard Webhooks); every
// other status, a timeout or a refused address is a failure to retry.
func (d *Dispatcher) send(ctx context.Context, dd catalog.DueDelivery, now time.Time) (int, error) {
	id := MessageID(dd.PK)
	body := []byte(dd.Payload)
	sig, err := Sign(dd.Secret, id, now, body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, dd.URL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("posting webhook: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("%w: status %d", ErrStatus, resp.StatusCode)
	}
	return resp.StatusCode, nil
}
