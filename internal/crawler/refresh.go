package crawler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// ClassNotACard is a response that is JSON but not a card we can read
// (card.Parse refused it); the message is the *card.ParseError's.
const ClassNotACard = "not_a_card"

// Refresh checks one agent: a conditional GET of its stored card URL with
// the stored validators, then card.Parse of a changed body. It never
// fails; every problem is a failure class in the outcome, whose Health,
// ConsecutiveFailures and NextCheckAt the policy has filled.
//
// When the stored URL is one of the two well-known paths of an origin and
// answers 404, the other well-known path of the same origin is tried once
// (without validators: it is another resource). This follows an agent
// upgrading from v0.2's agent.json to agent-card.json, or going back, without
// a re-registration; the agent keeps its identity (its stored card URL) and
// the outcome's URL and LegacyPath tell which file answered. Any other
// stored URL is fetched as is: its owner chose it.
//
// A check cut short by ctx is reported with class ClassCanceled; callers
// shutting down drop such outcomes rather than store them as failures.
func (c *Crawler) Refresh(ctx context.Context, t catalog.CrawlTarget) catalog.FetchOutcome {
	o := catalog.FetchOutcome{AgentID: t.AgentID, URL: t.CardURL}
	cond := Conditional{ETag: t.ETag, LastModified: t.LastModified}
	res, err := c.fetcher.Fetch(ctx, t.CardURL, cond)
	if sibling := wellKnownSibling(t.CardURL); sibling != "" && is404(err) {
		if r2, err2 := c.fetcher.Fetch(ctx, sibling, Conditional{}); !is404(err2) {
			res, err = r2, err2
		}
	}
	if res != nil {
		res.LegacyPath = strings.HasSuffix(res.URL, LegacyCardPath)
	}
	c.fillOutcome(ctx, &o, res, err)
	if o.Card != nil && c.prechecker != nil && rawDigest(o.Card.Raw) != t.RawSHA256 {
		// New bytes are checked before the write that judges them; the
		// same bytes again store nothing new, so need no check.
		o.Precheck = c.prechecker.Precheck(ctx, o.Card, t.CardURL)
	}
	c.policy.Apply(o.At, t, cacheHeadersOf(res), &o)
	return o
}

// rawDigest is the hex SHA-256 of a card's bytes, as the catalog stores
// it (CrawlTarget.RawSHA256).
func rawDigest(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// fillOutcome copies a fetch into o and parses a changed body.
func (c *Crawler) fillOutcome(ctx context.Context, o *catalog.FetchOutcome, res *Result, err error) {
	o.At = c.now()
	if res != nil {
		o.URL = res.URL
		o.LegacyPath = res.LegacyPath
		o.Status = res.Status
		o.Latency = res.Latency
	}
	if err != nil {
		// The message is stored and shown to anyone reading the agent:
		// the Problem's, never err.Error() (see Problem).
		if p, ok := ProblemOf(err); ok {
			o.Class, o.Message = p.Class, p.Message
			if p.URL != "" {
				o.URL = p.URL
			}
		} else {
			o.Class, o.Message = ClassConnect, "the check failed"
		}
		return
	}
	o.ETag, o.LastModified = res.ETag, res.LastModified
	if res.NotModified {
		o.NotModified = true
		return
	}
	var (
		parsed *card.Card
		perr   error
	)
	if err := c.cfg.Priority.Do(ctx, func(context.Context) { parsed, perr = card.Parse(res.Body, c.limits) }); err != nil {
		// Cancelled waiting for a turn: callers drop such an outcome, and
		// it names no bytes we stored.
		o.Class, o.Message = ClassCanceled, "the check was cancelled"
		o.ETag, o.LastModified = "", ""
		return
	}
	if perr != nil {
		p, _ := ProblemOf(perr)
		o.Class, o.Message = p.Class, p.Message
		// Validators name bytes we did not accept; keeping them would
		// turn the next check into a 304 of a card we never stored.
		o.ETag, o.LastModified = "", ""
		return
	}
	o.Card = parsed
}

func is404(err error) bool {
	var fe *FetchError
	return errors.As(err, &fe) && fe.Status == http.StatusNotFound
}

// wellKnownSibling returns the other well-known card URL of the same origin
// when u is exactly origin + one of the two paths, else "".
func wellKnownSibling(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.RawQuery != "" || p.ForceQuery {
		return ""
	}
	switch p.Path {
	case WellKnownCardPath:
		p.Path = LegacyCardPath
	case LegacyCardPath:
		p.Path = WellKnownCardPath
	default:
		return ""
	}
	p.RawPath = ""
	return p.String()
}

// RefreshResult is what RefreshNow did.
type RefreshResult struct {
	Outcome catalog.FetchOutcome
	// Stored is the catalog's answer for the outcome: the agent as it now
	// is, and whether a new version was stored.
	Stored catalog.UpsertResult
}

// ErrRefreshCanceled is returned by RefreshNow when ctx ended before the
// check completed; nothing was recorded.
var ErrRefreshCanceled = errors.New("crawler: refresh canceled")

// ErrRefreshThrottled is wrapped by *ThrottledError.
var ErrRefreshThrottled = errors.New("crawler: refresh throttled")

// ThrottledError is RefreshNow refusing a check: the agent was checked
// less than MinInterval ago, or its host already has PerHost checks in
// flight. Nothing was fetched or recorded.
type ThrottledError struct {
	// RetryAfter is how long until a check would be accepted.
	RetryAfter time.Duration
	// HostBusy tells the per-host cap apart from the minimum interval.
	HostBusy bool
}

func (e *ThrottledError) Error() string {
	if e.HostBusy {
		return fmt.Sprintf("%v: the agent's host has the most checks in flight it may have", ErrRefreshThrottled)
	}
	return fmt.Sprintf("%v: checked less than the minimum interval ago; retry in %v", ErrRefreshThrottled, e.RetryAfter)
}

func (e *ThrottledError) Unwrap() error { return ErrRefreshThrottled }

// hostBusyRetry is the Retry-After of a refusal for a busy host: a fetch
// rarely takes longer.
const hostBusyRetry = 5 * time.Second

// RefreshNow checks one agent at once, outside the schedule, and records
// the outcome (POST /api/v1/agents/{id}/refresh). Errors: the store's
// (catalog.ErrNotFound for an unknown id), ErrRefreshCanceled, and
// *ThrottledError when the agent was checked less than MinInterval ago or
// its host is at the PerHost cap; on-demand checks obey the same limits as
// scheduled ones, so callers cannot make the registry hammer an agent. A
// failed fetch is not an error: it is recorded and reported in the outcome.
//
// It does not take the agent's lease: a scheduled check running at the
// same moment records its own outcome too, which is harmless (two checks,
// two history rows). The outcome is recorded as actor's (the user who
// asked, for the audit log).
func (c *Crawler) RefreshNow(ctx context.Context, actor catalog.Actor, agentID string) (RefreshResult, error) {
	t, err := c.store.CrawlTarget(ctx, agentID)
	if err != nil {
		return RefreshResult{}, fmt.Errorf("refreshing agent %s: %w", agentID, err)
	}
	if !t.LastCheckAt.IsZero() {
		if wait := t.LastCheckAt.Add(c.policy.MinInterval).Sub(c.now()); wait > 0 {
			return RefreshResult{}, fmt.Errorf("refreshing agent %s: %w", agentID, &ThrottledError{RetryAfter: wait})
		}
	}
	host := hostKey(t.CardURL)
	if !c.tryReserve(host) {
		return RefreshResult{}, fmt.Errorf("refreshing agent %s: %w", agentID, &ThrottledError{RetryAfter: hostBusyRetry, HostBusy: true})
	}
	o := c.Refresh(ctx, t)
	c.release(host)
	if o.Class == ClassCanceled || ctx.Err() != nil {
		return RefreshResult{Outcome: o}, fmt.Errorf("refreshing agent %s: %w: %w", agentID, ErrRefreshCanceled, context.Cause(ctx))
	}
	stored, err := c.store.RecordFetches(ctx, actor, []catalog.FetchOutcome{o})
	if err != nil {
		return RefreshResult{Outcome: o}, fmt.Errorf("refreshing agent %s: recording outcome: %w", agentID, err)
	}
	r := RefreshResult{Outcome: o}
	if len(stored) > 0 {
		r.Stored = stored[0]
	}
	if c.verifier != nil && r.Stored.NewVersion && o.Card != nil {
		// The caller reads the agent back: it should see the new
		// version's verdict, not "unchecked" until the background pass.
		t := catalog.VerifyTarget{AgentID: agentID, CardURL: r.Stored.Agent.CardURL,
			Version: r.Stored.Agent.CurrentVersion, Raw: o.Card.Raw}
		if err := c.verifier.VerifyStored(ctx, t); err != nil {
			c.log.WarnContext(ctx, "refresh: verifying the new version failed", "agent_id", agentID, "error", err)
		}
	}
	c.logOutcome(ctx, o, "refresh")
	return r, nil
}

func (c *Crawler) logOutcome(ctx context.Context, o catalog.FetchOutcome, trigger string) {
	if o.Class == "" {
		c.log.DebugContext(ctx, "agent checked", "trigger", trigger, "agent_id", o.AgentID, "card_url", o.URL,
			"status", o.Status, "not_modified", o.NotModified, "latency_ms", o.Latency.Milliseconds(),
			"next_check_in", o.NextCheckAt.Sub(o.At).Round(time.Second))
		return
	}
	c.log.WarnContext(ctx, "agent check failed", "trigger", trigger, "agent_id", o.AgentID, "card_url", o.URL,
		"status", o.Status, "class", o.Class, "error", o.Message, "health", o.Health,
		"consecutive_failures", o.ConsecutiveFailures, "next_check_in", o.NextCheckAt.Sub(o.At).Round(time.Second))
}
