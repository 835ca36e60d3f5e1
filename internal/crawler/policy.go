package crawler

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
)

// Policy defaults. DefaultInterval applies when a card response carries no
// freshness information at all: an hour keeps a directory of thousands of
// agents current within the hour at a request per agent per hour, twice as
// polite as the blind 30-minute re-fetch registries in the field do.
const (
	DefaultMinInterval = 5 * time.Minute
	DefaultMaxInterval = 24 * time.Hour
	DefaultInterval    = time.Hour
	DefaultBackoffBase = 5 * time.Minute
	// DefaultBackoffMax is below DefaultMaxInterval so that an agent that
	// comes back is noticed within hours, not a day later.
	DefaultBackoffMax = 6 * time.Hour
	DefaultDownAfter  = 3
)

// Policy decides health and the next check of an agent from the outcome of
// a check. It is pure: the clock comes in as an argument and the jitter
// from Rand, so tests are deterministic.
type Policy struct {
	// MinInterval and MaxInterval clamp every scheduled check.
	MinInterval time.Duration
	MaxInterval time.Duration
	// DefaultInterval is the interval after a success whose response
	// carries no Cache-Control max-age, Expires or Retry-After.
	DefaultInterval time.Duration
	// BackoffBase is the delay after the first failure; it doubles with
	// each further consecutive failure up to BackoffMax.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// DownAfter is how many consecutive failures make an agent down;
	// fewer make it stale.
	DownAfter int
	// Rand returns a number in [0, 1) for jitter; nil means math/rand/v2.
	Rand func() float64
}

// withDefaults fills zero fields.
func (p Policy) withDefaults() Policy {
	if p.MinInterval <= 0 {
		p.MinInterval = DefaultMinInterval
	}
	if p.MaxInterval <= 0 {
		p.MaxInterval = DefaultMaxInterval
	}
	if p.MaxInterval < p.MinInterval {
		p.MaxInterval = p.MinInterval
	}
	if p.DefaultInterval <= 0 {
		p.DefaultInterval = DefaultInterval
	}
	if p.BackoffBase <= 0 {
		p.BackoffBase = DefaultBackoffBase
	}
	if p.BackoffMax <= 0 {
		p.BackoffMax = DefaultBackoffMax
	}
	if p.DownAfter <= 0 {
		p.DownAfter = DefaultDownAfter
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	return p
}

// CacheHeaders are the response headers that schedule the next check.
type CacheHeaders struct {
	CacheControl string
	Expires      string
	RetryAfter   string
}

func cacheHeadersOf(r *Result) CacheHeaders {
	if r == nil {
		return CacheHeaders{}
	}
	return CacheHeaders{CacheControl: r.CacheControl, Expires: r.Expires, RetryAfter: r.RetryAfter}
}

// NextCheck schedules the check after a success: the largest of the
// freshness lifetimes the response states (Cache-Control max-age or
// s-maxage, Expires, Retry-After), or DefaultInterval when it states none,
// clamped to [MinInterval, MaxInterval]. no-cache, no-store, max-age=0 and
// an Expires in the past all mean "check again soon", i.e. MinInterval: the
// clamp keeps an agent that forbids caching from being polled in a loop.
func (p Policy) NextCheck(now time.Time, h CacheHeaders) time.Time {
	p = p.withDefaults()
	d, ok := freshness(now, h)
	if !ok {
		d = p.DefaultInterval
	}
	return now.Add(p.clamp(d))
}

func (p Policy) clamp(d time.Duration) time.Duration {
	return min(max(d, p.MinInterval), p.MaxInterval)
}

// freshness returns the largest lifetime stated by h, and false when h
// states none.
func freshness(now time.Time, h CacheHeaders) (time.Duration, bool) {
	var best time.Duration
	found := false
	take := func(d time.Duration) {
		if !found || d > best {
			best = d
		}
		found = true
	}
	if d, ok := cacheControlLifetime(h.CacheControl); ok {
		take(d)
	}
	if h.Expires != "" {
		// RFC 9111 §5.3: an invalid date, notably "0", means already
		// expired. Our clock stands in for the Date header, which the
		// difference is meant to be taken against (§4.2.1); card servers
		// with a skewed clock only move the check within the clamp.
		if t, err := http.ParseTime(h.Expires); err == nil {
			take(max(t.Sub(now), 0))
		} else {
			take(0)
		}
	}
	if d, ok := retryAfter(now, h.RetryAfter); ok {
		take(d)
	}
	return best, found
}

// cacheControlLifetime reads the freshness lifetime of a Cache-Control
// value (RFC 9111 §5.2.2). The registry is a shared cache of sorts (many
// users read what it fetched), so s-maxage wins over max-age (§5.2.2.10).
// no-store and no-cache mean a lifetime of zero.
func cacheControlLifetime(v string) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	var maxAge, sMaxAge time.Duration
	var hasMaxAge, hasSMaxAge, noCache bool
	for part := range strings.SplitSeq(v, ",") {
		name, arg, _ := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.ToLower(strings.TrimSpace(name))
		arg = strings.Trim(strings.TrimSpace(arg), `"`)
		switch name {
		case "no-store", "no-cache":
			noCache = true
		case "max-age":
			if d, ok := deltaSeconds(arg); ok {
				maxAge, hasMaxAge = d, true
			}
		case "s-maxage":
			if d, ok := deltaSeconds(arg); ok {
				sMaxAge, hasSMaxAge = d, true
			}
		}
	}
	switch {
	case noCache:
		return 0, true
	case hasSMaxAge:
		return sMaxAge, true
	case hasMaxAge:
		return maxAge, true
	}
	return 0, false
}

// deltaSeconds parses a non-negative integer number of seconds (RFC 9111
// §1.2.2); values too large for a Duration saturate.
func deltaSeconds(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > int64(math.MaxInt64/time.Second) {
		// All digits, so the only failure is overflow.
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(n) * time.Second, true
}

// retryAfter reads Retry-After: delay-seconds or an HTTP-date (RFC 9110
// §10.2.3).
func retryAfter(now time.Time, v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, ok := deltaSeconds(v); ok {
		return d, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// Backoff is the delay after the n-th consecutive failure (n >= 1):
// BackoffBase·2^(n-1) capped at BackoffMax, with "equal jitter" — a
// uniformly random point in the upper half — so that agents that failed
// together (one host outage) do not come back in lockstep, while the delay
// never drops below half the exponential step.
func (p Policy) Backoff(n int) time.Duration {
	p = p.withDefaults()
	d := p.BackoffMax
	if n < 1 {
		n = 1
	}
	if n-1 < 62 {
		if step := p.BackoffBase << (n - 1); step > 0 && step>>(n-1) == p.BackoffBase && step < d {
			d = step
		}
	}
	half := d / 2
	return half + time.Duration(p.Rand()*float64(d-half))
}

// Apply fills the verdict fields of o (Health, ConsecutiveFailures,
// NextCheckAt, Removed) from its Class and Status, given the agent's state
// before the check and the response's cache headers.
//
//   - Success (200 or 304): up, failures reset, next check by NextCheck.
//   - 410 Gone: removed for good (RFC 9110 §15.5.11: "likely to be
//     permanent"); no further check is scheduled beyond MaxInterval.
//   - Any other failure: one more consecutive failure; down from DownAfter
//     on, stale before that (the stored card may be out of date). The next
//     check is the larger of Backoff and Retry-After (which 429 and 503
//     carry, RFC 6585 §4, RFC 9110 §15.6.4), clamped to [MinInterval,
//     MaxInterval].
func (p Policy) Apply(now time.Time, prev catalog.CrawlTarget, h CacheHeaders, o *catalog.FetchOutcome) {
	p = p.withDefaults()
	switch {
	case o.Class == "":
		o.Health = catalog.HealthUp
		o.ConsecutiveFailures = 0
		o.Removed = false
		o.NextCheckAt = p.NextCheck(now, h)
	case o.Status == http.StatusGone:
		o.Health = catalog.HealthRemoved
		o.ConsecutiveFailures = prev.ConsecutiveFailures + 1
		o.Removed = true
		o.NextCheckAt = now.Add(p.MaxInterval)
	default:
		n := prev.ConsecutiveFailures + 1
		o.ConsecutiveFailures = n
		o.Removed = false
		if n >= p.DownAfter {
			o.Health = catalog.HealthDown
		} else {
			o.Health = catalog.HealthStale
		}
		d := p.Backoff(n)
		if ra, ok := retryAfter(now, h.RetryAfter); ok && ra > d {
			d = ra
		}
		o.NextCheckAt = now.Add(p.clamp(d))
	}
}
