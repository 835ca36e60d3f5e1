package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/a2aregistry/registry/migrations"
)

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("pinging catalog database: %w", err)
	}
	return nil
}

// SchemaVersion reports the migration version the database is at and the
// highest one this binary embeds (SQL files and the Go migration alike).
// They differ when the database was never migrated by this release or
// was migrated by a newer one, which a replica must not serve from.
func (s *Store) SchemaVersion(ctx context.Context) (have, want int64, err error) {
	gd, sub := goose.DialectSQLite3, "sqlite"
	if s.dialect == dialectPostgres {
		gd, sub = goose.DialectPostgres, "postgres"
	}
	fsys, err := fs.Sub(migrations.FS, sub)
	if err != nil {
		return 0, 0, fmt.Errorf("reading schema version: %w", err)
	}
	p, err := goose.NewProvider(gd, s.sqlDB, fsys, goose.WithGoMigrations(rekeyMigration(s.dialect, s.limits)))
	if err != nil {
		return 0, 0, fmt.Errorf("reading schema version: %w", err)
	}
	// GetVersions reads the database's highest applied version and the
	// highest source; Close would close s.sqlDB, which the store owns.
	have, want, err = p.GetVersions(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("reading schema version: %w", err)
	}
	return have, want, nil
}

// DBStats reports the connection pool's statistics.
func (s *Store) DBStats() sql.DBStats { return s.sqlDB.Stats() }

// CrawlQueue is the crawl work waiting at one moment.
type CrawlQueue struct {
	// Due counts the agents whose check is due and that no replica holds
	// a live lease on.
	Due int
	// OldestDue is the scheduled time of the most overdue of them; zero
	// when none is due. Now minus OldestDue is how far the crawl lags
	// behind its schedule.
	OldestDue time.Time
}

// CrawlQueue reports the agents due at now and not leased.
func (s *Store) CrawlQueue(ctx context.Context, now time.Time) (CrawlQueue, error) {
	now = now.UTC()
	var row struct {
		N      int
		Oldest *string
	}
	// The oldest time comes back as text on SQLite (an aggregate loses the
	// column's type there), so it is read as text on both and parsed.
	q := `SELECT COUNT(*) AS n, CAST(MIN(next_check_at) AS TEXT) AS oldest FROM crawl_state
		WHERE paused = ? AND next_check_at <= ? AND (lease_until IS NULL OR lease_until < ?) AND ` + notRemoved
	if err := s.db.WithContext(ctx).Raw(q, false, now, now).Scan(&row).Error; err != nil {
		return CrawlQueue{}, fmt.Errorf("reading crawl queue: %w", err)
	}
	out := CrawlQueue{Due: row.N}
	if row.Oldest != nil {
		t, err := parseDBTime(*row.Oldest)
		if err != nil {
			return CrawlQueue{}, fmt.Errorf("reading crawl queue: %w", err)
		}
		out.OldestDue = t
	}
	return out, nil
}

// dbTimeLayouts are the text forms of a timestamp: SQLite's driver writes
// Go's layout, PostgreSQL casts timestamptz to its own.
var dbTimeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999-07",
	time.RFC3339Nano,
}

func parseDBTime(v string) (time.Time, error) {
	for _, l := range dbTimeLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("unrecognised timestamp %q", v)
}

// FailingHost is a host whose agents' last checks failed.
type FailingHost struct {
	Host string
	// Agents counts its agents whose last check failed.
	Agents int
	// LastErrorClass and LastErrorAt are those of its most recent failure.
	LastErrorClass string
	LastErrorAt    time.Time
}

// maxFailingScan bounds the failing agents FailingHosts reads: enough to
// name the hosts worth an operator's look, without reading a catalog whose
// whole crawl is failing (a network outage) into memory.
const maxFailingScan = 10_000

// FailingHosts lists the hosts of agents whose last check failed, most
// recently failed first, at most limit. Hosts are grouped here rather than
// in SQL: card URLs are stored whole, and the two databases split URLs
// differently.
func (s *Store) FailingHosts(ctx context.Context, limit int) ([]FailingHost, error) {
	rows, err := s.db.WithContext(ctx).Raw(`SELECT a.card_url, cs.last_error_class, cs.last_error_at
		FROM crawl_state cs JOIN agents a ON a.pk = cs.agent_pk
		WHERE cs.consecutive_failures > 0 AND cs.last_error_at IS NOT NULL AND a.removed_at IS NULL
		ORDER BY cs.last_error_at DESC LIMIT ?`, maxFailingScan).Rows()
	if err != nil {
		return nil, fmt.Errorf("reading failing agents: %w", err)
	}
	defer rows.Close()
	var out []FailingHost
	at := map[string]int{}
	for rows.Next() {
		var (
			cardURL, class string
			when           time.Time
		)
		if err := rows.Scan(&cardURL, &class, &when); err != nil {
			return nil, fmt.Errorf("reading failing agents: %w", err)
		}
		host := cardURL
		if u, err := url.Parse(cardURL); err == nil && u.Host != "" {
			host = u.Host
		}
		if i, ok := at[host]; ok {
			out[i].Agents++
			continue
		}
		at[host] = len(out)
		out = append(out, FailingHost{Host: host, Agents: 1, LastErrorClass: class, LastErrorAt: when.UTC()})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading failing agents: %w", err)
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
