// Package migrations holds the versioned SQL schema of the catalog, one
// directory per database. Files are applied in order by goose at start-up and
// by `registry migrate`; a released file is never edited, only followed by a
// new one.
//
// Migration 00004 (one identity per agent: card URLs rewritten to their
// canonical form, rows that then share one merged) is Go, not SQL, since
// neither database can canonicalize a URL; it lives with the catalog
// (internal/catalog/rekey.go) and is numbered among these files.
package migrations

import "embed"

// FS holds sqlite/*.sql and postgres/*.sql.
//
//go:embed sqlite/*.sql postgres/*.sql
var FS embed.FS
