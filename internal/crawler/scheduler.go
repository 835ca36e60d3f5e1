package crawler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aregistry/registry/internal/background"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// CrawlStore is what the crawler needs from the catalog. *catalog.Store
// implements it.
type CrawlStore interface {
	// ClaimDue leases up to limit agents whose next check is due at now
	// (not paused, not removed, lease free or expired) to owner.
	ClaimDue(ctx context.Context, now time.Time, limit int, owner string, lease time.Duration) ([]catalog.CrawlTarget, error)
	// RecordFetches stores outcomes in one transaction and releases their
	// leases.
	RecordFetches(ctx context.Context, actor catalog.Actor, outs []catalog.FetchOutcome) ([]catalog.UpsertResult, error)
	// CrawlTarget loads one agent's crawl state, for a check on demand.
	CrawlTarget(ctx context.Context, agentID string) (catalog.CrawlTarget, error)
}

// crawlerActor is who the catalog records as making the crawler's writes.
var crawlerActor = catalog.System("crawler")

// Scheduler defaults.
const (
	DefaultConcurrency   = 16
	DefaultPerHost       = 2
	DefaultBatchSize     = 200
	DefaultPollInterval  = 5 * time.Second
	DefaultLease         = 5 * time.Minute
	DefaultFlushSize     = 50
	DefaultFlushInterval = 200 * time.Millisecond
	DefaultFlushTimeout  = 10 * time.Second
)

// ErrRunning is returned by Run while another Run of the same Crawler is
// active.
var ErrRunning = errors.New("crawler: already running")

// Config tunes a Crawler. Zero fields take the Default* values.
type Config struct {
	// Concurrency is how many checks run at once, over all hosts.
	Concurrency int
	// PerHost caps the checks running at once against one host name
	// (ports aside: they are usually one machine), so a directory listing
	// hundreds of agents of one provider does not hammer it.
	PerHost int
	// BatchSize is how many due agents one claim leases. Claimed agents
	// wait in memory until a worker and their host are free.
	BatchSize int
	// PollInterval is how long to wait before asking again when the last
	// claim found fewer due agents than it asked for.
	PollInterval time.Duration
	// Lease is how long a claim keeps other replicas off an agent. It must
	// exceed the wait in memory plus the fetch timeout plus a flush; an
	// agent whose lease ran out before its check started is given up
	// (another replica may have it by then).
	Lease time.Duration
	// Owner names this replica in leases; default host name, pid and a
	// random suffix.
	Owner string
	// FlushSize and FlushInterval batch outcomes into one RecordFetches
	// transaction: every commit costs an fsync (PostgreSQL: 491 cards/s
	// one per transaction against 1,864 batched, BENCHMARKS.md).
	FlushSize     int
	FlushInterval time.Duration
	// FlushTimeout bounds one RecordFetches call, including the last one
	// at shutdown, which runs after ctx is cancelled.
	FlushTimeout time.Duration

	// Refresh policy; see Policy.
	MinInterval     time.Duration
	MaxInterval     time.Duration
	DefaultInterval time.Duration
	BackoffBase     time.Duration
	BackoffMax      time.Duration
	DownAfter       int

	// Limits bound card.Parse.
	Limits card.Limits
	// Priority, when set, gives searches and other requests people wait
	// for the CPU before the crawler's claims, parsing and writes.
	Priority *background.Priority
	// Now and Rand replace the clock and the jitter source in tests.
	Now  func() time.Time
	Rand func() float64
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Concurrency, DefaultConcurrency)
	def(&c.PerHost, DefaultPerHost)
	def(&c.BatchSize, DefaultBatchSize)
	def(&c.FlushSize, DefaultFlushSize)
	defDur(&c.PollInterval, DefaultPollInterval)
	defDur(&c.Lease, DefaultLease)
	defDur(&c.FlushInterval, DefaultFlushInterval)
	defDur(&c.FlushTimeout, DefaultFlushTimeout)
	if c.Owner == "" {
		c.Owner = defaultOwner()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

func defaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "crawler"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Crawler keeps the catalog's cards fresh: Run checks due agents on
// schedule, RefreshNow checks one on demand. It is safe for concurrent use.
type Crawler struct {
	cfg     Config
	policy  Policy
	limits  card.Limits
	store   CrawlStore
	fetcher *Fetcher
	log     *slog.Logger
	now     func() time.Time
	running atomic.Bool
	// check is one scheduled check: Refresh, replaced in tests of the
	// scheduling alone.
	check func(context.Context, catalog.CrawlTarget) catalog.FetchOutcome

	// verifier, when set, verifies versions RefreshNow stores.
	verifier CardVerifier
	// prechecker, when set, checks a check's new card before it is
	// stored (UsePrechecker).
	prechecker Prechecker

	mu   sync.Mutex
	busy map[string]int // running checks per host
	// wake tells the dispatcher a host slot was freed.
	wake chan struct{}
}

// New wires a Crawler. A nil log discards.
func New(cfg Config, store CrawlStore, f *Fetcher, log *slog.Logger) *Crawler {
	cfg = cfg.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Crawler{
		cfg: cfg,
		policy: Policy{
			MinInterval: cfg.MinInterval, MaxInterval: cfg.MaxInterval, DefaultInterval: cfg.DefaultInterval,
			BackoffBase: cfg.BackoffBase, BackoffMax: cfg.BackoffMax, DownAfter: cfg.DownAfter, Rand: cfg.Rand,
		}.withDefaults(),
		limits:  cfg.Limits,
		store:   store,
		fetcher: f,
		log:     log,
		now:     cfg.Now,
		busy:    make(map[string]int),
		wake:    make(chan struct{}, 1),
	}
	c.check = c.Refresh
	return c
}

// Config returns the effective configuration, defaults filled in.
func (c *Crawler) Config() Config { return c.cfg }

// UseVerifier makes RefreshNow verify the new card versions it stores
// before returning. Call it before Run.
func (c *Crawler) UseVerifier(v CardVerifier) { c.verifier = v }

// UsePrechecker makes every check precheck a card whose bytes differ
// from those stored before recording it, so the admission policy judges
// its signatures (a crawled card a reject rule refuses is not stored).
// Call it before Run.
func (c *Crawler) UsePrechecker(p Prechecker) { c.prechecker = p }

// Policy returns the refresh policy the crawler schedules checks with.
func (c *Crawler) Policy() Policy { return c.policy }

// Run checks due agents until ctx is cancelled, then shuts down cleanly
// and returns nil: it stops claiming, cancels the checks in flight (their
// agents keep their lease and are checked again when it expires), and
// records every completed outcome with a fresh context bounded by
// FlushTimeout. Each RecordFetches call is one transaction, so an
// interruption at any point, kill -9 included, leaves each agent either
// fully recorded or still due.
//
// Errors from the store do not stop Run: claims are retried after
// PollInterval, and a batch of outcomes that cannot be recorded is logged
// and dropped (its agents become due again when their leases expire).
func (c *Crawler) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer c.running.Store(false)
	c.log.InfoContext(ctx, "crawler started", "owner", c.cfg.Owner, "concurrency", c.cfg.Concurrency,
		"per_host", c.cfg.PerHost, "batch_size", c.cfg.BatchSize)

	work := make(chan dispatched)
	outs := make(chan catalog.FetchOutcome, c.cfg.FlushSize)
	var workers sync.WaitGroup
	for range c.cfg.Concurrency {
		workers.Go(func() { c.worker(ctx, work, outs) })
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writer(ctx, outs)
	}()

	c.dispatch(ctx, work)
	close(work)
	workers.Wait()
	close(outs)
	<-writerDone
	c.log.InfoContext(context.WithoutCancel(ctx), "crawler stopped", "owner", c.cfg.Owner)
	return nil
}

type dispatched struct {
	t    catalog.CrawlTarget
	host string
}

type pendingTarget struct {
	dispatched
	leaseEnds time.Time
}

// dispatch claims due agents and hands them to the workers, never more
// than PerHost at once per host. A target whose host is saturated stays in
// pending while targets of other hosts go ahead.
func (c *Crawler) dispatch(ctx context.Context, work chan<- dispatched) {
	var pending []pendingTarget
	var nextClaim time.Time // zero: claim at once
	lowWater := c.cfg.BatchSize / 2
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	defer func() {
		if len(pending) > 0 {
			c.log.DebugContext(context.WithoutCancel(ctx), "crawler: leaving claimed agents to lease expiry", "count", len(pending))
		}
	}()
	for ctx.Err() == nil {
		now := c.now()
		if len(pending) <= lowWater && !now.Before(nextClaim) {
			limit := c.cfg.BatchSize - len(pending)
			var (
				ts  []catalog.CrawlTarget
				err error
			)
			// A claim is a write of hundreds of rows: background work
			// like the batch writes, it waits for a turn.
			if perr := c.cfg.Priority.Do(ctx, func(ctx context.Context) {
				ts, err = c.store.ClaimDue(ctx, now, limit, c.cfg.Owner, c.cfg.Lease)
			}); perr != nil {
				err = perr
			}
			switch {
			case err != nil:
				if ctx.Err() != nil {
					return
				}
				c.log.ErrorContext(ctx, "crawler: claiming due agents failed", "error", err)
				nextClaim = now.Add(c.cfg.PollInterval)
			case len(ts) < limit:
				nextClaim = now.Add(c.cfg.PollInterval)
			default:
				nextClaim = time.Time{}
			}
			for _, t := range ts {
				pending = append(pending, pendingTarget{
					dispatched: dispatched{t: t, host: hostKey(t.CardURL)},
					leaseEnds:  now.Add(c.cfg.Lease),
				})
			}
		}

		pending = c.dropExpired(ctx, now, pending)
		if i := c.reserve(pending); i >= 0 {
			d := pending[i].dispatched
			select {
			case work <- d:
				pending = append(pending[:i], pending[i+1:]...)
			case <-ctx.Done():
				c.release(d.host)
				return
			}
			continue
		}

		// Nothing can start: wait for a host slot, the next claim, or
		// shutdown.
		var claimC <-chan time.Time
		if len(pending) <= lowWater {
			timer.Reset(max(nextClaim.Sub(c.now()), 0))
			claimC = timer.C
		}
		select {
		case <-c.wake:
		case <-claimC:
		case <-ctx.Done():
			return
		}
	}
}

// dropExpired forgets targets whose lease ran out while they waited.
func (c *Crawler) dropExpired(ctx context.Context, now time.Time, pending []pendingTarget) []pendingTarget {
	kept := pending[:0]
	for _, p := range pending {
		if now.Before(p.leaseEnds) {
			kept = append(kept, p)
			continue
		}
		c.log.WarnContext(ctx, "crawler: lease expired before the check started; raise the lease or lower the batch size",
			"agent_id", p.t.AgentID, "card_url", p.t.CardURL)
	}
	clear(pending[len(kept):])
	return kept
}

// reserve returns the index of the first pending target whose host has a
// free slot, taking the slot, or -1.
func (c *Crawler) reserve(pending []pendingTarget) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range pending {
		if c.busy[p.host] < c.cfg.PerHost {
			c.busy[p.host]++
			return i
		}
	}
	return -1
}

// tryReserve takes a slot of host if it has one free.
func (c *Crawler) tryReserve(host string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy[host] >= c.cfg.PerHost {
		return false
	}
	c.busy[host]++
	return true
}

func (c *Crawler) release(host string) {
	c.mu.Lock()
	if c.busy[host] <= 1 {
		delete(c.busy, host)
	} else {
		c.busy[host]--
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Crawler) worker(ctx context.Context, work <-chan dispatched, outs chan<- catalog.FetchOutcome) {
	for d := range work {
		o := c.check(ctx, d.t)
		c.release(d.host)
		if o.Class != "" && ctx.Err() != nil {
			// Probably cut short by shutdown rather than the agent's
			// fault: leave the agent to its lease instead of recording a
			// failure.
			continue
		}
		c.logOutcome(ctx, o, "schedule")
		outs <- o
	}
}

// writer records outcomes in batches of FlushSize, or every FlushInterval.
func (c *Crawler) writer(ctx context.Context, outs <-chan catalog.FetchOutcome) {
	batch := make([]catalog.FetchOutcome, 0, c.cfg.FlushSize)
	ticker := time.NewTicker(c.cfg.FlushInterval)
	defer ticker.Stop()
	flush := func() {
		if len(batch) == 0 {
			return
		}
		// Writes get a context of their own: a transaction begun should
		// commit even when shutdown starts meanwhile.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.FlushTimeout)
		defer cancel()
		tctx, end, err := c.cfg.Priority.Turn(fctx)
		if err == nil {
			_, err = c.store.RecordFetches(tctx, crawlerActor, batch)
			end()
		}
		if err != nil {
			c.log.ErrorContext(fctx, "crawler: recording outcomes failed; their agents will be checked again after the lease",
				"count", len(batch), "error", err)
		}
		batch = make([]catalog.FetchOutcome, 0, c.cfg.FlushSize)
	}
	for {
		select {
		case o, ok := <-outs:
			if !ok {
				flush()
				return
			}
			batch = append(batch, o)
			if len(batch) >= c.cfg.FlushSize {
				flush()
			}
		case <-ticker.C:
			flush()
		}
	}
}

// hostKey is the per-host limit's key: the host name without port.
func hostKey(cardURL string) string {
	u, err := url.Parse(cardURL)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
