package web

import "net/http"

// Request headers htmx sets (https://htmx.org/reference/#request_headers).
const (
	hxRequest        = "HX-Request"
	hxBoosted        = "HX-Boosted"
	hxHistoryRestore = "HX-History-Restore-Request"
)

// hxPushURL is the response header that sets the URL htmx pushes into
// the history (https://htmx.org/reference/#response_headers).
const hxPushURL = "HX-Push-Url"

// isFragmentRequest reports whether r is an htmx request that swaps part of
// a page. A boosted request replaces the whole body and a history restore
// (a back/forward to a page htmx no longer has cached) needs the whole
// document, so both get full pages.
func isFragmentRequest(r *http.Request) bool {
	return r.Header.Get(hxRequest) == "true" &&
		r.Header.Get(hxBoosted) != "true" &&
		r.Header.Get(hxHistoryRestore) != "true"
}
