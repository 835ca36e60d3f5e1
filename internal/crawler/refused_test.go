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

// countingPrechecker prechecks every card as unsigned and counts calls.
type countingPrechecker struct{ urls []string }

func (p *countingPrechecker) Precheck(_ context.Context, _ *card.Card, cardURL string) *catalog.Precheck {
	p.urls = append(p.urls, cardURL)
	return &catalog.Precheck{SignatureStatus: catalog.SignatureUnsigned}
}

// TestPrecheckNewBytesOnly: a registration prechecks the card it fetched,
// under the URL it is stored at; a check prechecks a card only when its
// bytes differ from those stored, and hands the precheck to the write.
func TestPrecheckNewBytesOnly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(testCard))
	}))
	defer srv.Close()
	var pc countingPrechecker
	store := &fakeStore{}
	r := NewRegistrar(newTestFetcher(0), store, card.DefaultLimits(), nil).UsePrechecker(&pc)
	out := r.RegisterMany(t.Context(), catalog.System("test"), catalog.ScopeAll, []Registration{{Input: srv.URL + "/card.json"}}, 1)
	if out[0].Err != nil {
		t.Fatal(out[0].Err)
	}
	if len(pc.urls) != 1 || pc.urls[0] != srv.URL+"/card.json" || len(store.calls) != 1 || store.calls[0].Precheck == nil {
		t.Fatalf("registration: prechecked %v, stored %+v", pc.urls, store.calls)
	}

	c := New(Config{}, nil, newTestFetcher(0), nil)
	c.UsePrechecker(&pc)
	t0 := catalog.CrawlTarget{AgentID: "a1", CardURL: srv.URL + "/card.json", RawSHA256: rawDigest([]byte(testCard))}
	if o := c.Refresh(t.Context(), t0); o.Card == nil || o.Precheck != nil || len(pc.urls) != 1 {
		t.Errorf("the stored bytes again: card %v, precheck %+v, %d prechecks", o.Card != nil, o.Precheck, len(pc.urls))
	}
	t0.RawSHA256 = "other"
	if o := c.Refresh(t.Context(), t0); o.Card == nil || o.Precheck == nil || len(pc.urls) != 2 {
		t.Errorf("new bytes: card %v, precheck %+v, %d prechecks", o.Card != nil, o.Precheck, len(pc.urls))
	}
}
