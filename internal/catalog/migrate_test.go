package catalog_test

import (
	"context"
	"database/sql"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/migrations"
)

// Migration 00006 moves the audit facet of existing agents from
// agent_facets to agents.audit_codes; the other facets are derived from the
// stored summary, so a catalog written under the old schema searches the
// same after the upgrade.
func TestMigrationMovesAuditCodes(t *testing.T) {
	for name, tc := range map[string]struct {
		dsn    func(testing.TB) string
		driver string
		dial   goose.Dialect
		sub    string
	}{
		"sqlite":   {catalogtest.SQLiteDSN, "sqlite3", goose.DialectSQLite3, "sqlite"},
		"postgres": {catalogtest.PostgresDSN, "pgx", goose.DialectPostgres, "postgres"},
	} {
		t.Run(name, func(t *testing.T) {
			dsn := tc.dsn(t)
			ctx := context.Background()
			raw := dsn
			if tc.sub == "sqlite" {
				raw = "file:" + strings.TrimPrefix(dsn, "sqlite:") + "?_foreign_keys=on"
			}
			db, err := sql.Open(tc.driver, raw)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			fsys, err := fs.Sub(migrations.FS, tc.sub)
			if err != nil {
				t.Fatal(err)
			}
			p, err := goose.NewProvider(tc.dial, db, fsys)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.UpTo(ctx, 3); err != nil {
				t.Fatal(err)
			}
			// One agent as the schema before 00006 stored it, with a legacy
			// summary and its facet rows.
			ph := func(q string) string {
				if tc.sub == "sqlite" {
					return q
				}
				n := 0
				var b strings.Builder
				for _, r := range q {
					if r == '?' {
						n++
						b.WriteString("$" + strconv.Itoa(n))
						continue
					}
					b.WriteRune(r)
				}
				return b.String()
			}
			now := time.Now().UTC()
			summary := `{"id":"","card_url":"","name":"Old","description":"stored before 00006","version":"1",` +
				`"protocol_versions":["0.3"],"bindings":["JSONRPC"],"security_schemes":[],"input_modes":["text/plain"],` +
				`"output_modes":["text/plain"],"skills":[{"id":"s","name":"S","tags":["legacy"]}],` +
				`"signature":"","health":"","updated_at":"0001-01-01T00:00:00Z"}`
			for _, st := range []struct {
				q    string
				args []any
			}{
				{`INSERT INTO agents (pk, id, card_url, name, description, shape, summary, signature_status, health,
					current_version, raw_sha256, seq, created_at, updated_at, fetched_at)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
					[]any{1, "old", "https://old.example/", "Old", "stored before 00006", "v0.3", summary,
						catalog.SignatureUnsigned, catalog.HealthUp, 1, "x", 1, now, now, now}},
				{`INSERT INTO card_versions (agent_pk, number, sha256, size, source, received_at, raw) VALUES (?, ?, ?, ?, ?, ?, ?)`,
					[]any{1, 1, "x", 2, "url", now, []byte("{}")}},
				{`INSERT INTO agent_facets (agent_pk, field, value) VALUES (?, 'audit', 'z_code'), (?, 'audit', 'a_code'),
					(?, 'tag', 'legacy'), (?, 'health', 'up')`, []any{1, 1, 1, 1}},
			} {
				if _, err := db.ExecContext(ctx, ph(st.q), st.args...); err != nil {
					t.Fatalf("%s: %v", st.q, err)
				}
			}

			s := catalogtest.Open(t, dsn) // migrates to the newest version
			for _, f := range []struct{ field, value string }{
				{catalog.FieldAudit, "a_code"}, {catalog.FieldAudit, "z_code"}, {catalog.FieldTag, "legacy"},
				{catalog.FieldSecurityScheme, "none"}, {catalog.FieldSignature, catalog.SignatureUnsigned},
			} {
				page, err := s.Search(ctx, catalog.Query{Filters: map[string][]string{f.field: {f.value}}})
				if err != nil {
					t.Fatal(err)
				}
				if page.Total != 1 || page.Items[0].ID != "old" || page.Items[0].Name != "Old" {
					t.Errorf("%s=%s after the migration: %+v", f.field, f.value, page)
				}
			}
			var tables int
			q := "SELECT COUNT(*) FROM sqlite_master WHERE name = 'agent_facets'"
			if tc.sub == "postgres" {
				q = "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'agent_facets' AND table_schema = current_schema()"
			}
			if err := db.QueryRowContext(ctx, q).Scan(&tables); err != nil || tables != 0 {
				t.Errorf("agent_facets still there (%d, %v)", tables, err)
			}
			page, err := s.Search(ctx, catalog.Query{})
			if err != nil {
				t.Fatal(err)
			}
			var audit []string
			for _, fc := range page.Facets[catalog.FieldAudit] {
				audit = append(audit, fc.Value)
			}
			if !slices.Equal(audit, []string{"a_code", "z_code"}) {
				t.Errorf("audit facet %v", audit)
			}

			// Down again: the facets no card holds come back.
			if err := s.MigrateDownTo(ctx, 3); err != nil {
				t.Fatalf("migrating down: %v", err)
			}
			var n int
			if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM agent_facets WHERE field = 'audit'").Scan(&n); err != nil || n != 2 {
				t.Errorf("audit rows after migrating down: %d, %v", n, err)
			}
		})
	}
}
