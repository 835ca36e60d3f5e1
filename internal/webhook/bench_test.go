package webhook_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/webhook"
)

// BenchmarkDeliveries fans out and delivers a backlog of b.N
// registrations, each to one loopback receiver, with the dispatcher's Run
// loop, and reports deliveries/s (the registrations are written before
// the timer starts). Run it with
// -benchtime=2000x or more; REGISTRY_TEST_POSTGRES_DSN adds PostgreSQL.
func BenchmarkDeliveries(b *testing.B) {
	for _, db := range []struct {
		name string
		open func(testing.TB) *catalog.Store
	}{{"sqlite", catalogtest.SQLite}, {"postgres", catalogtest.Postgres}} {
		b.Run(db.name, func(b *testing.B) {
			s := db.open(b)
			var (
				mu      sync.Mutex
				arrived = map[string]time.Time{}
				done    = make(chan struct{})
			)
			rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				arrived[r.Header.Get("webhook-id")] = time.Now()
				if len(arrived) == b.N {
					close(done)
				}
				mu.Unlock()
				w.WriteHeader(http.StatusNoContent)
			}))
			defer rcv.Close()
			ctx := context.Background()
			if err := s.CreateWebhook(ctx, catalog.System("bench"), catalog.Webhook{ID: webhook.NewID(), URL: rcv.URL,
				EventTypes: []string{webhook.EventRegistered}, CreatedAt: time.Now()}, webhook.NewSecret()); err != nil {
				b.Fatal(err)
			}
			cards := make([]*card.Card, 0, b.N)
			for i := range b.N {
				c, err := card.Parse([]byte(fmt.Sprintf(cardJSON, fmt.Sprint(i), "1.0.0")), card.DefaultLimits())
				if err != nil {
					b.Fatal(err)
				}
				cards = append(cards, c)
			}
			for i, c := range cards {
				if _, err := s.Upsert(ctx, catalog.System("bench"), catalog.UpsertInput{
					CardURL: fmt.Sprintf("https://a%d.example.org/.well-known/agent-card.json", i), Card: c, Source: catalog.SourceURL}); err != nil {
					b.Fatal(err)
				}
			}
			d := webhook.New(s, loopbackClient(true), slog.New(slog.DiscardHandler), webhook.Config{Interval: 50 * time.Millisecond})
			runCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			b.ResetTimer()
			start := time.Now()
			go d.Run(runCtx)
			select {
			case <-done:
			case <-time.After(10 * time.Minute):
				b.Fatalf("%d of %d delivered", len(arrived), b.N)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			cancel()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
		})
	}
}
