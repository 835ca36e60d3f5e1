package crawler

import (
	"net/http"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

func TestNextCheck(t *testing.T) {
	p := Policy{MinInterval: 5 * time.Minute, MaxInterval: 24 * time.Hour, DefaultInterval: time.Hour}
	tests := []struct {
		name string
		h    CacheHeaders
		want time.Duration
	}{
		{"nothing: default", CacheHeaders{}, time.Hour},
		{"max-age", CacheHeaders{CacheControl: "public, max-age=7200"}, 2 * time.Hour},
		{"max-age quoted, odd case", CacheHeaders{CacheControl: `Max-Age="7200"`}, 2 * time.Hour},
		{"s-maxage wins over max-age", CacheHeaders{CacheControl: "max-age=60000, s-maxage=3600"}, time.Hour},
		{"max-age below min clamps up", CacheHeaders{CacheControl: "max-age=10"}, 5 * time.Minute},
		{"max-age above max clamps down", CacheHeaders{CacheControl: "max-age=31536000"}, 24 * time.Hour},
		{"max-age overflowing int64 saturates", CacheHeaders{CacheControl: "max-age=99999999999999999999999"}, 24 * time.Hour},
		{"no-cache: min", CacheHeaders{CacheControl: "no-cache, max-age=7200"}, 5 * time.Minute},
		{"no-store: min", CacheHeaders{CacheControl: "no-store"}, 5 * time.Minute},
		{"max-age=0: min", CacheHeaders{CacheControl: "max-age=0"}, 5 * time.Minute},
		{"bad max-age ignored: default", CacheHeaders{CacheControl: "max-age=-5, private"}, time.Hour},
		{"Expires", CacheHeaders{Expires: httpDate(t0.Add(3 * time.Hour))}, 3 * time.Hour},
		{"Expires in the past: min", CacheHeaders{Expires: httpDate(t0.Add(-time.Hour))}, 5 * time.Minute},
		{"Expires 0 means expired: min", CacheHeaders{Expires: "0"}, 5 * time.Minute},
		{"Retry-After seconds", CacheHeaders{RetryAfter: "5400"}, 90 * time.Minute},
		{"Retry-After date", CacheHeaders{RetryAfter: httpDate(t0.Add(2 * time.Hour))}, 2 * time.Hour},
		{"Retry-After garbage: default", CacheHeaders{RetryAfter: "soon"}, time.Hour},
		{"largest of three: Expires", CacheHeaders{CacheControl: "max-age=600", Expires: httpDate(t0.Add(4 * time.Hour)), RetryAfter: "900"}, 4 * time.Hour},
		{"largest of three: max-age", CacheHeaders{CacheControl: "max-age=18000", Expires: httpDate(t0.Add(4 * time.Hour)), RetryAfter: "900"}, 5 * time.Hour},
		{"largest of three: Retry-After", CacheHeaders{CacheControl: "max-age=600", Expires: "0", RetryAfter: "7200"}, 2 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.NextCheck(t0, tt.h).Sub(t0); got != tt.want {
				t.Errorf("NextCheck = now+%v, want now+%v", got, tt.want)
			}
		})
	}
}

func TestPolicyDefaults(t *testing.T) {
	var p Policy
	if got := p.NextCheck(t0, CacheHeaders{}).Sub(t0); got != DefaultInterval {
		t.Errorf("default interval %v", got)
	}
	if got := p.NextCheck(t0, CacheHeaders{CacheControl: "max-age=1"}).Sub(t0); got != DefaultMinInterval {
		t.Errorf("default min %v", got)
	}
	if got := p.NextCheck(t0, CacheHeaders{CacheControl: "max-age=1000000"}).Sub(t0); got != DefaultMaxInterval {
		t.Errorf("default max %v", got)
	}
}

func TestBackoff(t *testing.T) {
	base, ceiling := time.Minute, time.Hour
	tests := []struct {
		n    int
		rand float64
		want time.Duration
	}{
		{n: 1, rand: 0, want: 30 * time.Second},
		{n: 1, rand: 0.999999, want: time.Minute},
		{n: 2, rand: 0, want: time.Minute},
		{n: 3, rand: 0.5, want: 3 * time.Minute},
		{n: 7, rand: 0, want: 30 * time.Minute}, // 64 min step capped at 60
		{n: 7, rand: 0.5, want: 45 * time.Minute},
		{n: 200, rand: 0, want: 30 * time.Minute}, // shift overflow stays capped
		{n: 0, rand: 0, want: 30 * time.Second},
	}
	for _, tt := range tests {
		p := Policy{BackoffBase: base, BackoffMax: ceiling, Rand: func() float64 { return tt.rand }}
		got := p.Backoff(tt.n)
		if d := got - tt.want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("Backoff(%d) with rand %v = %v, want %v", tt.n, tt.rand, got, tt.want)
		}
	}
}

func TestApply(t *testing.T) {
	p := Policy{
		MinInterval: 5 * time.Minute, MaxInterval: 24 * time.Hour, DefaultInterval: time.Hour,
		BackoffBase: 10 * time.Minute, BackoffMax: 6 * time.Hour, DownAfter: 3,
		Rand: func() float64 { return 0 },
	}
	tests := []struct {
		name         string
		prevFailures int
		out          catalog.FetchOutcome
		h            CacheHeaders
		wantHealth   string
		wantFailures int
		wantNext     time.Duration
		wantRemoved  bool
	}{
		{name: "success resets", prevFailures: 5, out: catalog.FetchOutcome{Status: 200},
			h: CacheHeaders{CacheControl: "max-age=7200"}, wantHealth: catalog.HealthUp, wantNext: 2 * time.Hour},
		{name: "304 is success", prevFailures: 2, out: catalog.FetchOutcome{Status: 304, NotModified: true},
			wantHealth: catalog.HealthUp, wantNext: time.Hour},
		{name: "first failure: stale, backoff", out: catalog.FetchOutcome{Status: 500, Class: ClassHTTP5xx},
			wantHealth: catalog.HealthStale, wantFailures: 1, wantNext: 5 * time.Minute},
		{name: "second failure: stale, doubled", prevFailures: 1, out: catalog.FetchOutcome{Class: ClassTimeout},
			wantHealth: catalog.HealthStale, wantFailures: 2, wantNext: 10 * time.Minute},
		{name: "third failure: down", prevFailures: 2, out: catalog.FetchOutcome{Class: ClassConnect},
			wantHealth: catalog.HealthDown, wantFailures: 3, wantNext: 20 * time.Minute},
		{name: "failure ignores max-age", out: catalog.FetchOutcome{Status: 404, Class: ClassHTTP404},
			h: CacheHeaders{CacheControl: "max-age=86400"}, wantHealth: catalog.HealthStale, wantFailures: 1, wantNext: 5 * time.Minute},
		{name: "429 honours Retry-After", out: catalog.FetchOutcome{Status: 429, Class: ClassHTTP429},
			h: CacheHeaders{RetryAfter: "7200"}, wantHealth: catalog.HealthStale, wantFailures: 1, wantNext: 2 * time.Hour},
		{name: "503 Retry-After clamped to max", out: catalog.FetchOutcome{Status: 503, Class: ClassHTTP5xx},
			h: CacheHeaders{RetryAfter: "999999"}, wantHealth: catalog.HealthStale, wantFailures: 1, wantNext: 24 * time.Hour},
		{name: "short Retry-After does not undercut backoff", prevFailures: 3, out: catalog.FetchOutcome{Status: 503, Class: ClassHTTP5xx},
			h: CacheHeaders{RetryAfter: "1"}, wantHealth: catalog.HealthDown, wantFailures: 4, wantNext: 40 * time.Minute},
		{name: "410 removes", out: catalog.FetchOutcome{Status: 410, Class: ClassHTTP410},
			wantHealth: catalog.HealthRemoved, wantFailures: 1, wantNext: 24 * time.Hour, wantRemoved: true},
		{name: "not a card is a failure", out: catalog.FetchOutcome{Status: 200, Class: ClassNotACard},
			wantHealth: catalog.HealthStale, wantFailures: 1, wantNext: 5 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.out
			p.Apply(t0, catalog.CrawlTarget{ConsecutiveFailures: tt.prevFailures}, tt.h, &o)
			if o.Health != tt.wantHealth || o.ConsecutiveFailures != tt.wantFailures ||
				o.NextCheckAt.Sub(t0) != tt.wantNext || o.Removed != tt.wantRemoved {
				t.Errorf("got health %s failures %d next +%v removed %v; want %s %d +%v %v",
					o.Health, o.ConsecutiveFailures, o.NextCheckAt.Sub(t0), o.Removed,
					tt.wantHealth, tt.wantFailures, tt.wantNext, tt.wantRemoved)
			}
		})
	}
}
