// Package migrations holds the versioned SQL schema of the catalog, one
// directory per database. Files are applied in order by goose at start-up and
// by `registry migrate`; a released file is never edited, only followed by a
// new one.
package migrations

import "embed"

// FS holds sqlite/*.sql and postgres/*.sql.
//
//go:embed sqlite/*.sql postgres/*.sql
var FS embed.FS
