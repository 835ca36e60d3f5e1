package crawler

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2aregistry/registry/internal/background"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/safehttp"
)

const legacyCard = `{"name":"Old","description":"v0.2 agent","version":"0.1","url":"https://old.example.com/a2a",
"capabilities":{},"defaultInputModes":["text"],"defaultOutputModes":["text"],
"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`

// testCrawler builds a Crawler over the given allowlist with a fixed clock
// and no jitter. Its client's timeout is a hang guard, long enough that no
// check of a loopback agent fails as a timeout on a loaded machine; a test
// of the timeout itself uses timedCrawler.
func testCrawler(t *testing.T, store CrawlStore, allow []netip.Prefix, cfg Config) *Crawler {
	t.Helper()
	return timedCrawler(t, store, allow, cfg, hangGuard)
}

// hangGuard is testCrawler's client timeout.
const hangGuard = 10 * time.Second

// timedCrawler is testCrawler with the client's timeout given.
func timedCrawler(t *testing.T, store CrawlStore, allow []netip.Prefix, cfg Config, timeout time.Duration) *Crawler {
	t.Helper()
	client := safehttp.New(safehttp.Config{AllowNetworks: allow, Timeout: timeout, MaxBodyBytes: 64 << 10})
	t.Cleanup(client.CloseIdleConnections)
	if cfg.Rand == nil {
		cfg.Rand = func() float64 { return 0 }
	}
	return New(cfg, store, NewFetcher(client, 32<<10), nil)
}

// applyOutcome does to the target what the catalog does on RecordFetches.
func applyOutcome(t *catalog.CrawlTarget, o catalog.FetchOutcome) {
	t.ConsecutiveFailures, t.Health, t.NextCheckAt = o.ConsecutiveFailures, o.Health, o.NextCheckAt
	t.LastCheckAt = o.At
	if o.Class == "" {
		t.LastSuccessAt = o.At
		if o.ETag != "" || o.LastModified != "" || !o.NotModified {
			t.ETag, t.LastModified = o.ETag, o.LastModified
		}
	}
}

type step struct {
	class       string
	status      int
	health      string
	failures    int
	notModified bool
	card        bool // a parsed card is expected
	legacy      bool
	etag, lm    string
	nextIn      time.Duration // 0: not checked
	messageHas  string
	// messageLacks must not be in the message: the message is shown to
	// anyone reading the agent (issue 10 finding 4).
	messageLacks string
	removed      bool
	cardContains string
}

func TestRefresh(t *testing.T) {
	lm1 := "Sun, 01 Mar 2026 10:00:00 GMT"
	lm2 := "Sun, 01 Mar 2026 11:00:00 GMT"
	tests := []struct {
		name    string
		handler func(calls *atomic.Int32) http.HandlerFunc
		path    string // stored card URL path; default the well-known one
		// neverPath is a path the crawler must not request.
		neverPath string
		allow     []netip.Prefix
		// timeout is the client's, when a step is to time out.
		timeout time.Duration
		steps   []step
	}{
		{
			name: "304 keeps validators",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("If-None-Match") == `"v1"` && r.Header.Get("If-Modified-Since") == lm1 {
						w.WriteHeader(http.StatusNotModified)
						return
					}
					w.Header().Set("ETag", `"v1"`)
					w.Header().Set("Last-Modified", lm1)
					w.Header().Set("Cache-Control", "max-age=7200")
					w.Write([]byte(testCard))
				}
			},
			steps: []step{
				{status: 200, health: catalog.HealthUp, card: true, etag: `"v1"`, lm: lm1, nextIn: 2 * time.Hour},
				{status: 304, health: catalog.HealthUp, notModified: true, etag: `"v1"`, lm: lm1, nextIn: time.Hour},
				{status: 304, health: catalog.HealthUp, notModified: true, etag: `"v1"`, lm: lm1},
			},
		},
		{
			name: "304 with a new Last-Modified updates it",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("If-Modified-Since") != "" {
						w.Header().Set("Last-Modified", lm2)
						w.WriteHeader(http.StatusNotModified)
						return
					}
					w.Header().Set("Last-Modified", lm1)
					w.Write([]byte(testCard))
				}
			},
			steps: []step{
				{status: 200, health: catalog.HealthUp, card: true, lm: lm1},
				{status: 304, health: catalog.HealthUp, notModified: true, lm: lm2},
			},
		},
		{
			name: "429 with Retry-After",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Retry-After", "7200")
					w.WriteHeader(http.StatusTooManyRequests)
				}
			},
			steps: []step{{class: ClassHTTP429, status: 429, health: catalog.HealthStale, failures: 1, nextIn: 2 * time.Hour}},
		},
		{
			name: "500s, down after three, then recovery",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					if calls.Add(1) <= 3 {
						http.Error(w, "boom", http.StatusInternalServerError)
						return
					}
					w.Write([]byte(testCard))
				}
			},
			steps: []step{
				{class: ClassHTTP5xx, status: 500, health: catalog.HealthStale, failures: 1, nextIn: 5 * time.Minute}, // backoff 2.5 min, clamped to min
				{class: ClassHTTP5xx, status: 500, health: catalog.HealthStale, failures: 2, nextIn: 5 * time.Minute},
				{class: ClassHTTP5xx, status: 500, health: catalog.HealthDown, failures: 3, nextIn: 10 * time.Minute},
				{status: 200, health: catalog.HealthUp, failures: 0, card: true},
			},
		},
		{
			name: "slow agent times out",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-r.Context().Done():
					case <-time.After(time.Minute): // a hang guard
					}
				}
			},
			timeout: 300 * time.Millisecond,
			steps:   []step{{class: ClassTimeout, health: catalog.HealthStale, failures: 1}},
		},
		{
			name: "endless body",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"name":"`))
					chunk := bytes.Repeat([]byte("a"), 8192)
					for r.Context().Err() == nil {
						if _, err := w.Write(chunk); err != nil {
							return
						}
					}
				}
			},
			steps: []step{{class: ClassTooLarge, status: 200, health: catalog.HealthStale, failures: 1}},
		},
		{
			name: "gzip bomb",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				var buf bytes.Buffer
				zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
				zw.Write([]byte(`{"name":"`))
				zw.Write(bytes.Repeat([]byte("a"), 50<<20))
				zw.Close()
				bomb := buf.Bytes()
				return func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Content-Encoding", "gzip")
					w.Write(bomb)
				}
			},
			steps: []step{{class: ClassTooLarge, status: 200, health: catalog.HealthStale, failures: 1}},
		},
		{
			name: "redirect loop",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, fmt.Sprintf("/hop/%d", calls.Add(1)), http.StatusFound)
				}
			},
			steps: []step{{class: ClassRedirect, health: catalog.HealthStale, failures: 1}},
		},
		{
			name:  "redirect to a private address",
			allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, "http://127.0.0.2:"+strings.Split(r.Host, ":")[1]+WellKnownCardPath, http.StatusFound)
				}
			},
			steps: []step{{class: ClassBlockedAddress, health: catalog.HealthStale, failures: 1, messageHas: "loopback", messageLacks: "127.0.0.2"}},
		},
		{
			name: "HTML instead of JSON",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					w.Write([]byte("<!doctype html><html><body>Welcome</body></html>"))
				}
			},
			steps: []step{{class: ClassNotJSON, status: 200, health: catalog.HealthStale, failures: 1}},
		},
		{
			name: "JSON that is not a card",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					w.Write([]byte(`{"name":"a","name":"b"}`))
				}
			},
			steps: []step{{class: ClassNotACard, status: 200, health: catalog.HealthStale, failures: 1, messageHas: card.CodeDuplicateKey}},
		},
		{
			name: "410 Gone removes",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) }
			},
			steps: []step{{class: ClassHTTP410, status: 410, health: catalog.HealthRemoved, failures: 1, removed: true}},
		},
		{
			name: "v0.2-only site stored under agent.json",
			path: LegacyCardPath,
			// Stored under agent.json: agent-card.json is not tried first.
			neverPath: WellKnownCardPath,
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != LegacyCardPath {
						http.NotFound(w, r)
						return
					}
					w.Write([]byte(legacyCard))
				}
			},
			steps: []step{
				{status: 200, health: catalog.HealthUp, card: true, legacy: true, cardContains: `"url":"https://old.example.com/a2a"`},
				{status: 200, health: catalog.HealthUp, card: true, legacy: true},
			},
		},
		{
			name: "agent-card.json gone, agent.json still there",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != LegacyCardPath {
						http.NotFound(w, r)
						return
					}
					w.Write([]byte(legacyCard))
				}
			},
			steps: []step{{status: 200, health: catalog.HealthUp, card: true, legacy: true}},
		},
		{
			name: "both well-known paths 404",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }
			},
			steps: []step{{class: ClassHTTP404, status: 404, health: catalog.HealthStale, failures: 1}},
		},
		{
			name: "card changes on every fetch",
			handler: func(calls *atomic.Int32) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					n := calls.Add(1)
					w.Header().Set("ETag", fmt.Sprintf(`"v%d"`, n))
					w.Write([]byte(strings.Replace(testCard, `"version":"1.0.0"`, fmt.Sprintf(`"version":"1.0.%d"`, n), 1)))
				}
			},
			steps: []step{
				{status: 200, health: catalog.HealthUp, card: true, etag: `"v1"`, cardContains: `"version":"1.0.1"`},
				{status: 200, health: catalog.HealthUp, card: true, etag: `"v2"`, cardContains: `"version":"1.0.2"`},
				{status: 200, health: catalog.HealthUp, card: true, etag: `"v3"`, cardContains: `"version":"1.0.3"`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls, forbidden atomic.Int32
			h := tt.handler(&calls)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.neverPath != "" && r.URL.Path == tt.neverPath {
					forbidden.Add(1)
				}
				h(w, r)
			}))
			defer srv.Close()
			allow := loopback
			if tt.allow != nil {
				allow = tt.allow
			}
			now := t0
			timeout := hangGuard
			if tt.timeout != 0 {
				timeout = tt.timeout
			}
			c := timedCrawler(t, nil, allow, Config{
				BackoffBase: 5 * time.Minute, Now: func() time.Time { return now },
			}, timeout)
			path := WellKnownCardPath
			if tt.path != "" {
				path = tt.path
			}
			target := catalog.CrawlTarget{AgentID: "a1", CardURL: srv.URL + path, Health: catalog.HealthUnknown}
			for i, want := range tt.steps {
				o := c.Refresh(t.Context(), target)
				applyOutcome(&target, o)
				ctx := fmt.Sprintf("step %d: outcome %+v", i, o)
				if o.AgentID != "a1" || o.At.IsZero() {
					t.Errorf("%s: agent id or time missing", ctx)
				}
				if o.Class != want.class || o.Status != want.status || o.Health != want.health ||
					o.ConsecutiveFailures != want.failures || o.NotModified != want.notModified ||
					(o.Card != nil) != want.card || o.LegacyPath != want.legacy || o.Removed != want.removed {
					t.Fatalf("%s\nwant %+v", ctx, want)
				}
				if (want.class == "") != (o.Message == "") || !strings.Contains(o.Message, want.messageHas) ||
					(want.messageLacks != "" && strings.Contains(o.Message, want.messageLacks)) {
					t.Errorf("%s: message %q", ctx, o.Message)
				}
				if want.class == "" && (want.etag != o.ETag || want.lm != o.LastModified) {
					t.Errorf("%s: validators %q %q, want %q %q", ctx, o.ETag, o.LastModified, want.etag, want.lm)
				}
				if want.nextIn != 0 && o.NextCheckAt.Sub(o.At) != want.nextIn {
					t.Errorf("%s: next check in %v, want %v", ctx, o.NextCheckAt.Sub(o.At), want.nextIn)
				}
				if want.class != "" && o.Status == 0 && o.Latency != 0 {
					t.Errorf("%s: latency without a response", ctx)
				}
				if want.status != 0 && o.Latency <= 0 {
					t.Errorf("%s: no latency", ctx)
				}
				if want.cardContains != "" && !bytes.Contains(o.Card.Raw, []byte(want.cardContains)) {
					t.Errorf("%s: card %s lacks %s", ctx, o.Card.Raw, want.cardContains)
				}
			}
			if n := forbidden.Load(); n != 0 {
				t.Errorf("%s requested %d times", tt.neverPath, n)
			}
		})
	}
}

// TestRefreshA2ASDKPeer refreshes a card served by the a2a-go SDK's own
// handler. a2asrv v2.4.0 (a2asrv/agentcard.go, writeAgentCardBytes) sends
// neither ETag nor Last-Modified and ignores If-None-Match, so every check
// is a full 200 with identical bytes; the catalog's byte comparison is what
// keeps such cards from producing new versions. The test pins that: if a
// later SDK starts sending validators, it fails and the 304 path should be
// asserted here instead.
func TestRefreshA2ASDKPeer(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(&a2a.AgentCard{
		Name: "SDK agent", Description: "served by a2asrv", Version: "2.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(srv.URL+"/a2a", a2a.TransportProtocolJSONRPC)},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "chat", Name: "Chat", Description: "talks", Tags: []string{"chat"}}},
	}))
	c := testCrawler(t, nil, loopback, Config{})
	target := catalog.CrawlTarget{AgentID: "sdk", CardURL: srv.URL + WellKnownCardPath}
	first := c.Refresh(t.Context(), target)
	if first.Class != "" || first.Card == nil || first.Card.Name != "SDK agent" || first.Card.Shape != card.ShapeV10 {
		t.Fatalf("first check: %+v", first)
	}
	if len(first.Card.Interfaces) != 1 || first.Card.Interfaces[0].ProtocolVersion != "1.0" {
		t.Errorf("interfaces %+v", first.Card.Interfaces)
	}
	if first.ETag != "" || first.LastModified != "" {
		t.Fatalf("a2asrv now sends validators (ETag %q, Last-Modified %q): assert the 304 path", first.ETag, first.LastModified)
	}
	applyOutcome(&target, first)
	second := c.Refresh(t.Context(), target)
	if second.Class != "" || second.NotModified || second.Card == nil || !bytes.Equal(second.Card.Raw, first.Card.Raw) {
		t.Errorf("second check: %+v", second)
	}
}

// TestRefreshETagMiddlewareOnSDKPeer puts the SDK handler behind a
// standard validator layer (what a CDN or reverse proxy in front of an
// a2asrv agent adds) and checks the 304 path end to end with a real peer.
func TestRefreshETagMiddlewareOnSDKPeer(t *testing.T) {
	sdk := a2asrv.NewStaticAgentCardHandler(&a2a.AgentCard{
		Name: "SDK agent", Description: "d", Version: "1",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface("https://sdk.example.com/a2a", a2a.TransportProtocolJSONRPC)},
		Skills:              []a2a.AgentSkill{{ID: "s", Name: "S", Description: "d", Tags: []string{"t"}}},
	})
	var notModified atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		sdk.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		etag := fmt.Sprintf(`"%x"`, len(body))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
		w.Write(body)
	}))
	defer srv.Close()
	c := testCrawler(t, nil, loopback, Config{})
	target := catalog.CrawlTarget{AgentID: "sdk", CardURL: srv.URL + WellKnownCardPath}
	first := c.Refresh(t.Context(), target)
	applyOutcome(&target, first)
	second := c.Refresh(t.Context(), target)
	if first.Card == nil || first.ETag == "" || !second.NotModified || second.Card != nil || second.Class != "" ||
		second.Health != catalog.HealthUp || notModified.Load() != 1 {
		t.Errorf("first %+v\nsecond %+v (304s served: %d)", first, second, notModified.Load())
	}
}

func TestRefreshCanceled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := testCrawler(t, nil, loopback, Config{})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	o := c.Refresh(ctx, catalog.CrawlTarget{AgentID: "a", CardURL: srv.URL + "/card.json"})
	if o.Class != ClassCanceled {
		t.Errorf("class %q, want %q", o.Class, ClassCanceled)
	}
}

func TestWellKnownSibling(t *testing.T) {
	tests := map[string]string{
		"https://a.example/.well-known/agent-card.json": "https://a.example/.well-known/agent.json",
		"https://a.example/.well-known/agent.json":      "https://a.example/.well-known/agent-card.json",
		"http://a.example:8080/.well-known/agent.json":  "http://a.example:8080/.well-known/agent-card.json",
		"https://a.example/x/.well-known/agent.json":    "",
		"https://a.example/.well-known/agent.json?v=1":  "",
		"https://a.example/card.json":                   "",
	}
	for in, want := range tests {
		if got := wellKnownSibling(in); got != want {
			t.Errorf("wellKnownSibling(%q) = %q, want %q", in, got, want)
		}
	}
}

// A card is parsed in a background turn: while requests hold the only
// turn, a check waits, and gives up as cancelled when its context ends
// first (the scheduler then leaves the agent to its lease).
func TestRefreshParsesInABackgroundTurn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, legacyCard)
	}))
	defer srv.Close()
	p := background.NewPriority(1)
	c := testCrawler(t, nil, loopback, Config{Priority: p})
	target := catalog.CrawlTarget{AgentID: "a", CardURL: srv.URL + "/card.json"}

	_, end, err := p.Turn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Cancelled once the check waits for its turn, not after a fixed
	// time: on a loaded machine the fetch before it can take longer than
	// any short deadline, and would then fail as a timeout.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	outcome := make(chan catalog.FetchOutcome, 1)
	go func() { outcome <- c.Refresh(ctx, target) }()
	var o catalog.FetchOutcome
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	hang := time.After(30 * time.Second)
wait:
	for {
		select {
		case o = <-outcome: // it ended without waiting for a turn
			break wait
		case <-hang:
			t.Fatal("the check neither ended nor waited for a turn")
		case <-poll.C:
			if p.Stats().Waiting > 0 {
				cancel()
				o = <-outcome
				break wait
			}
		}
	}
	if o.Class != ClassCanceled || o.Card != nil {
		t.Fatalf("check while the turn was held: class %q, card %v; want %q and none", o.Class, o.Card != nil, ClassCanceled)
	}
	end()
	if o := c.Refresh(t.Context(), target); o.Class != "" || o.Card == nil {
		t.Fatalf("check with the turn free: class %q (%s), card %v", o.Class, o.Message, o.Card != nil)
	}
	if bg := p.Stats().Background; bg != 0 {
		t.Errorf("%d background turns still held after the checks", bg)
	}
}
