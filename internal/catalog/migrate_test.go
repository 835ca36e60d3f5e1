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

// Migration 00027 fills agents.finding_severities from the stored report
// of each agent's current card version (security and content findings),
// so the severity filter finds agents verified before the upgrade; a
// report on an older version, a report without findings and a severity
// the registry does not know add nothing.
func TestMigrationFillsFindingSeverities(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dsn := dsn(t)
			s := catalogtest.Open(t, dsn)
			now := time.Now()
			record := func(id string, version int, report string) {
				t.Helper()
				if err := s.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: id, Version: version,
					Status: catalog.SignatureUnsigned, Report: []byte(report), VerifiedAt: now, RecheckAt: now.Add(time.Hour)}}); err != nil {
					t.Fatal(err)
				}
			}
			mixed := upsert(t, s, "https://mixed.example/.well-known/agent-card.json", v10Card).Agent.ID
			record(mixed, 1, `{"security_findings": [{"code": "no_security", "severity": "warning"}, {"code": "invalid_scheme", "severity": "error"}],
				"content_findings": [{"code": "content_foreign_link", "severity": "info"}, {"code": "content_zero_width", "severity": "warning"}]}`)
			odd := upsert(t, s, "https://odd.example/.well-known/agent-card.json", v03Card).Agent.ID
			record(odd, 1, `{"security_findings": [{"code": "x", "severity": "fatal"}, {"code": "y", "severity": "warning"}], "content_findings": null}`)
			clean := upsert(t, s, "https://clean.example/.well-known/agent-card.json", v02Card).Agent.ID
			record(clean, 1, `{}`)
			// The report is on version 1; version 2, current, is not verified yet.
			moved := upsert(t, s, "https://moved.example/.well-known/agent-card.json", v10Card).Agent.ID
			record(moved, 1, `{"security_findings": [{"code": "invalid_scheme", "severity": "error"}]}`)
			if res := upsert(t, s, "https://moved.example/.well-known/agent-card.json", strings.Replace(v10Card, "1.0.0", "1.0.1", 1)); !res.NewVersion {
				t.Fatalf("second card of %s stored no new version: %+v", moved, res)
			}

			if err := s.MigrateDownTo(ctx, 26); err != nil {
				t.Fatalf("migrating down: %v", err)
			}
			s = catalogtest.Open(t, dsn) // up again: 00027 fills the column
			for sev, want := range map[string][]string{"error": {mixed}, "warning": {mixed, odd}, "info": {mixed}} {
				page, err := s.Search(ctx, catalog.Query{Filters: map[string][]string{catalog.FieldSeverity: {sev}}, Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, it := range page.Items {
					got = append(got, it.ID)
				}
				slices.Sort(got)
				want = slices.Sorted(slices.Values(want))
				if !slices.Equal(got, want) {
					t.Errorf("severity=%s after the migration lists %v, want %v", sev, got, want)
				}
			}
		})
	}
}
