package embeddings

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/embeddings/embeddingstest"
	"github.com/a2aregistry/registry/internal/safehttp"
)

func newFakeAPI(t *testing.T, dim int) (*embeddingstest.Server, string) {
	t.Helper()
	f := embeddingstest.New(dim)
	t.Cleanup(f.Close)
	return f, f.BaseURL()
}

func loopbackClient() *safehttp.Client {
	return safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Timeout: -1, MaxRedirects: -1})
}

func TestEmbed(t *testing.T) {
	f, base := newFakeAPI(t, 16)
	c := NewClient(loopbackClient(), ClientConfig{URL: base + "/", Model: "hash-16", Dimension: 16, Key: "sk-secret"})
	vs, err := c.Embed(context.Background(), []string{"book a train", "read invoices"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || len(vs[0]) != 16 {
		t.Fatalf("got %d vectors", len(vs))
	}
	want := embeddingstest.Vector("book a train", 16)
	var dot, norm float64
	for i := range want {
		dot += want[i] * float64(vs[0][i])
		norm += want[i] * want[i]
	}
	if dot*dot < 0.999*norm {
		t.Fatalf("vector 0 is not the first text's (placed by index)")
	}
	if models, auth := f.Seen(); models[0] != "hash-16" || auth[0] != "Bearer sk-secret" {
		t.Fatalf("request model %q auth %q", models[0], auth[0])
	}

	tests := []struct {
		name  string
		setup func()
		ctx   func() (context.Context, context.CancelFunc)
		kind  string
	}{
		{name: "down", setup: func() { f.Down.Store(true) }, kind: KindStatus},
		{name: "wrong dimension", setup: func() { f.Dim.Store(8) }, kind: KindDimension},
		{name: "slow", setup: func() { f.Delay.Store(int64(300 * time.Millisecond)) }, kind: KindTimeout,
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 50*time.Millisecond)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.Down.Store(false)
			f.Dim.Store(16)
			f.Delay.Store(0)
			tt.setup()
			ctx, cancel := context.Background(), func() {}
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			_, err := c.Embed(ctx, []string{"x"})
			e, ok := errors.AsType[*Error](err)
			if !ok || e.Kind != tt.kind {
				t.Fatalf("err = %v, want kind %s", err, tt.kind)
			}
			if strings.Contains(err.Error(), base) || strings.Contains(err.Error(), "sk-secret") {
				t.Fatalf("error %q names the URL or the key", err)
			}
		})
	}
	f.Down.Store(false)
	f.Dim.Store(16)
	f.Delay.Store(0)

	// Without the allow-list the loopback server is never reached.
	guarded := NewClient(safehttp.New(safehttp.Config{}), ClientConfig{URL: base, Model: "m", Dimension: 16})
	before := f.Requests.Load()
	_, err = guarded.Embed(context.Background(), []string{"x"})
	if e, ok := errors.AsType[*Error](err); !ok || e.Kind != KindUnreachable || f.Requests.Load() != before {
		t.Fatalf("loopback without allow-networks: err = %v, requests %d→%d", err, before, f.Requests.Load())
	}
}

func TestEmbedQueryCachesAndDegrades(t *testing.T) {
	f, base := newFakeAPI(t, 16)
	// The timeout is generous: a loaded machine can take a good part of a
	// second over a loopback request, and the answers that must come in
	// time would then fail. The slow API holds its answer until the
	// request is given up, so only the timeout ends that call.
	const timeout = 2 * time.Second
	s := New(NewClient(loopbackClient(), ClientConfig{URL: base, Model: "m", Dimension: 16}),
		Config{QueryTimeout: timeout})
	ctx := context.Background()
	if _, err := s.EmbedQuery(ctx, "book a train"); err != nil {
		t.Fatal(err)
	}
	n := f.Requests.Load()
	if _, err := s.EmbedQuery(ctx, "book a train"); err != nil || f.Requests.Load() != n {
		t.Fatalf("a repeated query asked the API again (err %v)", err)
	}
	f.Delay.Store(int64(time.Hour))
	if _, err := s.EmbedQuery(ctx, "something slow"); err == nil {
		t.Fatal("a slow API did not time out")
	} else if e, ok := errors.AsType[*Error](err); !ok || e.Kind != KindTimeout {
		t.Fatalf("a slow API: %v, want kind %s", err, KindTimeout)
	}
	st := s.State(catalog.EmbeddingCoverage{})
	if !st.Degraded || st.LastError == "" || st.QueriesFailed != 1 || st.QueriesOK != 1 {
		t.Fatalf("state = %+v", st)
	}
	f.Delay.Store(0)
	if _, err := s.EmbedQuery(ctx, "fast again"); err != nil {
		t.Fatal(err)
	}
	if st := s.State(catalog.EmbeddingCoverage{}); st.Degraded {
		t.Fatalf("still degraded after a success: %+v", st)
	}
}

// TestRun embeds a catalog in the background on both databases: every
// agent, again after a new model, never twice for the same text, and
// through an API that is down for a while.
func TestRun(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		f, base := newFakeAPI(t, 16)
		ctx := context.Background()
		for _, name := range []string{"Train Booker", "Invoice Reader", "Weather Now"} {
			register(t, store, name)
		}
		run := func(model string) (*Service, func()) {
			s := New(NewClient(loopbackClient(), ClientConfig{URL: base, Model: model, Dimension: 16}), Config{BatchSize: 2})
			s.sleep = func(ctx context.Context, d time.Duration) bool { return sleepCtx(ctx, time.Millisecond) }
			rctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); s.Run(rctx, store) }()
			return s, func() { cancel(); <-done }
		}
		waitCoverage := func(s *Service, want int) {
			t.Helper()
			deadline := time.Now().Add(10 * time.Second)
			for {
				st := s.State(store.EmbeddingCoverage())
				if st.Embedded == want {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("coverage stuck at %+v, want %d", st, want)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		f.Down.Store(true)
		s, stop := run("m1")
		deadline := time.Now().Add(10 * time.Second)
		for s.State(catalog.EmbeddingCoverage{}).LastError == "" {
			if time.Now().After(deadline) {
				t.Fatal("no error recorded while the API is down")
			}
			time.Sleep(5 * time.Millisecond)
		}
		f.Down.Store(false)
		waitCoverage(s, 3)
		register(t, store, "Ticket Printer")
		waitCoverage(s, 4)
		stop()
		n := f.Requests.Load()

		// A restart finds every vector stored: nothing is asked again.
		s, stop = run("m1")
		waitCoverage(s, 4)
		time.Sleep(20 * time.Millisecond)
		stop()
		if f.Requests.Load() != n {
			t.Fatalf("a restart asked the API again: %d → %d requests", n, f.Requests.Load())
		}
		// Another model embeds everything again.
		s, stop = run("m2")
		waitCoverage(s, 4)
		stop()
		if f.Requests.Load() == n {
			t.Fatal("a new model was not embedded")
		}
	})
}

// TestPrefixes holds the instruction prefixes: each text goes to the API
// after its prefix, and another document prefix re-embeds every agent
// while going back to one used before finds its vectors stored.
func TestPrefixes(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		f, base := newFakeAPI(t, 16)
		ctx := context.Background()
		for _, name := range []string{"Train Booker", "Invoice Reader"} {
			register(t, store, name)
		}
		// embedAll runs a service with the prefixes until both agents are
		// embedded and returns the texts it sent.
		embedAll := func(queryPrefix, docPrefix string) (*Service, []string) {
			t.Helper()
			sent := len(f.Inputs())
			s := New(NewClient(loopbackClient(), ClientConfig{URL: base, Model: "m", Dimension: 16}),
				Config{QueryPrefix: queryPrefix, DocumentPrefix: docPrefix})
			rctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); s.Run(rctx, store) }()
			defer func() { cancel(); <-done }()
			deadline := time.Now().Add(10 * time.Second)
			for s.State(store.EmbeddingCoverage()).Embedded != 2 {
				if time.Now().After(deadline) {
					t.Fatalf("coverage stuck at %+v", s.State(store.EmbeddingCoverage()))
				}
				time.Sleep(5 * time.Millisecond)
			}
			return s, f.Inputs()[sent:]
		}
		checkSent := func(sent []string, prefix string, n int) {
			t.Helper()
			if len(sent) != n {
				t.Fatalf("sent %q, want %d texts", sent, n)
			}
			for _, text := range sent {
				if !strings.HasPrefix(text, prefix) {
					t.Fatalf("sent %q, want it after %q", text, prefix)
				}
			}
		}
		s, sent := embedAll("query: ", "passage: ")
		checkSent(sent, "passage: ", 2)
		if _, err := s.EmbedQuery(ctx, "book a train"); err != nil {
			t.Fatal(err)
		}
		if in := f.Inputs(); in[len(in)-1] != "query: book a train" {
			t.Fatalf("a search sent %q", in[len(in)-1])
		}
		_, sent = embedAll("", "")
		checkSent(sent, "", 2)
		for _, text := range sent {
			if strings.HasPrefix(text, "passage: ") {
				t.Fatalf("without a prefix sent %q", text)
			}
		}
		_, sent = embedAll("query: ", "passage: ")
		checkSent(sent, "passage: ", 0)
	})
}

func register(t *testing.T, s *catalog.Store, name string) {
	t.Helper()
	raw := `{"name": "` + name + `", "description": "` + name + ` for everyone.",
  "supportedInterfaces": [{"url": "https://` + strings.ReplaceAll(strings.ToLower(name), " ", "-") + `.example.org/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
  "version": "1.0.0", "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
  "skills": [{"id": "main", "name": "` + name + `", "description": "Does it.", "tags": ["x"]}]}`
	c, err := card.Parse([]byte(raw), card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Upsert(context.Background(), catalog.System("test"), catalog.UpsertInput{
		CardURL: "https://" + strings.ReplaceAll(strings.ToLower(name), " ", "-") + ".example.org/.well-known/agent-card.json",
		Card:    c, Source: catalog.SourceURL, ReceivedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

// TestRunAfterRestart restarts serve's catalog and worker over vectors
// all stored but one agent's, registered while it was down: the index
// build loads the stored ones, and the worker sends the API that agent's
// text alone.
func TestRunAfterRestart(t *testing.T) {
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", catalogtest.SQLiteDSN}, {"postgres", catalogtest.PostgresDSN}} {
		t.Run(db.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := db.dsn(t)
			f, base := newFakeAPI(t, 16)
			newService := func() *Service {
				s := New(NewClient(loopbackClient(), ClientConfig{URL: base, Model: "m1", Dimension: 16}), Config{BatchSize: 2})
				s.sleep = func(ctx context.Context, d time.Duration) bool { return sleepCtx(ctx, time.Millisecond) }
				return s
			}
			open := func(svc *Service) *catalog.Store {
				store, err := catalog.Open(ctx, catalog.Config{DSN: dsn, Embedder: svc})
				if err != nil {
					t.Fatal(err)
				}
				if err := store.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
				return store
			}
			runUntil := func(svc *Service, store *catalog.Store, want int) {
				t.Helper()
				rctx, cancel := context.WithCancel(ctx)
				done := make(chan struct{})
				go func() { defer close(done); svc.Run(rctx, store) }()
				defer func() { cancel(); <-done }()
				deadline := time.Now().Add(10 * time.Second)
				for svc.State(store.EmbeddingCoverage()).Embedded != want {
					if time.Now().After(deadline) {
						t.Fatalf("coverage stuck at %+v, want %d", svc.State(store.EmbeddingCoverage()), want)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}

			svc := newService()
			store := open(svc)
			for _, name := range []string{"Train Booker", "Invoice Reader", "Weather Now"} {
				register(t, store, name)
			}
			runUntil(svc, store, 3)
			store.Close()
			down := catalogtest.Open(t, dsn)
			register(t, down, "Ticket Printer")
			down.Close()
			sent := len(f.Inputs())

			svc = newService()
			store = open(svc)
			t.Cleanup(func() { store.Close() })
			if err := store.WarmIndex(ctx); err != nil {
				t.Fatal(err)
			}
			if st := svc.State(store.EmbeddingCoverage()); st.Embedded != 3 || st.Agents != 4 {
				t.Fatalf("after the index build: %d of %d agents embedded, want the 3 stored", st.Embedded, st.Agents)
			}
			runUntil(svc, store, 4)
			if in := f.Inputs()[sent:]; len(in) != 1 || !strings.Contains(in[0], "Ticket Printer") {
				t.Fatalf("after the restart the API was sent %q, want the new agent's text alone", in)
			}
		})
	}
}
