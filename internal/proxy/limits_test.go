package proxy

import (
	"errors"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := NewLimiter(Limits{MaxConcurrentPerUser: 2, MaxConcurrent: 3, PerUserPerMinute: 3})
	l.now = func() time.Time { return now }
	acquire := func(user string, want error) func() {
		t.Helper()
		release, err := l.Acquire(user)
		if !errors.Is(err, want) {
			t.Fatalf("Acquire(%s) = %v, want %v", user, err, want)
		}
		if err != nil {
			var le *LimitError
			if !errors.As(err, &le) || le.RetryAfter < time.Second {
				t.Fatalf("refusal %v carries no Retry-After", err)
			}
		}
		return release
	}
	a1 := acquire("ann", nil)
	a2 := acquire("ann", nil)
	acquire("ann", ErrTooManyRuns) // per user
	b1 := acquire("bob", nil)
	acquire("cy", ErrTooManyRuns) // in total
	a1()
	a1() // a second release is harmless
	b1()
	a3 := acquire("ann", nil) // third start within the minute
	a2()
	a3()
	acquire("ann", ErrRateLimited)
	now = now.Add(20 * time.Second) // one token back at 3/min
	acquire("ann", nil)()
	acquire("ann", ErrRateLimited)
	acquire("bob", nil)()
}
