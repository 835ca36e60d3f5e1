package catalog_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// TestMigrationRederivesCards: a catalog written by a release whose parser
// listed an agent with an undeclared requirement as anonymous searches as
// this release's parser says once migration 00019 runs.
func TestMigrationRederivesCards(t *testing.T) {
	for name, tc := range map[string]struct {
		dsn    func(testing.TB) string
		driver string
		raw    func(dsn string) string
	}{
		"sqlite": {catalogtest.SQLiteDSN, "sqlite3", func(dsn string) string {
			return "file:" + filepath.Clean(strings.TrimPrefix(dsn, "sqlite:")) + "?_foreign_keys=on"
		}},
		"postgres": {catalogtest.PostgresDSN, "pgx", func(dsn string) string { return dsn }},
	} {
		t.Run(name, func(t *testing.T) {
			dsn := tc.dsn(t)
			ctx := context.Background()
			raw := []byte(`{"name":"Ledger","description":"d","version":"1","protocolVersion":"0.3.0",
				"url":"https://ledger.example.com/a2a","preferredTransport":"JSONRPC","security":[{"bearerAuth":[]}],
				"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
				"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`)
			c, err := card.Parse(raw, card.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			s := catalogtest.OpenCold(t, dsn)
			if _, err := s.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: "https://ledger.example.com/.well-known/agent-card.json",
				Card: c, Source: catalog.SourceURL, ReceivedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			// The schema of a release before 00019 (later migrations too
			// go back, so that 00019 runs again).
			if err := s.MigrateDownTo(ctx, 18); err != nil {
				t.Fatal(err)
			}
			s.Close()

			// What an older release stored: no scheme type, so "none".
			db, err := sql.Open(tc.driver, tc.raw(dsn))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, q := range []string{
				`UPDATE agents SET summary = REPLACE(summary, '"security_schemes":["undeclared"]', '"security_schemes":[]')`,
			} {
				res, err := db.ExecContext(ctx, q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if n, _ := res.RowsAffected(); n != 1 {
					t.Fatalf("%s: %d rows", q, n)
				}
			}

			s = catalogtest.Open(t, dsn) // applies 00019
			for value, want := range map[string]int{card.SchemeUndeclared: 1, "none": 0} {
				page, err := s.Search(ctx, catalog.Query{Filters: map[string][]string{catalog.FieldSecurityScheme: {value}}})
				if err != nil {
					t.Fatal(err)
				}
				if page.Total != want {
					t.Errorf("security_scheme=%s finds %d agents after the migration, want %d", value, page.Total, want)
				}
			}
		})
	}
}
