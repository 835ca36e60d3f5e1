// Package static holds the console's browser assets, embedded in the
// binary so the console needs no CDN (air-gapped networks): htmx, vendored
// from its npm package with its license, and the console's stylesheet.
package static

import "embed"

// FS holds the assets by file name.
//
//go:embed htmx.min.js htmx.LICENSE console.css
var FS embed.FS
