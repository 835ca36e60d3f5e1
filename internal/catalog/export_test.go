package catalog

import (
	"context"
	"io/fs"

	"github.com/pressly/goose/v3"

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
