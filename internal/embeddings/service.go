package embeddings

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/a2aregistry/registry/internal/catalog"
)

// Defaults of Config.
const (
	DefaultBatchSize    = 32
	DefaultTimeout      = 30 * time.Second
	DefaultQueryTimeout = time.Second
	// queryCacheSize is how many searches' vectors are remembered.
	queryCacheSize = 1024
	// workPage is how many agents the worker reads at once.
	workPage = 256
	// idlePoll is how often the worker looks for new versions once it has
	// caught up.
	idlePoll = 3 * time.Second
	// Backoff after a failed batch: doubling from minBackoff to maxBackoff,
	// with up to half of it added at random so replicas do not retry in
	// step.
	minBackoff = time.Second
	maxBackoff = 5 * time.Minute
)

// Config tunes a Service.
type Config struct {
	BatchSize    int
	Timeout      time.Duration
	QueryTimeout time.Duration
	// QueryPrefix and DocumentPrefix are put before a search's text and
	// an agent's text in what is sent to the API: many models are trained
	// with an instruction telling the two apart (e5: "query: " and
	// "passage: "; nomic-embed-text: "search_query: " and
	// "search_document: ").
	QueryPrefix, DocumentPrefix string
	Log                         *slog.Logger
}

// Store is the catalog as the worker uses it; *catalog.Store implements it.
type Store interface {
	WarmIndex(ctx context.Context) error
	EmbeddingWork(ctx context.Context, space string, dim int, afterSeq int64, limit int) ([]catalog.EmbedJob, int64, error)
	StoreEmbeddings(ctx context.Context, space string, dim int, es []catalog.Embedding) error
	UseEmbeddings(space string, dim int, es []catalog.Embedding)
}

// Service embeds searches' text (catalog.QueryEmbedder) and, in Run,
// every agent's; it keeps the semantic layer's state.
type Service struct {
	client *Client
	cfg    Config
	log    *slog.Logger
	cache  *lru.Cache[string, []float32]
	// sleep waits between retries; a variable for tests.
	sleep func(ctx context.Context, d time.Duration) bool

	mu        sync.Mutex
	lastErr   string
	lastErrAt time.Time
	lastOKAt  time.Time

	agentsOK, agentsFailed, queriesOK, queriesFailed atomic.Int64
}

// New returns a Service over client.
func New(client *Client, cfg Config) *Service {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cache, _ := lru.New[string, []float32](queryCacheSize) // only a size ≤ 0 fails
	return &Service{client: client, cfg: cfg, log: log, cache: cache, sleep: sleepCtx}
}

// Space names the vectors agents' texts are embedded into: the model,
// and the document prefix when there is one, for the same model with
// another prefix makes other vectors. The catalog keeps vectors per
// space and dimension, and an index holds one space's only, so changing
// the prefix re-embeds every agent as changing the model does
// (catalog.QueryEmbedder).
func (s *Service) Space() string { return spaceOf(s.client.Model(), s.cfg.DocumentPrefix) }

// Dimension is the length of the vectors (catalog.QueryEmbedder).
func (s *Service) Dimension() int { return s.client.Dimension() }

// spaceOf is the space of model's vectors of texts after prefix: the
// model's name alone without one (so vectors stored before prefixes
// existed stay in use), else the name and the prefix on two lines (a
// model's name has no line break: config refuses one).
func spaceOf(model, prefix string) string {
	if prefix == "" {
		return model
	}
	return model + "\n" + prefix
}

// EmbedQuery returns the vector of a search's text, from the cache or
// the API within the query timeout. Its error says why in words a
// searcher may read (catalog.QueryEmbedder).
func (s *Service) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if v, ok := s.cache.Get(text); ok {
		return v, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	vs, err := s.client.Embed(ctx, []string{s.cfg.QueryPrefix + text})
	if err != nil {
		s.queriesFailed.Add(1)
		s.failed(err)
		return nil, err
	}
	s.queriesOK.Add(1)
	s.succeeded()
	s.cache.Add(text, vs[0])
	return vs[0], nil
}

func (s *Service) failed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr, s.lastErrAt = errorText(err), time.Now()
}

func (s *Service) succeeded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastOKAt = time.Now()
}

// errorText is what an error may show: an *Error's words, or a generic
// sentence for the catalog's own errors (which the log has in full).
func errorText(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Error()
	}
	return "storing or reading vectors failed (see the log)"
}

// State is the semantic layer as /readyz, the metrics and the console
// show it.
type State struct {
	Model     string
	Dimension int
	// Embedded and Agents are the agents with a vector of this model and
	// the agents in the index (this process's).
	Embedded, Agents int
	VectorBytes      int
	// LastError is the last failure and when; Degraded is set while no
	// request has succeeded since.
	LastError   string
	LastErrorAt time.Time
	Degraded    bool
	// Requests to the API by kind and outcome.
	AgentsOK, AgentsFailed, QueriesOK, QueriesFailed int64
}

// State reports the semantic layer's state, with the index's coverage.
func (s *Service) State(cov catalog.EmbeddingCoverage) State {
	s.mu.Lock()
	st := State{Model: s.client.Model(), Dimension: s.client.Dimension(), LastError: s.lastErr, LastErrorAt: s.lastErrAt,
		Degraded: s.lastErr != "" && !s.lastErrAt.Before(s.lastOKAt)}
	s.mu.Unlock()
	st.Agents = cov.Agents
	if cov.Model == s.Space() && cov.Dimension == st.Dimension {
		st.Embedded, st.VectorBytes = cov.Embedded, cov.Bytes
	}
	st.AgentsOK, st.AgentsFailed = s.agentsOK.Load(), s.agentsFailed.Load()
	st.QueriesOK, st.QueriesFailed = s.queriesOK.Load(), s.queriesFailed.Load()
	return st
}

// Run embeds every agent's text that has no vector of this space and
// dimension, then follows new versions, until ctx ends. It walks the
// catalog in seq order: vectors stored already (by another replica, or
// before a restart) are put in the index without asking the API, and
// those the index build loaded are passed over. A
// failed batch is tried again after a backoff; nothing is skipped.
func (s *Service) Run(ctx context.Context, store Store) {
	space, dim := s.Space(), s.client.Dimension()
	backoff := time.Duration(0)
	wait := func() bool {
		backoff = min(max(2*backoff, minBackoff), maxBackoff)
		return s.sleep(ctx, backoff+rand.N(backoff/2+1))
	}
	for {
		if err := store.WarmIndex(ctx); err == nil {
			break
		} else if ctx.Err() != nil {
			return
		}
		if !wait() {
			return
		}
	}
	backoff = 0
	var after int64
	for {
		jobs, last, err := store.EmbeddingWork(ctx, space, dim, after, workPage)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Error("reading agents to embed", "err", err)
			s.failed(err)
			if !wait() {
				return
			}
			continue
		}
		if len(jobs) == 0 {
			// A page of agents whose vectors the index holds already
			// (loaded with the index) goes on at once; only the end of
			// the catalog waits for new versions.
			if last == after && !s.sleep(ctx, idlePoll) {
				return
			}
			after = last
			continue
		}
		if err := s.embedPage(ctx, store, jobs); err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("embedding agents", "err", err, "retry_in", min(max(2*backoff, minBackoff), maxBackoff))
			// The page is read again: what was stored meanwhile comes
			// back as stored, the rest is tried again.
			if !wait() {
				return
			}
			continue
		}
		backoff = 0
		after = last
	}
}

// embedPage uses the stored vectors of jobs and embeds and stores the
// others, a batch at a time.
func (s *Service) embedPage(ctx context.Context, store Store, jobs []catalog.EmbedJob) error {
	space, dim := s.Space(), s.client.Dimension()
	var stored []catalog.Embedding
	var todo []catalog.EmbedJob
	for _, j := range jobs {
		if j.Stored != nil {
			stored = append(stored, catalog.Embedding{PK: j.PK, Seq: j.Seq, TextSHA256: j.TextSHA256, Vector: j.Stored})
		} else {
			todo = append(todo, j)
		}
	}
	store.UseEmbeddings(space, dim, stored)
	for start := 0; start < len(todo); start += s.cfg.BatchSize {
		batch := todo[start:min(start+s.cfg.BatchSize, len(todo))]
		texts := make([]string, len(batch))
		for i, j := range batch {
			texts[i] = s.cfg.DocumentPrefix + j.Text
		}
		bctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
		vs, err := s.client.Embed(bctx, texts)
		cancel()
		if err != nil {
			s.agentsFailed.Add(1)
			s.failed(err)
			return err
		}
		s.agentsOK.Add(1)
		es := make([]catalog.Embedding, len(batch))
		for i, j := range batch {
			es[i] = catalog.Embedding{PK: j.PK, Seq: j.Seq, TextSHA256: j.TextSHA256, Vector: vs[i]}
		}
		if err := store.StoreEmbeddings(ctx, space, dim, es); err != nil {
			s.failed(err)
			return err
		}
		s.succeeded()
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
