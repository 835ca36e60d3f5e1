package crawler_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
)

// TestRegisterHiddenAgentIsNeutral: registering the URL of an agent the
// caller does not see (a collection of another group) answers
// ErrAlreadyCatalogued — no agent, no id — without fetching it, storing a
// version or writing an audit row in the caller's name; a caller who sees
// it registers (refreshes) it as before.
func TestRegisterHiddenAgentIsNeutral(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		var fetches atomic.Int32
		name := "Echo"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fetches.Add(1)
			w.Write([]byte(strings.NewReplacer("%s", name).Replace(cardTmpl)))
		}))
		defer srv.Close()
		client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
		defer client.CloseIdleConnections()
		r := crawler.NewRegistrar(crawler.NewFetcher(client, 0), s, card.Limits{}, nil)
		first, err := r.Register(ctx, testActor, catalog.ScopeAll, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SaveCollection(ctx, testActor, catalog.Collection{Name: "Secret", Groups: []string{"sec"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddToCollection(ctx, testActor, "secret", first.Agent.ID); err != nil {
			t.Fatal(err)
		}
		name = "Echo Two" // a registration that reached the agent would store a new version
		ed := catalog.User("ed").For(catalog.Request{ID: "r1"})
		outsider := catalog.Scope{Review: true}
		for _, input := range []string{first.Agent.CardURL, srv.URL, strings.ToUpper(srv.URL[:4]) + srv.URL[4:] + "/"} {
			before, err := s.AuditLog(ctx, "", 100)
			if err != nil {
				t.Fatal(err)
			}
			n := fetches.Load()
			res, err := r.Register(ctx, ed, outsider, input)
			if !errors.Is(err, crawler.ErrAlreadyCatalogued) || res.Agent.ID != "" {
				t.Fatalf("Register(%s) by an outsider = %+v, %v; want ErrAlreadyCatalogued and no agent", input, res.Agent, err)
			}
			after, err := s.AuditLog(ctx, "", 100)
			if err != nil {
				t.Fatal(err)
			}
			if fetches.Load() != n || len(after.Entries) != len(before.Entries) {
				t.Errorf("Register(%s): %d fetches, audit %d → %d rows; want none", input, fetches.Load()-n, len(before.Entries), len(after.Entries))
			}
		}
		if a, err := s.Agent(ctx, catalog.ScopeAll, first.Agent.ID); err != nil || a.CurrentVersion != 1 {
			t.Errorf("the hidden agent changed: version %d, %v", a.CurrentVersion, err)
		}
		res, err := r.Register(ctx, ed, catalog.Scope{Review: true, Groups: []string{"sec"}}, srv.URL)
		if err != nil || res.Agent.ID != first.Agent.ID || !res.NewVersion {
			t.Errorf("Register by a member of the group = %+v, %v; want the agent's new version", res, err)
		}
	})
}
