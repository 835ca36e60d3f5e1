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
	gd, sub := goose.DialectSQLite3, "sqlite"
	if s.dialect == dialectPostgres {
		gd, sub = goose.DialectPostgres, "postgres"
	}
	fsys, err := fs.Sub(migrations.FS, sub)
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(gd, s.sqlDB, fsys, goose.WithGoMigrations(rekeyMigration(s.dialect, s.limits)))
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}

// ExecForTest runs one statement ("?" placeholders) on the catalog's
// database, for tests that fake rows an older release wrote.
func (s *Store) ExecForTest(ctx context.Context, q string, args ...any) error {
	return s.db.WithContext(ctx).Exec(q, args...).Error
}
