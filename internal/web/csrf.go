package web

import (
	"crypto/subtle"
	"net/http"

	"github.com/labstack/echo/v4"
)

// The CSRF token travels in a header from htmx (set on <body> with
// hx-headers) and in a hidden field from plain forms; never in a URL,
// where logs and referrers would keep it.
const (
	csrfHeader = "X-CSRF-Token"
	csrfField  = "csrf_token"
)

// csrfToken is the token the caller's state-changing requests must carry.
func (h *Console) csrfToken(c echo.Context) string {
	if h.opts.CSRFToken != nil {
		return h.opts.CSRFToken(c)
	}
	return h.processCSRF
}

// checkCSRF refuses a state-changing request that does not carry the
// caller's token, or that the browser says comes from another site
// (Fetch Metadata, https://www.w3.org/TR/fetch-metadata/).
func (h *Console) checkCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Header.Get("Sec-Fetch-Site") == "cross-site" {
			return h.errorPage(c, http.StatusForbidden, "Refused", "This request came from another site.")
		}
		want := h.csrfToken(c)
		got := c.Request().Header.Get(csrfHeader)
		if got == "" {
			got = c.FormValue(csrfField)
		}
		if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			return h.errorPage(c, http.StatusForbidden, "Refused",
				"The form has expired or did not come from this console. Reload the page and try again.")
		}
		return next(c)
	}
}

// limitBody caps a request body at n bytes; the form parser then fails
// rather than reading more.
func limitBody(n int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			req.Body = http.MaxBytesReader(c.Response(), req.Body, n)
			return next(c)
		}
	}
}
