package web

import (
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// The CSRF token travels in a header from htmx (set on <body> with
// hx-headers) and in a hidden field from plain forms; never in a URL,
// where logs and referrers would keep it.
const (
	csrfHeader = "X-CSRF-Token"
	csrfField  = "csrf_token"
)

// Refusals of the CSRF check, wrapped in a 403 *echo.HTTPError by
// GuardWrites; the console shows them as its error page.
var (
	// ErrCrossSite: the browser says the request comes from another
	// site.
	ErrCrossSite = errors.New("web: cross-site request refused")
	// ErrCSRFToken: the request lacks the caller's CSRF token.
	ErrCSRFToken = errors.New("web: missing or wrong CSRF token")
)

// csrfGuard is the registry's one check against cross-site request
// forgery, for the console's state-changing routes and, through the
// wiring (GuardWrites), the JSON API's and sign-out's. Two checks, as
// OWASP's CSRF cheat sheet advises:
//   - the browser's own word that the request comes from this site:
//     Fetch Metadata (Sec-Fetch-Site, https://www.w3.org/TR/fetch-metadata/)
//     must be same-origin or none, else Origin (RFC 6454 §7) must be the
//     request's own host or a trusted origin (the public URL's, behind a
//     proxy that terminates TLS); a request with neither header is not a
//     browser's (http.CrossOriginProtection);
//   - the synchronizer token, which no other site can read, on every
//     request whose caller's credentials the browser attaches by itself.
type csrfGuard struct {
	cop *http.CrossOriginProtection
}

func newCSRFGuard(trusted []string, log *slog.Logger) *csrfGuard {
	cop := http.NewCrossOriginProtection()
	for _, o := range trusted {
		if err := cop.AddTrustedOrigin(o); err != nil {
			log.Error("web: ignoring malformed trusted origin", "origin", o, "err", err)
		}
	}
	return &csrfGuard{cop: cop}
}

// verify checks r, which must carry token want when needToken. Safe
// methods (GET, HEAD, OPTIONS; RFC 9110 §9.2.1) always pass: they must
// not change anything.
func (g *csrfGuard) verify(r *http.Request, want string, needToken bool) error {
	if err := g.cop.Check(r); err != nil {
		return ErrCrossSite
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if !needToken {
		return nil
	}
	got := r.Header.Get(csrfHeader)
	if got == "" && isForm(r) {
		got = r.FormValue(csrfField)
	}
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return ErrCSRFToken
	}
	return nil
}

// isForm tells whether the body is a form, so reading the token from it
// does not consume a body meant for something else (an API's JSON).
func isForm(r *http.Request) bool {
	ct := r.Header.Get(echo.HeaderContentType)
	return strings.HasPrefix(ct, echo.MIMEApplicationForm) || strings.HasPrefix(ct, echo.MIMEMultipartForm)
}

// csrfToken is the token the caller's state-changing requests must carry.
func (h *Console) csrfToken(c echo.Context) string {
	if h.opts.CSRFToken != nil {
		return h.opts.CSRFToken(c)
	}
	return h.processCSRF
}

// checkCSRF is the CSRF check of the console's own state-changing routes:
// every one carries the token (development mode included), and a refusal
// is the console's error page.
func (h *Console) checkCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch err := h.csrf.verify(c.Request(), h.csrfToken(c), true); {
		case errors.Is(err, ErrCrossSite):
			return h.errorPage(c, http.StatusForbidden, "Refused", "This request came from another site.")
		case err != nil:
			return h.errorPage(c, http.StatusForbidden, "Refused",
				"The form has expired or did not come from this console. Reload the page and try again.")
		}
		return next(c)
	}
}

// GuardWrites is the console's CSRF check for routes it does not serve:
// the JSON API's and sign-out's, which the wiring puts it on. Every
// state-changing request from another site is refused; one whose
// caller's credentials the browser attaches by itself (ambient: a session
// cookie; nil means always) must also carry the caller's token, as the
// console's forms do. A bearer token is no such credential, so API
// programs need no token. Refusals are 403 *echo.HTTPError wrapping
// ErrCrossSite or ErrCSRFToken, for the route's own error handler.
func (h *Console) GuardWrites(ambient func(echo.Context) bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			need := ambient == nil || ambient(c)
			switch err := h.csrf.verify(c.Request(), h.csrfToken(c), need); {
			case errors.Is(err, ErrCrossSite):
				return echo.NewHTTPError(http.StatusForbidden, "cross-site requests may not change the registry").SetInternal(err)
			case err != nil:
				return echo.NewHTTPError(http.StatusForbidden, "missing or wrong CSRF token").SetInternal(err)
			}
			return next(c)
		}
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
