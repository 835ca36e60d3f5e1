// Package static holds the console's browser assets, embedded in the
// binary so the console needs no CDN (air-gapped networks): htmx, vendored
// from its npm package with its license, the console's stylesheet, and
// tryit.js, which streams a run into the "Try it" panel.
//
// To update htmx: `npm pack htmx.org@VERSION`, take package/dist/htmx.min.js
// and package/LICENSE from the tarball, put the one-line header comment
// back on top of htmx.min.js (version, copyright, license, source) and
// update the version the console's tests expect. The console configures
// htmx in web/templates/layout.templ (htmx-config); check that a new
// release still honours those settings, which the browser test asserts.
package static

import "embed"

// FS holds the assets by file name.
//
//go:embed htmx.min.js htmx.LICENSE console.css tryit.js
var FS embed.FS
