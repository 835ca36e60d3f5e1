package crawler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// upsertCounter decorates the registrar's store the way decorators are
// written, by embedding the interface. The registrar once found the
// first-check half of its store by a type assertion, which such a
// decorator failed without a word: registrations then stored no
// validators, and the crawler fetched every new agent again at once.
type upsertCounter struct {
	crawler.RegistrarStore
	upserts atomic.Int32
}

func (u *upsertCounter) UpsertBatch(ctx context.Context, actor catalog.Actor, ins []catalog.UpsertInput) ([]catalog.UpsertResult, error) {
	u.upserts.Add(int32(len(ins)))
	return u.RegistrarStore.UpsertBatch(ctx, actor, ins)
}

// TestRegistrationIsTheFirstCheck registers through a decorated real
// catalog: the registration's fetch is stored as the agent's first check
// (validators, health, the next check by the card's max-age), so the
// crawler's first request comes later and is conditional.
func TestRegistrationIsTheFirstCheck(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		const lm = "Sun, 01 Mar 2026 10:00:00 GMT"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Last-Modified", lm)
			w.Header().Set("Cache-Control", "max-age=7200")
			w.Write([]byte(strings.NewReplacer("%s", "Echo").Replace(cardTmpl)))
		}))
		defer srv.Close()
		client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
		defer client.CloseIdleConnections()
		store := &upsertCounter{RegistrarStore: s}
		r := crawler.NewRegistrar(crawler.NewFetcher(client, 0), store, card.Limits{}, nil).
			UsePolicy(crawler.Policy{MinInterval: time.Minute, Rand: func() float64 { return 0 }})

		before := time.Now()
		res, err := r.Register(t.Context(), testActor, catalog.ScopeAll, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if store.upserts.Load() != 1 {
			t.Errorf("%d upserts through the decorator, want 1", store.upserts.Load())
		}
		got, err := s.CrawlTarget(t.Context(), res.Agent.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ETag != `"v1"` || got.LastModified != lm || got.Health != catalog.HealthUp ||
			got.LastSuccessAt.IsZero() || got.NextCheckAt.Before(before.Add(time.Hour)) {
			t.Errorf("crawl state after registering %+v: want validators, health up, a success and the next check in about 2h", got)
		}
		due, err := s.ClaimDue(t.Context(), time.Now().Add(time.Minute), 10, "test", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) != 0 {
			t.Errorf("due a minute after registering: %+v", due)
		}
	})
}
