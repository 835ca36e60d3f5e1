package catalog

import (
	"context"
	"io/fs"
	"time"

	"github.com/pressly/goose/v3"
	"gorm.io/gorm"

	"github.com/a2aregistry/registry/migrations"
)

// MigrateUpTo applies the migrations up to version only, so that a test can
// build a catalog of an older shape and then Migrate it.
func (s *Store) MigrateUpTo(ctx context.Context, version int64) error {
	p, err := s.testProvider()
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}

// MigrateDownTo rolls the migrations back to version, so that a test can
// write rows with this release's code and then turn them into a catalog of
// an older shape.
func (s *Store) MigrateDownTo(ctx context.Context, version int64) error {
	p, err := s.testProvider()
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, version)
	return err
}

func (s *Store) testProvider() (*goose.Provider, error) {
	gd, sub := goose.DialectSQLite3, "sqlite"
	if s.dialect == dialectPostgres {
		gd, sub = goose.DialectPostgres, "postgres"
	}
	fsys, err := fs.Sub(migrations.FS, sub)
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(gd, s.sqlDB, fsys, goose.WithGoMigrations(rekeyMigration(s.dialect, s.limits)))
}

// ExecForTest runs one statement ("?" placeholders) on the catalog's
// database, for tests that fake rows an older release wrote.
func (s *Store) ExecForTest(ctx context.Context, q string, args ...any) error {
	return s.db.WithContext(ctx).Exec(q, args...).Error
}

// AgentViewComposed is AgentView as it was before it became one statement:
// one read transaction composing the single-purpose reads. The
// differential test holds AgentView to it.
func (s *Store) AgentViewComposed(ctx context.Context, sc Scope, id string, now time.Time) (AgentView, error) {
	var v AgentView
	err := s.read(ctx, func(db *gorm.DB) error {
		var (
			pk  int64
			err error
		)
		if v.Agent, pk, err = agentWhere(db, s.limits, sc, "id = ?", id); err != nil {
			return err
		}
		if v.Versions, err = versionsOf(db, id, pk); err != nil {
			return err
		}
		if v.Health, err = agentHealth(db, id, now); err != nil {
			return err
		}
		if v.Verification, err = verificationOf(db, id); err != nil {
			return err
		}
		v.Annotations, err = annotationOfURL(db, v.Agent.CardURL)
		return err
	})
	if err != nil {
		return AgentView{}, err
	}
	return v, nil
}

// annotationOfURL reads one card URL's annotations; the zero value when
// it has none.
func annotationOfURL(db *gorm.DB, cardURL string) (Annotations, error) {
	m, err := annotationsOf(db, []string{cardURL})
	if err != nil {
		return Annotations{}, err
	}
	return m[cardURL], nil
}

// RawStrings runs a query of one text column on the store's database as
// it is, for tests that read what is stored.
func (s *Store) RawStrings(ctx context.Context, q string, args ...any) ([]string, error) {
	var out []string
	err := s.db.WithContext(ctx).Raw(q, args...).Scan(&out).Error
	return out, err
}

// RawExec runs a statement on the store's database as it is.
func (s *Store) RawExec(ctx context.Context, q string, args ...any) error {
	return s.db.WithContext(ctx).Exec(q, args...).Error
}

// TransactRetrying runs fn as the crawler's and verifier's batches run
// (transactRetrying), fn executing statements in the transaction.
func (s *Store) TransactRetrying(ctx context.Context, fn func(exec func(query string, args ...any) error) error) error {
	return s.transactRetrying(ctx, func(tx *txn) error {
		return fn(func(q string, args ...any) error { return tx.Exec(q, args...).Error })
	})
}
