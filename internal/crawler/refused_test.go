package crawler

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// refusingStore refuses, as the admission policy does, any write holding
// a card whose URL has /refused/ in it.
type refusingStore struct{ fakeStore }

func (s *refusingStore) UpsertBatch(ctx context.Context, actor catalog.Actor, ins []catalog.UpsertInput) ([]catalog.UpsertResult, error) {
	for _, in := range ins {
		if strings.Contains(in.CardURL, "/refused/") {
			return nil, &catalog.RefusedError{CardURL: in.CardURL, RuleID: "no-refused", Message: "refused in a test"}
		}
	}
	return s.fakeStore.UpsertBatch(ctx, actor, ins)
}

// TestRegisterManyRefusesOnlyTheRefused: in a batch (a seed list, a
// source's entries), a card the admission policy refuses is its own
// registration's error, and the other cards are stored.
func TestRegisterManyRefusesOnlyTheRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(testCard))
	}))
	defer srv.Close()
	store := &refusingStore{}
	r := NewRegistrar(newTestFetcher(0), store, card.DefaultLimits(), nil)
	regs := []Registration{{Input: srv.URL + "/a/card.json"}, {Input: srv.URL + "/refused/card.json"}, {Input: srv.URL + "/b/card.json"}}
	out := r.RegisterMany(t.Context(), catalog.System("test"), catalog.ScopeAll, regs, 2)
	for i, want := range []bool{false, true, false} {
		if refused := errors.Is(out[i].Err, catalog.ErrRefused); refused != want {
			t.Errorf("%s: err %v, want refused %v", regs[i].Input, out[i].Err, want)
		}
		if stored := out[i].Result.Agent.CardURL != ""; stored == want {
			t.Errorf("%s: stored %v, want %v", regs[i].Input, stored, !want)
		}
	}
	var urls []string
	for _, in := range store.calls {
		urls = append(urls, in.CardURL)
	}
	if len(urls) != 2 || strings.Contains(strings.Join(urls, " "), "/refused/") {
		t.Errorf("stored %v, want the two cards not refused", urls)
	}
}
