package crawler_test

import (
	"context"
	"fmt"
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

// testActor is who the tests write as.
var testActor = catalog.System("test")

const cardTmpl = `{"name":"%s","description":"d","version":"%s",
"supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`

// TestCrawlCatalog runs the scheduler against a real catalog: a stable
// agent revalidated with 304, one whose card changes, and one that is gone.
func TestCrawlCatalog(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		var changing atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case strings.HasPrefix(r.URL.Path, "/stable/"):
				w.Header().Set("ETag", `"s1"`)
				if r.Header.Get("If-None-Match") == `"s1"` {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				fmt.Fprintf(w, cardTmpl, "Stable", "1")
			case strings.HasPrefix(r.URL.Path, "/changing/"):
				fmt.Fprintf(w, cardTmpl, "Changing", fmt.Sprint(changing.Add(1)))
			default:
				w.WriteHeader(http.StatusGone)
			}
		}))
		defer srv.Close()

		ids := map[string]string{}
		for _, name := range []string{"stable", "changing", "gone"} {
			u := srv.URL + "/" + name + "/card.json"
			body := fmt.Sprintf(cardTmpl, strings.ToUpper(name[:1])+name[1:], "1")
			if name == "changing" {
				body = fmt.Sprintf(cardTmpl, "Changing", "0")
			}
			c, err := card.Parse([]byte(body), card.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: u, Card: c, Source: catalog.SourceURL, ReceivedAt: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			ids[name] = res.Agent.ID
		}

		var clock atomic.Int64
		clock.Store(time.Now().Add(time.Minute).UnixNano())
		client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Timeout: 2 * time.Second})
		defer client.CloseIdleConnections()
		cs := &countingStore{Store: s, recorded: make(chan struct{}, 1)}
		c := crawler.New(crawler.Config{
			PollInterval: 10 * time.Millisecond, FlushInterval: 10 * time.Millisecond,
			Now: func() time.Time { return time.Unix(0, clock.Load()) },
		}, cs, crawler.NewFetcher(client, 0), nil)

		// pass runs the crawler until every agent has been checked n times.
		pass := func(n int) {
			t.Helper()
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- c.Run(runCtx) }()
			for cs.n.Load() < int64(n*len(ids)) {
				select {
				case <-cs.recorded:
				case <-time.After(10 * time.Second): // a hang guard, not a timing
					t.Fatalf("pass %d: %d outcomes recorded", n, cs.n.Load())
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		pass(1)
		clock.Add(int64(25 * time.Hour))
		pass(2)

		stable, _ := s.AgentHealth(ctx, ids["stable"], time.Now().Add(48*time.Hour))
		if stable.State != catalog.HealthUp || stable.ConsecutiveFailures != 0 {
			t.Errorf("stable health %+v", stable)
		}
		if v, _ := s.Versions(ctx, catalog.ScopeAll, ids["stable"]); len(v) != 1 {
			t.Errorf("stable agent has %d versions; identical bytes and a 304 must not add one", len(v))
		}
		if v, _ := s.Versions(ctx, catalog.ScopeAll, ids["changing"]); len(v) != 3 {
			t.Errorf("changing agent has %d versions, want 3 (registration + 2 changed fetches)", len(v))
		}
		gone, _ := s.AgentHealth(ctx, ids["gone"], time.Now().Add(48*time.Hour))
		if gone.State != catalog.HealthRemoved || gone.LastError == nil || gone.LastError.Class != crawler.ClassHTTP410 {
			t.Errorf("gone health %+v", gone)
		}
		changes, err := s.Changes(ctx, catalog.ScopeAll, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var removed, updated int
		for _, ch := range changes {
			switch {
			case ch.Kind == catalog.ChangeRemoved && ch.AgentID == ids["gone"]:
				removed++
			case ch.Kind == catalog.ChangeUpdated && ch.AgentID == ids["changing"]:
				updated++
			}
		}
		if removed != 1 || updated != 2 {
			t.Errorf("change feed: %d removed, %d updated: %+v", removed, updated, changes)
		}
	})
}

// countingStore counts recorded outcomes so the test knows when a pass
// is complete.
type countingStore struct {
	*catalog.Store
	n        atomic.Int64
	recorded chan struct{} // signalled after each recorded batch
}

func (s *countingStore) RecordFetches(ctx context.Context, actor catalog.Actor, outs []catalog.FetchOutcome) ([]catalog.UpsertResult, error) {
	res, err := s.Store.RecordFetches(ctx, actor, outs)
	if err == nil {
		s.n.Add(int64(len(outs)))
		select {
		case s.recorded <- struct{}{}:
		default:
		}
	}
	return res, err
}
