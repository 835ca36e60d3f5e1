// Package catalog stores agent cards verbatim with an indexed, searchable view
// of them. It is the only package that knows about gorm and SQL: callers see
// domain types (Agent, Summary, Page) and sentinel errors.
//
// SQLite (WAL, busy timeout) is the embedded default; PostgreSQL is the
// scale-out path. Both run the same code except for a few dialect details
// (id allocation, advisory locks). Search is not done in SQL: the catalog
// feeds every committed write to the in-memory engine of internal/search,
// builds it from the database at start, and syncs it with what other
// replicas wrote (Store.Sync), deletions included.
package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/search"
	"github.com/a2aregistry/registry/migrations"
)

type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

// Config says where the catalog lives.
type Config struct {
	// DSN is "sqlite:PATH" (or a bare file path) for the embedded default,
	// or a "postgres://" / "postgresql://" URL.
	DSN    string
	Logger *slog.Logger
	// CardLimits bound the re-parsing of stored cards; zero means card.DefaultLimits.
	CardLimits card.Limits
	// Listing is how new and changed cards enter the listing lifecycle.
	Listing ListingPolicy
	// Embedder, when set, embeds searches' text for the semantic layer
	// (embeddings.go), whose rankings are fused as Fusion says.
	Embedder QueryEmbedder
	Fusion   search.Fusion
	// SecretKeys seal the secrets the catalog stores (seal.go): the first
	// seals, all open. None stores them as they are.
	SecretKeys [][]byte
}

// Store is the catalog. It is safe for concurrent use.
type Store struct {
	db      *gorm.DB
	sqlDB   *sql.DB
	dialect dialect
	log     *slog.Logger
	limits  card.Limits
	stmts   *stmtCache
	// seal seals and opens the stored secrets (seal.go).
	seal *sealer

	// index holds the in-memory search index (see index.go), built on
	// first search or WarmIndex so that `registry migrate` and imports do
	// not pay for it. Writes committed while it is built are applied at
	// once: the index keeps the newest seq of each agent whatever the
	// order. A failed build is replaced by an empty index for the retry.
	index atomic.Pointer[search.Index]
	// syncMu guards build, closed and syncedAt.
	syncMu sync.Mutex
	build  *indexBuild
	closed bool
	// loadMu lets one loadDocs run at a time: each holds three pooled
	// connections at once (three result sets merged), so a few concurrent
	// ones exhaust SQLite's pool of 8 and wait on each other for ever.
	loadMu   sync.Mutex
	syncedAt time.Time

	// listing is the ListingPolicy of writes.
	listing atomic.Pointer[ListingPolicy]
	// admission is the admission policy of writes (admission.go).
	admission atomic.Pointer[admissionBox]
	// restricted caches restrictedCollections; nil when not read yet.
	restricted atomic.Pointer[map[string][]string]
	// summaries keeps the result summaries searches read, by agent and
	// sequence (see loadSummaries).
	summaries *lru.Cache[int64, cachedSummary]

	embedder QueryEmbedder
	fusion   search.Fusion

	// indexGrace is indexGrace but for tests.
	indexGrace time.Duration

	// ctx ends when the Store is closed; wg counts the goroutines it
	// started (the index build), which Close waits for.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Open connects to the database. It does not migrate: call Migrate.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lim := cfg.CardLimits
	if lim == (card.Limits{}) {
		lim = card.DefaultLimits()
	}
	d, dsn, err := parseDSN(cfg.DSN)
	if err != nil {
		return nil, err
	}
	gcfg := &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		TranslateError:         true,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	}
	var dialector gorm.Dialector
	switch d {
	case dialectSQLite:
		dialector = sqlite.Open(dsn)
	case dialectPostgres:
		dialector = postgres.Open(dsn)
	}
	db, err := gorm.Open(dialector, gcfg)
	if err != nil {
		return nil, fmt.Errorf("opening catalog database: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("opening catalog database: %w", err)
	}
	if d == dialectSQLite {
		// One writer at a time is all SQLite allows; WAL lets readers run
		// beside it. _txlock=immediate takes the write lock at BEGIN so two
		// writers never deadlock upgrading a read lock.
		sqlDB.SetMaxOpenConns(8)
		sqlDB.SetMaxIdleConns(8)
	} else {
		sqlDB.SetMaxOpenConns(16)
		sqlDB.SetMaxIdleConns(16)
	}
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("connecting to catalog database: %w", err)
	}
	bg, cancel := context.WithCancel(context.Background())
	summaries, err := lru.New[int64, cachedSummary](summaryCacheSize)
	if err != nil {
		cancel()
		sqlDB.Close()
		return nil, fmt.Errorf("summary cache: %w", err)
	}
	s := &Store{db: db, sqlDB: sqlDB, dialect: d, log: log, limits: lim, indexGrace: indexGrace, ctx: bg, cancel: cancel,
		stmts: newStmtCache(sqlDB), summaries: summaries, embedder: cfg.Embedder, fusion: cfg.Fusion}
	if s.seal, err = newSealer(cfg.SecretKeys); err != nil {
		cancel()
		sqlDB.Close()
		return nil, err
	}
	s.index.Store(newSearchIndex())
	s.SetListingPolicy(cfg.Listing)
	return s, nil
}

// parseDSN tells the dialect of a DSN and turns a SQLite one into the
// driver's form with the pragmas the catalog relies on.
func parseDSN(dsn string) (dialect, string, error) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return dialectPostgres, dsn, nil
	case dsn == "":
		return 0, "", fmt.Errorf("catalog: empty database DSN")
	}
	path := strings.TrimPrefix(dsn, "sqlite:")
	path = strings.TrimPrefix(path, "//")
	if path == "" {
		return 0, "", fmt.Errorf("catalog: sqlite DSN %q has no file path", dsn)
	}
	if strings.Contains(path, "?") {
		return 0, "", fmt.Errorf("catalog: sqlite DSN %q: options are set by the registry, give only a path", dsn)
	}
	if path != ":memory:" {
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return 0, "", fmt.Errorf("catalog: creating directory for %s: %w", path, err)
			}
		}
	}
	q := "_journal_mode=WAL&_busy_timeout=10000&_foreign_keys=on&_synchronous=NORMAL&_txlock=immediate&_cache_size=-65536"
	return dialectSQLite, "file:" + path + "?" + q, nil
}

// stmtCtx is the context for the statements of one short call.
// mattn/go-sqlite3 runs every statement, and every row fetch, in a
// goroutine of its own when the context can be cancelled (SQLiteStmt.exec
// and SQLiteRows.Next in sqlite3.go): a crawl batch paid that for each of
// its statements and looked-up rows, the index build for each of its
// hundreds of thousands of rows. The catalog's SQLite statements are short
// (bounded batches, indexed lookups), so on SQLite they run under a
// context that cannot be cancelled; a caller checks ctx before, and a loop
// over many rows checks it as it goes. PostgreSQL keeps ctx.
func (s *Store) stmtCtx(ctx context.Context) context.Context {
	if s.dialect == dialectSQLite {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// Close stops the Store's background work (an index build under way),
// waits for it to end, and releases the database connections.
func (s *Store) Close() error {
	s.syncMu.Lock()
	s.closed = true
	s.syncMu.Unlock()
	s.cancel()
	s.wg.Wait()
	s.stmts.close()
	return s.sqlDB.Close()
}

// Dialect returns "sqlite" or "postgres".
func (s *Store) Dialect() string {
	if s.dialect == dialectPostgres {
		return "postgres"
	}
	return "sqlite"
}

// Migrate applies the pending SQL migrations from migrations/. On
// PostgreSQL a session advisory lock keeps concurrent replicas from
// migrating at the same time.
func (s *Store) Migrate(ctx context.Context) error {
	var (
		gd   goose.Dialect
		sub  string
		opts []goose.ProviderOption
	)
	switch s.dialect {
	case dialectSQLite:
		gd, sub = goose.DialectSQLite3, "sqlite"
	case dialectPostgres:
		gd, sub = goose.DialectPostgres, "postgres"
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return fmt.Errorf("migrating catalog: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	// 00004 is Go: see rekeyMigration.
	opts = append(opts, goose.WithGoMigrations(rekeyMigration(s.dialect, s.limits)))
	fsys, err := fs.Sub(migrations.FS, sub)
	if err != nil {
		return fmt.Errorf("migrating catalog: %w", err)
	}
	p, err := goose.NewProvider(gd, s.sqlDB, fsys, opts...)
	if err != nil {
		return fmt.Errorf("migrating catalog: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrating catalog: %w", err)
	}
	rekeyed := false
	for _, r := range results {
		s.log.Info("applied migration", "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
		rekeyed = rekeyed || r.Source.Version == rekeyVersion || r.Source.Version == rederiveVersion
	}
	if rekeyed {
		if err := s.rederive(ctx); err != nil {
			return fmt.Errorf("migrating catalog: %w", err)
		}
		s.log.Info("re-derived every agent's indexed view with this release's parser")
	}
	n, err := s.ResealSecrets(ctx)
	if err != nil {
		return fmt.Errorf("migrating catalog: %w", err)
	}
	if n > 0 {
		s.log.Info("sealed stored secrets with the current secret key", "secrets", n)
	}
	if err := s.analyzeUnanalyzed(ctx); err != nil {
		return fmt.Errorf("migrating catalog: %w", err)
	}
	return nil
}

// analyzeFromRows is the fewest rows a never-analyzed table holds for
// analyzeUnanalyzed to analyze it: below that, any plan is quick.
const analyzeFromRows = 1000

// analyzeUnanalyzed gives PostgreSQL's query planner statistics for the
// catalog's tables that hold rows but were never analyzed. Without them
// it guesses, and guesses badly for the background work's queries: over
// 100,000 agents the verifier's due query (agents joined with their
// current version and its verification, by recheck time) took 1.8 s a
// poll, a parallel scan of every agent with 200,000 index probes on both
// cores every few seconds, against 0.2 ms once analyzed, down the
// recheck_at index. Autovacuum analyzes tables as they fill; a server
// that runs without it, or a catalog just restored or loaded in bulk, has
// none until then. A table analyzed once (its reltuples is no longer -1)
// is left to autovacuum and the operator, so this runs once per table.
func (s *Store) analyzeUnanalyzed(ctx context.Context) error {
	if s.dialect != dialectPostgres {
		return nil
	}
	var tables []string
	if err := s.db.WithContext(ctx).Raw(`SELECT c.relname FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_stat_user_tables t ON t.relid = c.oid
		WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.reltuples < 0 AND t.n_live_tup >= ?
		ORDER BY c.relname`, analyzeFromRows).Scan(&tables).Error; err != nil {
		return fmt.Errorf("finding tables without planner statistics: %w", err)
	}
	for _, table := range tables {
		start := time.Now()
		if err := s.db.WithContext(ctx).Exec("ANALYZE " + pgx.Identifier{table}.Sanitize()).Error; err != nil {
			return fmt.Errorf("analyzing table %s: %w", table, err)
		}
		s.log.Info("analyzed a table that had no planner statistics", "table", table, "duration", time.Since(start))
	}
	return nil
}

// Count returns how many agents the catalog holds.
func (s *Store) Count(ctx context.Context) (int, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&agentRecord{}).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("counting agents: %w", err)
	}
	return int(n), nil
}

// translate maps gorm's errors onto the package's sentinels.
func translate(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrNotFound
	}
	return err
}

// translateRow maps database/sql's no-rows error onto ErrNotFound.
func translateRow(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
