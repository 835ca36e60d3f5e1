// Package examples holds the example agent cards shipped with the registry.
package examples

import "embed"

// Cards are the shipped example cards (cards/*.json) that `registry serve`
// imports on first run, so a newcomer's first search finds something. They
// cover every card shape the registry reads: v0.2 (url only), v0.3, v1.0
// and a mixed v1.0+v0.3 card, with oauth2, apiKey, openIdConnect and http
// bearer security.
//
//go:embed cards/*.json
var Cards embed.FS
