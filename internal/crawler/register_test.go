package crawler

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
)

// fakeStore records upserts and checks, as *catalog.Store stores them.
type fakeStore struct {
	calls    []catalog.UpsertInput
	outcomes []catalog.FetchOutcome
	err      error
}

func (s *fakeStore) CrawlTargets(_ context.Context, ids []string) ([]catalog.CrawlTarget, error) {
	out := make([]catalog.CrawlTarget, len(ids))
	for i, id := range ids {
		out[i] = catalog.CrawlTarget{AgentID: id, Health: catalog.HealthUnknown}
	}
	return out, nil
}

func (s *fakeStore) HidesCardURL(context.Context, catalog.Scope, []string) (bool, error) {
	return false, nil
}

func (s *fakeStore) RecordFetches(_ context.Context, _ catalog.Actor, outs []catalog.FetchOutcome) ([]catalog.UpsertResult, error) {
	s.outcomes = append(s.outcomes, outs...)
	return make([]catalog.UpsertResult, len(outs)), nil
}

func (s *fakeStore) UpsertBatch(_ context.Context, _ catalog.Actor, ins []catalog.UpsertInput) ([]catalog.UpsertResult, error) {
	s.calls = append(s.calls, ins...)
	if s.err != nil {
		return nil, s.err
	}
	out := make([]catalog.UpsertResult, len(ins))
	for i, in := range ins {
		out[i] = catalog.UpsertResult{
			Agent:      catalog.Agent{ID: "agent-1", CardURL: in.CardURL, Card: in.Card},
			Created:    true,
			NewVersion: true,
		}
	}
	return out, nil
}

func TestRegister(t *testing.T) {
	errStore := errors.New("disk full")
	serve := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case WellKnownCardPath:
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(body))
			case "/old/card.json":
				http.Redirect(w, r, WellKnownCardPath, http.StatusMovedPermanently)
			default:
				http.NotFound(w, r)
			}
		}
	}
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		path     string
		storeErr error
		// wantCardPath is the path of the CardURL given to the store; ""
		// means the store must not be called.
		wantCardPath string
		wantClass    string // FetchError class
		wantIs       error
		wantParse    string // card.ParseError code
	}{
		{name: "origin", handler: serve(testCard), wantCardPath: WellKnownCardPath},
		{name: "explicit URL", handler: serve(testCard), path: WellKnownCardPath, wantCardPath: WellKnownCardPath},
		{name: "redirect keeps the submitted URL as identity", handler: serve(testCard), path: "/old/card.json", wantCardPath: "/old/card.json"},
		{name: "fetch failure", handler: http.NotFound, wantClass: ClassHTTP404},
		{name: "invalid input", handler: serve(testCard), path: "/x#y", wantClass: ClassInvalidURL, wantIs: ErrInvalidURL},
		{name: "not a card", handler: serve(`{"name":"a","name":"b"}`), wantIs: card.ErrInvalid, wantParse: card.CodeDuplicateKey},
		{name: "store failure", handler: serve(testCard), storeErr: errStore, wantCardPath: WellKnownCardPath, wantIs: errStore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			store := &fakeStore{err: tt.storeErr}
			r := NewRegistrar(newTestFetcher(0), store, card.DefaultLimits(), nil)
			input := srv.URL + tt.path
			if tt.wantClass == ClassInvalidURL {
				input = "ftp" + input[len("http"):]
			}
			res, err := r.Register(t.Context(), catalog.System("test"), catalog.ScopeAll, input)

			if tt.wantCardPath == "" {
				if len(store.calls) != 0 {
					t.Errorf("store called with %+v", store.calls)
				}
			} else {
				if len(store.calls) != 1 {
					t.Fatalf("store called %d times, want 1", len(store.calls))
				}
				in := store.calls[0]
				if in.CardURL != srv.URL+tt.wantCardPath || in.Source != catalog.SourceURL ||
					in.ReceivedAt.IsZero() || in.Card == nil || in.Card.Name != "Echo" ||
					!bytes.Equal(in.Card.Raw, []byte(testCard)) {
					t.Errorf("upsert input %+v", in)
				}
			}

			wantErr := tt.wantClass != "" || tt.wantIs != nil
			wantChecks := 1
			if wantErr {
				wantChecks = 0
			}
			if len(store.outcomes) != wantChecks {
				t.Errorf("%d checks recorded, want %d", len(store.outcomes), wantChecks)
			}
			if !wantErr {
				if err != nil {
					t.Fatal(err)
				}
				if !res.Created || res.Agent.ID != "agent-1" {
					t.Errorf("result %+v", res)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			if tt.wantClass != "" {
				var fe *FetchError
				if !errors.As(err, &fe) || fe.Class != tt.wantClass {
					t.Errorf("err = %v, want *FetchError of class %s", err, tt.wantClass)
				}
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.wantIs)
			}
			if tt.wantParse != "" {
				var pe *card.ParseError
				if !errors.As(err, &pe) || pe.Code != tt.wantParse {
					t.Errorf("err = %v, want *card.ParseError %s", err, tt.wantParse)
				}
			}
		})
	}
}

type recordingVerifier struct{ targets []catalog.VerifyTarget }

func (v *recordingVerifier) VerifyStored(_ context.Context, t catalog.VerifyTarget) error {
	v.targets = append(v.targets, t)
	return nil
}

// TestRegisterIsTheFirstCheck: a registration stores the card's
// validators and schedules the next check by its cache headers, so the
// crawler's first request is conditional and not at once (issue 10
// finding 12), and a new version is verified in the same step (13).
func TestRegisterIsTheFirstCheck(t *testing.T) {
	const lm = "Sun, 01 Mar 2026 10:00:00 GMT"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", lm)
		w.Header().Set("Cache-Control", "max-age=7200")
		w.Write([]byte(testCard))
	}))
	defer srv.Close()
	store := &fakeStore{}
	ver := &recordingVerifier{}
	r := NewRegistrar(newTestFetcher(0), store, card.Limits{}, nil).
		UsePolicy(Policy{MinInterval: time.Minute, Rand: func() float64 { return 0 }}).
		UseVerifier(ver)
	res, err := r.Register(t.Context(), catalog.System("test"), catalog.ScopeAll, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(store.calls) != 1 || store.calls[0].NextCheckAt.Sub(store.calls[0].ReceivedAt) < time.Hour {
		t.Errorf("upsert %+v: want the first check scheduled by max-age, not now", store.calls)
	}
	if len(store.outcomes) != 1 {
		t.Fatalf("%d checks recorded, want 1", len(store.outcomes))
	}
	o := store.outcomes[0]
	if o.ETag != `"v1"` || o.LastModified != lm || o.Class != "" || o.Health != catalog.HealthUp ||
		o.NextCheckAt.Sub(o.At) < time.Hour || o.AgentID != res.Agent.ID {
		t.Errorf("recorded check %+v: want validators, health up, next check in about 2h", o)
	}
	if len(ver.targets) != 1 || ver.targets[0].AgentID != res.Agent.ID || len(ver.targets[0].Raw) == 0 {
		t.Errorf("verified %+v, want the new version once", ver.targets)
	}
}
