package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// errorHandler wraps next so that a browser asking for a console page
// and refused on the way — a role it lacks (403 from the Authorizer), a
// failed sign-in, a body too large — reads the console's error page, not
// echo's JSON. The API's requests, non-HTML clients and responses already
// under way go to next.
func (h *Console) errorHandler(next echo.HTTPErrorHandler) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		r := c.Request()
		if c.Response().Committed || r.Method == http.MethodHead || h.isAPIRequest(r) || !wantsHTML(r) {
			next(err, c)
			return
		}
		status := http.StatusInternalServerError
		msg := "Something went wrong on our side. Try again in a moment."
		var he *echo.HTTPError
		if errors.As(err, &he) {
			status = he.Code
			if m, ok := he.Message.(string); ok && status < http.StatusInternalServerError {
				msg = m
			}
		}
		// A refusal may come before the route's own middleware ran.
		setSecurityHeaders(c.Response().Header())
		if rerr := h.errorPage(c, status, http.StatusText(status), sentence(msg)); rerr != nil {
			h.log.Error("rendering an error page", "err", rerr, "status", status)
		}
	}
}

// isAPIRequest tells the JSON API's requests (under Options.APIPath),
// whose errors its own handler answers.
func (h *Console) isAPIRequest(r *http.Request) bool {
	p := h.opts.APIPath
	return p != "" && (r.URL.Path == p || strings.HasPrefix(r.URL.Path, p+"/"))
}

// wantsHTML reports whether r comes from a page: a navigation (Accept
// names text/html) or an htmx request, which swaps what it gets.
func wantsHTML(r *http.Request) bool {
	return r.Header.Get(hxRequest) == "true" || strings.Contains(r.Header.Get(echo.HeaderAccept), "text/html")
}

// sentence makes an error message read as a sentence on the page.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
