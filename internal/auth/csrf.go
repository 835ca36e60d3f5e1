package auth

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// ErrCSRF marks a state-changing browser request refused because it came
// from another site or lacked the caller's CSRF token.
var ErrCSRF = errors.New("auth: cross-site request refused")

// RequireCSRF is middleware for the console's state-changing routes: a
// request with an unsafe method must come from this site and carry the
// caller's CSRF token (CSRFField or CSRFHeader); others pass. It needs
// the Authenticator's middleware in front of it. Refusals are 403
// *echo.HTTPError wrapping ErrCSRF.
func RequireCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := VerifyCSRF(c); err != nil {
			return err
		}
		return next(c)
	}
}

// VerifyCSRF checks a state-changing request as RequireCSRF does. Safe
// methods (GET, HEAD, OPTIONS, TRACE; RFC 9110 §9.2.1) always pass: they
// must not change anything.
//
// Two checks, both required: the browser's own word that the request is
// same-origin (Sec-Fetch-Site, else Origin; a browser too old to send
// either is judged by the token alone), and the synchronizer token of
// OWASP's CSRF cheat sheet, which no other site can read.
func VerifyCSRF(c echo.Context) error {
	r := c.Request()
	if isSafeMethod(r.Method) {
		return nil
	}
	ra, ok := authFromContext(r.Context())
	if !ok || ra.csrf == "" {
		return csrfError("no CSRF token for this caller")
	}
	if !sameOrigin(r, ra.origins) {
		return csrfError("cross-site request refused")
	}
	got := r.Header.Get(CSRFHeader)
	if got == "" && isForm(r) {
		got = r.FormValue(CSRFField)
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(ra.csrf)) != 1 {
		return csrfError("missing or wrong CSRF token")
	}
	return nil
}

func csrfError(msg string) error {
	return echo.NewHTTPError(http.StatusForbidden, msg).SetInternal(ErrCSRF)
}

// isForm tells whether the body is a form, so reading the token from it
// does not consume a body meant for something else.
func isForm(r *http.Request) bool {
	ct := r.Header.Get(echo.HeaderContentType)
	return strings.HasPrefix(ct, echo.MIMEApplicationForm) || strings.HasPrefix(ct, echo.MIMEMultipartForm)
}

// sameOrigin reports whether the browser says r comes from this site.
// Sec-Fetch-Site (Fetch Metadata, https://w3c.github.io/webappsec-fetch-metadata/)
// is "none" for a request the user made directly; Origin (RFC 6454 §7)
// must then be the request's own origin or a trusted one (the public
// URL's, when a proxy terminates TLS).
func sameOrigin(r *http.Request, trusted []string) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin" || site == "none"
	}
	origin := r.Header.Get(echo.HeaderOrigin)
	if origin == "" {
		return true
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if strings.EqualFold(origin, scheme+"://"+r.Host) {
		return true
	}
	for _, t := range trusted {
		if strings.EqualFold(origin, t) {
			return true
		}
	}
	return false
}
