package proxy

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Errors of Limiter.Acquire.
var (
	// ErrTooManyRuns: the caller, or everyone together, has as many runs
	// in flight as allowed.
	ErrTooManyRuns = errors.New("proxy: too many runs in flight")
	// ErrRateLimited: the caller started runs faster than allowed.
	ErrRateLimited = errors.New("proxy: run rate limit reached")
)

// LimitError is a refusal with the time after which a retry may succeed
// (the Retry-After of a 429, RFC 9110 §10.2.3).
type LimitError struct {
	Cause      error
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v; retry after %s", e.Cause, e.RetryAfter.Round(time.Second))
}
func (e *LimitError) Unwrap() error { return e.Cause }

// Limits bound the work testers can put on the registry (and, through it,
// on agents). Zero fields take the defaults.
type Limits struct {
	MaxConcurrentPerUser int
	MaxConcurrent        int
	// PerUserPerMinute runs may start per user per minute, with bursts of
	// up to that many.
	PerUserPerMinute int
}

// Defaults of Limits.
const (
	DefaultMaxConcurrentPerUser = 4
	DefaultMaxConcurrent        = 64
	DefaultPerUserPerMinute     = 30
)

// Limiter counts runs in flight and paces their starts per user. It is
// safe for concurrent use.
type Limiter struct {
	lim Limits
	now func() time.Time

	mu      sync.Mutex
	total   int
	active  map[string]int
	buckets map[string]*bucket
}

// bucket is a token bucket: tokens refill at PerUserPerMinute per minute up
// to PerUserPerMinute.
type bucket struct {
	tokens float64
	at     time.Time
}

// NewLimiter returns a Limiter enforcing lim.
func NewLimiter(lim Limits) *Limiter {
	if lim.MaxConcurrentPerUser <= 0 {
		lim.MaxConcurrentPerUser = DefaultMaxConcurrentPerUser
	}
	if lim.MaxConcurrent <= 0 {
		lim.MaxConcurrent = DefaultMaxConcurrent
	}
	if lim.PerUserPerMinute <= 0 {
		lim.PerUserPerMinute = DefaultPerUserPerMinute
	}
	return &Limiter{lim: lim, now: time.Now, active: map[string]int{}, buckets: map[string]*bucket{}}
}

// Acquire admits one operation of user, or refuses it with a *LimitError.
// The caller calls release exactly once when the operation ends.
func (l *Limiter) Acquire(user string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if l.total >= l.lim.MaxConcurrent || l.active[user] >= l.lim.MaxConcurrentPerUser {
		// When a run ends is unknown; a second is a polite first retry.
		return nil, &LimitError{Cause: ErrTooManyRuns, RetryAfter: time.Second}
	}
	if err := l.take(user, now); err != nil {
		return nil, err
	}
	l.total++
	l.active[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.total--
			if l.active[user]--; l.active[user] <= 0 {
				delete(l.active, user)
			}
		})
	}, nil
}

// Charge takes one more run from user's rate without admitting another
// operation: what each further interface of a declared-vs-working check
// costs (Proxy.Check), so that a check of many interfaces is paced like as
// many runs. It refuses with a *LimitError wrapping ErrRateLimited.
func (l *Limiter) Charge(user string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.take(user, l.now())
}

// take takes one token from user's bucket. l.mu is held.
func (l *Limiter) take(user string, now time.Time) error {
	rate := float64(l.lim.PerUserPerMinute) / float64(time.Minute)
	b := l.buckets[user]
	if b == nil {
		if len(l.buckets) > 10000 {
			l.sweep(now, rate)
		}
		b = &bucket{tokens: float64(l.lim.PerUserPerMinute), at: now}
		l.buckets[user] = b
	}
	b.tokens = min(float64(l.lim.PerUserPerMinute), b.tokens+rate*float64(now.Sub(b.at)))
	b.at = now
	if b.tokens < 1 {
		wait := time.Duration((1 - b.tokens) / rate)
		return &LimitError{Cause: ErrRateLimited, RetryAfter: max(wait, time.Second)}
	}
	b.tokens--
	return nil
}

// sweep forgets full buckets (users who have been idle long enough to
// have refilled), so the map does not grow with every user ever seen.
func (l *Limiter) sweep(now time.Time, rate float64) {
	for u, b := range l.buckets {
		if b.tokens+rate*float64(now.Sub(b.at)) >= float64(l.lim.PerUserPerMinute) {
			delete(l.buckets, u)
		}
	}
}
