package crawler_test

import (
	"fmt"
	"net"
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
	"github.com/a2aregistry/registry/internal/safehttp/safehttptest"
)

// TestCrawlSelf: with loopback allowlisted, a card URL at the registry's
// own listen address — directly, through a name that resolves there, or
// at the end of a redirect — is refused with the class self, which a
// registration reports as a refused address without the advice to open
// a network (no network opens the registry itself), and a refresh
// stores with a message a user understands. The registry gets no request.
func TestCrawlSelf(t *testing.T) {
	var hits atomic.Int32
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, cardTmpl, "Registry", "1")
	}))
	defer reg.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, reg.URL+"/.well-known/agent-card.json", http.StatusFound)
	}))
	defer redirector.Close()
	port := fmt.Sprint(reg.Listener.Addr().(*net.TCPAddr).Port)
	res := safehttptest.NewResolver(t, map[string][]string{"rebind.corp.internal": {"127.0.0.1"}})
	self, err := safehttp.NewSelf(reg.Listener.Addr().String(), "https://registry.corp.internal")
	if err != nil {
		t.Fatal(err)
	}
	client := safehttp.New(safehttp.Config{Resolver: res.Net(), Self: self,
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	defer client.CloseIdleConnections()

	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		r := crawler.NewRegistrar(crawler.NewFetcher(client, 0), s, card.Limits{}, nil)
		for _, input := range []string{
			reg.URL + "/.well-known/agent-card.json",
			"http://rebind.corp.internal:" + port + "/.well-known/agent-card.json",
			redirector.URL + "/card.json",
			"https://registry.corp.internal/.well-known/agent-card.json",
		} {
			_, err := r.Register(t.Context(), testActor, catalog.ScopeAll, input)
			p, ok := crawler.ProblemOf(err)
			if !ok || p.Class != crawler.ClassSelf || p.Kind() != crawler.KindBlockedAddress {
				t.Errorf("registering %s: %v (%+v), want class %s, kind %s", input, err, p, crawler.ClassSelf, crawler.KindBlockedAddress)
				continue
			}
			if !strings.Contains(p.Message, "this registry itself") || strings.Contains(p.Advice(), "--allow-networks") {
				t.Errorf("registering %s: message %q, advice %q: want it to say it is the registry, and no network advice", input, p.Message, p.Advice())
			}
		}

		c, err := card.Parse(fmt.Appendf(nil, cardTmpl, "Registry", "1"), card.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		cardURL := "http://rebind.corp.internal:" + port + "/.well-known/agent-card.json"
		up, err := s.Upsert(t.Context(), testActor, catalog.UpsertInput{CardURL: cardURL, Card: c, Source: catalog.SourceURL, ReceivedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		target, err := s.CrawlTarget(t.Context(), up.Agent.ID)
		if err != nil {
			t.Fatal(err)
		}
		o := crawler.New(crawler.Config{}, s, crawler.NewFetcher(client, 0), nil).Refresh(t.Context(), target)
		if _, err := s.RecordFetches(t.Context(), testActor, []catalog.FetchOutcome{o}); err != nil {
			t.Fatal(err)
		}
		view, err := s.AgentView(t.Context(), catalog.ScopeAll, up.Agent.ID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if le := view.Health.LastError; le == nil || le.Class != crawler.ClassSelf || !strings.Contains(le.Message, "rebind.corp.internal") {
			t.Errorf("last error %+v, want class %s naming the card's host", le, crawler.ClassSelf)
		}
	})
	if n := hits.Load(); n != 0 {
		t.Errorf("the registry got %d requests", n)
	}
}
