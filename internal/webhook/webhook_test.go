package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/webhook"
)

const cardJSON = `{"name": "Polyglot %s", "description": "Translates.", "version": "%s",
  "supportedInterfaces": [{"url": "https://translate.example.org/a2a", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}],
  "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
  "skills": [{"id": "t", "name": "Translate", "description": "Translates text.", "tags": ["translation"]}]}`

// received is one request the receiver got.
type received struct {
	id, ts, sig string
	body        []byte
}

// receiver answers with the statuses given, in turn (0 = hang until the
// client gives up), then 204.
type receiver struct {
	mu      sync.Mutex
	got     []received
	answers []int
	// failOnce answers 503 to the first request whose body holds it.
	failOnce string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.got = append(r.got, received{req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"), req.Header.Get("webhook-signature"), body})
	status := http.StatusNoContent
	switch {
	case r.failOnce != "" && strings.Contains(string(body), r.failOnce):
		status, r.failOnce = http.StatusServiceUnavailable, ""
	case len(r.answers) > 0:
		status, r.answers = r.answers[0], r.answers[1:]
	}
	r.mu.Unlock()
	if status == 0 {
		select {
		case <-req.Context().Done():
		case <-time.After(time.Minute): // a hang guard
		}
		return
	}
	w.WriteHeader(status)
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }

// loopbackClient gives up on a delivery after two seconds: a receiver that
// hangs must fail in a test's time, and one that answers must not on a
// loaded machine, where a loopback request can take hundreds of ms.
func loopbackClient(allow bool) *safehttp.Client {
	cfg := safehttp.Config{Timeout: 2 * time.Second}
	if allow {
		cfg.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	}
	return safehttp.New(cfg)
}

type env struct {
	s      *catalog.Store
	clk    *clock
	rcv    *receiver
	url    string
	d      *webhook.Dispatcher
	hook   string
	secret string
}

func setup(t *testing.T, s *catalog.Store, allow bool, filter string, answers ...int) *env {
	t.Helper()
	rcv := &receiver{answers: answers}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	clk := &clock{t: time.Now().UTC()}
	e := &env{s: s, clk: clk, rcv: rcv, url: srv.URL, hook: webhook.NewID(), secret: webhook.NewSecret()}
	err := s.CreateWebhook(context.Background(), catalog.System("test"), catalog.Webhook{ID: e.hook, URL: srv.URL,
		EventTypes: webhook.EventTypes(), Filter: filter, CreatedAt: clk.t}, e.secret)
	if err != nil {
		t.Fatal(err)
	}
	e.d = e.dispatcher(allow)
	return e
}

func (e *env) dispatcher(allow bool) *webhook.Dispatcher {
	return webhook.New(e.s, loopbackClient(allow), slog.New(slog.DiscardHandler),
		webhook.Config{Now: e.clk.now, FirstRetry: time.Minute, MaxRetry: 10 * time.Minute})
}

func (e *env) upsert(t *testing.T, name, version string) {
	t.Helper()
	c, err := card.Parse([]byte(fmt.Sprintf(cardJSON, name, version)), card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.s.Upsert(context.Background(), catalog.System("test"), catalog.UpsertInput{
		CardURL: "https://" + name + ".example.org/.well-known/agent-card.json", Card: c, Source: catalog.SourceURL})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) step(t *testing.T) {
	t.Helper()
	if err := e.d.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// verify checks a delivery's signature the way a receiver would, written
// from the Standard Webhooks specification, not from the package.
func verify(t *testing.T, secret string, r received) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(r.id + "." + r.ts + "." + string(r.body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(r.sig), []byte(want)) {
		t.Fatalf("signature %q; want %q", r.sig, want)
	}
}

type body struct {
	Type string `json:"type"`
	Data struct {
		AgentID string `json:"agent_id"`
		Version int    `json:"version"`
		Seq     int64  `json:"seq"`
	} `json:"data"`
}

func decode(t *testing.T, r received) body {
	t.Helper()
	var b body
	if err := json.Unmarshal(r.body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDeliverySignedAndRetriedWithSameID(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		e := setup(t, s, true, "", http.StatusInternalServerError, 0)
		e.upsert(t, "alpha", "1.0.0")
		e.step(t) // 500
		e.clk.add(2 * time.Minute)
		e.step(t) // timeout
		e.clk.add(5 * time.Minute)
		e.step(t) // 204
		got := e.rcv.requests()
		if len(got) != 3 {
			t.Fatalf("got %d requests; want 3", len(got))
		}
		for _, r := range got {
			verify(t, e.secret, r)
			if r.id != got[0].id {
				t.Fatalf("webhook-id %q then %q; want the same on every attempt", got[0].id, r.id)
			}
		}
		if b := decode(t, got[2]); b.Type != webhook.EventRegistered || b.Data.Version != 1 {
			t.Fatalf("payload %+v; want agent.registered of version 1", b)
		}
		e.clk.add(time.Hour)
		e.step(t)
		if n := len(e.rcv.requests()); n != 3 {
			t.Fatalf("a delivered event was sent again (%d requests)", n)
		}
		log, err := s.WebhookDeliveries(context.Background(), e.hook, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 1 || log[0].State != catalog.DeliveryDelivered || log[0].Attempts != 3 {
			t.Fatalf("delivery log %+v; want one delivered after 3 attempts", log)
		}
	})
}

func TestDeliveriesInOrderPerAgent(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		e := setup(t, s, true, "")
		e.rcv.failOnce = "alpha"
		e.upsert(t, "alpha", "1.0.0")
		e.upsert(t, "alpha", "2.0.0")
		e.upsert(t, "beta", "1.0.0")
		e.step(t) // alpha v1 fails, beta v1 goes; alpha v2 waits behind alpha v1
		got := e.rcv.requests()
		if len(got) != 2 {
			t.Fatalf("first round sent %d; want alpha v1 and beta v1", len(got))
		}
		e.clk.add(2 * time.Minute)
		e.step(t)
		e.clk.add(2 * time.Minute)
		e.step(t)
		var alpha []int
		for _, r := range e.rcv.requests() {
			b := decode(t, r)
			if strings.Contains(string(r.body), "alpha") {
				alpha = append(alpha, b.Data.Version)
			}
		}
		if want := []int{1, 1, 2}; !equal(alpha, want) {
			t.Fatalf("alpha's deliveries by version %v; want %v", alpha, want)
		}
	})
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPrivateReceiverRefused(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		e := setup(t, s, false, "")
		e.upsert(t, "alpha", "1.0.0")
		e.step(t)
		if n := len(e.rcv.requests()); n != 0 {
			t.Fatalf("a receiver on loopback got %d requests without --allow-networks", n)
		}
		log, err := s.WebhookDeliveries(context.Background(), e.hook, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 1 || log[0].State != catalog.DeliveryPending || log[0].LastStatus != 0 || !strings.Contains(log[0].LastError, "loopback address") {
			t.Fatalf("delivery log %+v; want a pending delivery refused by the address guard", log)
		}
	})
}

func TestDisabledAfterFailingForADay(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		e := setup(t, s, true, "", 500, 500, 500, 500)
		e.upsert(t, "alpha", "1.0.0")
		e.step(t)
		e.clk.add(23 * time.Hour)
		e.step(t)
		if h, _ := s.Webhook(context.Background(), e.hook); h.DisabledAt != nil {
			t.Fatal("disabled after 23 hours")
		}
		e.clk.add(2 * time.Hour)
		e.step(t)
		h, err := s.Webhook(context.Background(), e.hook)
		if err != nil {
			t.Fatal(err)
		}
		if h.DisabledAt == nil || !strings.Contains(h.DisabledReason, "status 500") {
			t.Fatalf("webhook %+v; want disabled, saying why", h)
		}
		e.upsert(t, "beta", "1.0.0")
		e.clk.add(time.Hour)
		e.step(t)
		if n := len(e.rcv.requests()); n != 3 {
			t.Fatalf("a disabled webhook was sent to (%d requests)", n)
		}
	})
}

// TestDeliverySurvivesRestart: a dispatcher that claims a delivery and
// dies before recording it leaves the row; another (a restart, or another
// replica) sends it under the same id once the lease runs out.
func TestDeliverySurvivesRestart(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		e := setup(t, s, true, "")
		e.upsert(t, "alpha", "1.0.0")
		if err := e.d.FanOut(context.Background()); err != nil {
			t.Fatal(err)
		}
		claimed, err := s.ClaimWebhookDeliveries(context.Background(), e.clk.now(), 10, time.Minute)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %v, %v; want one", claimed, err)
		}
		// The dead dispatcher's lease holds the row…
		e.d = e.dispatcher(true)
		e.step(t)
		if n := len(e.rcv.requests()); n != 0 {
			t.Fatalf("a leased delivery was sent by another dispatcher (%d)", n)
		}
		// …until it runs out.
		e.clk.add(2 * time.Minute)
		e.step(t)
		got := e.rcv.requests()
		if len(got) != 1 || got[0].id != webhook.MessageID(claimed[0].PK) {
			t.Fatalf("after the lease: %d requests; want the claimed delivery once", len(got))
		}
	})
}

func TestFilter(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		e := setup(t, s, true, "q=beta")
		e.upsert(t, "alpha", "1.0.0")
		e.upsert(t, "beta", "1.0.0")
		e.step(t)
		got := e.rcv.requests()
		if len(got) != 1 || !strings.Contains(string(got[0].body), "beta") {
			t.Fatalf("filter q=beta delivered %d events; want beta's only", len(got))
		}
	})
}

// TestRunDeliversAndStops: the background loop delivers without being
// stepped and returns once its context ends.
func TestRunDeliversAndStops(t *testing.T) {
	s := catalogtest.SQLite(t)
	e := setup(t, s, true, "")
	d := webhook.New(s, loopbackClient(true), slog.New(slog.DiscardHandler), webhook.Config{Interval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		d.Run(ctx)
		close(done)
	}()
	e.upsert(t, "alpha", "1.0.0")
	deadline := time.Now().Add(10 * time.Second)
	for len(e.rcv.requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if n := len(e.rcv.requests()); n != 1 {
		t.Fatalf("Run delivered %d requests; want 1", n)
	}
}

// TestEventsWithDetail: a health transition is delivered as agent.health
// with its detail, after the agent's registration, and a filtered
// subscription gets only the events of agents its filter matches.
func TestEventsWithDetail(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		e := setup(t, s, true, "q=beta")
		e.upsert(t, "alpha", "1.0.0")
		e.upsert(t, "beta", "1.0.0")
		ctx := context.Background()
		var outs []catalog.FetchOutcome
		for _, name := range []string{"alpha", "beta"} {
			a, err := s.AgentByURL(ctx, "https://"+name+".example.org/.well-known/agent-card.json")
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, catalog.FetchOutcome{AgentID: a.ID, At: e.clk.t, Status: 503, Class: "http_5xx",
				Health: catalog.HealthDown, NextCheckAt: e.clk.t.Add(time.Hour)})
		}
		if _, err := s.RecordFetches(ctx, catalog.System("test"), outs); err != nil {
			t.Fatal(err)
		}
		e.step(t)
		e.step(t) // the agent's second event waits for its first
		got := e.rcv.requests()
		var types []string
		for _, r := range got {
			verify(t, e.secret, r)
			if !strings.Contains(string(r.body), "beta") {
				t.Errorf("filter q=beta delivered %s", r.body)
			}
			types = append(types, decode(t, r).Type)
		}
		if len(got) != 2 || types[0] != webhook.EventRegistered || types[1] != webhook.EventHealth {
			t.Fatalf("delivered %q; want beta's agent.registered then agent.health", types)
		}
		var b struct {
			Data struct {
				Detail map[string]string `json:"detail"`
			} `json:"data"`
		}
		if err := json.Unmarshal(got[1].body, &b); err != nil {
			t.Fatal(err)
		}
		if b.Data.Detail["from"] != catalog.HealthUnknown || b.Data.Detail["to"] != catalog.HealthDown {
			t.Errorf("agent.health detail %v; want unknown to down", b.Data.Detail)
		}
	})
}

// TestReplicasDeliverEachOnce: dispatchers of several replicas (stores
// of their own on one database) stepping at once send every delivery
// once, each agent's in feed order.
func TestReplicasDeliverEachOnce(t *testing.T) {
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", catalogtest.SQLiteDSN}, {"postgres", catalogtest.PostgresDSN}} {
		t.Run(db.name, func(t *testing.T) {
			dsn := db.dsn(t)
			const replicas, agents, versions = 4, 10, 3
			stores := make([]*catalog.Store, replicas)
			for i := range stores {
				stores[i] = catalogtest.Open(t, dsn)
			}
			e := setup(t, stores[0], true, "")
			for v := 1; v <= versions; v++ {
				for a := range agents {
					e.upsert(t, fmt.Sprintf("agent%d", a), fmt.Sprintf("%d.0.0", v))
				}
			}
			want := agents * versions
			var wg sync.WaitGroup
			deadline := time.Now().Add(time.Minute)
			for _, s := range stores {
				d := webhook.New(s, loopbackClient(true), slog.New(slog.DiscardHandler), webhook.Config{Batch: 7})
				wg.Add(1)
				go func() {
					defer wg.Done()
					for len(e.rcv.requests()) < want && time.Now().Before(deadline) {
						if err := d.Step(context.Background()); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			got := e.rcv.requests()
			seen := map[string]bool{}
			last := map[string]int64{}
			for _, r := range got {
				verify(t, e.secret, r)
				if seen[r.id] {
					t.Errorf("delivery %s sent twice", r.id)
				}
				seen[r.id] = true
				b := decode(t, r)
				if b.Data.Seq <= last[b.Data.AgentID] {
					t.Errorf("agent %s: seq %d after %d", b.Data.AgentID, b.Data.Seq, last[b.Data.AgentID])
				}
				last[b.Data.AgentID] = b.Data.Seq
			}
			if len(seen) != want {
				t.Fatalf("%d distinct deliveries; want %d", len(seen), want)
			}
		})
	}
}
