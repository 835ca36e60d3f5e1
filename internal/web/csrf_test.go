package web

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestCSRFVerify is the one CSRF check's table: the browser's word on
// where a request comes from (Fetch Metadata, else Origin against Host
// and the trusted origins), then the token when one is needed.
func TestCSRFVerify(t *testing.T) {
	g := newCSRFGuard([]string{"https://registry.example.com"}, slog.New(slog.DiscardHandler))
	const tok = "the-token"
	tests := []struct {
		name      string
		method    string
		host      string
		tls       bool
		header    map[string]string
		form      url.Values
		needToken bool
		want      error
	}{
		{name: "no headers (a program)", host: "r:8080", want: nil},
		{name: "fetch metadata same-origin", host: "r:8080", header: map[string]string{"Sec-Fetch-Site": "same-origin"}},
		{name: "fetch metadata none (typed by the user)", host: "r:8080", header: map[string]string{"Sec-Fetch-Site": "none"}},
		{name: "fetch metadata same-site is not enough", host: "r:8080", header: map[string]string{"Sec-Fetch-Site": "same-site"}, want: ErrCrossSite},
		{name: "fetch metadata wins over Origin", host: "r:8080",
			header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://r:8080"}, want: ErrCrossSite},
		{name: "own origin", host: "r:8080", header: map[string]string{"Origin": "http://r:8080"}},
		{name: "own origin over TLS", host: "r:8443", tls: true, header: map[string]string{"Origin": "https://r:8443"}},
		{name: "public URL behind a proxy", host: "10.0.0.5:8080", header: map[string]string{"Origin": "https://registry.example.com"}},
		{name: "null origin", host: "r:8080", header: map[string]string{"Origin": "null"}, want: ErrCrossSite},
		{name: "other site", host: "r:8080", header: map[string]string{"Origin": "https://evil.example"}, want: ErrCrossSite},
		{name: "a read from another site passes", method: http.MethodGet, host: "r:8080",
			header: map[string]string{"Sec-Fetch-Site": "cross-site"}, needToken: true},
		{name: "token needed, none", host: "r:8080", needToken: true, want: ErrCSRFToken},
		{name: "token needed, wrong", host: "r:8080", needToken: true, header: map[string]string{csrfHeader: "x" + tok}, want: ErrCSRFToken},
		{name: "token in the header", host: "r:8080", needToken: true, header: map[string]string{csrfHeader: tok}},
		{name: "token in a form", host: "r:8080", needToken: true, form: url.Values{csrfField: {tok}}},
		{name: "token in a JSON body is not read", host: "r:8080", needToken: true,
			header: map[string]string{"Content-Type": "application/json"}, want: ErrCSRFToken},
		{name: "cross-site with the token", host: "r:8080", needToken: true,
			header: map[string]string{"Sec-Fetch-Site": "cross-site", csrfHeader: tok}, want: ErrCrossSite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			body := `{"csrf_token":"` + tok + `"}`
			if tt.form != nil {
				body = tt.form.Encode()
			}
			r := httptest.NewRequest(method, "http://"+tt.host+"/x", strings.NewReader(body))
			if tt.form != nil {
				r.Header.Set("Content-Type", echo.MIMEApplicationForm)
			}
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			if got := g.verify(r, tok, tt.needToken); !errors.Is(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("verify = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestGuardWrites: on another door's routes the check asks a token only
// of callers with ambient credentials, and answers 403 errors that name
// the refusal for that door's own error handler.
func TestGuardWrites(t *testing.T) {
	c := New(Options{Logger: quietLog, CSRFToken: func(echo.Context) string { return "tok" }})
	for _, tc := range []struct {
		name    string
		ambient bool
		header  map[string]string
		want    error
	}{
		{"a program without cookies", false, nil, nil},
		{"a session without the token", true, nil, ErrCSRFToken},
		{"a session with the token", true, map[string]string{csrfHeader: "tok"}, nil},
		{"another site, even without cookies", false, map[string]string{"Sec-Fetch-Site": "cross-site"}, ErrCrossSite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := echo.New()
			req := httptest.NewRequest(http.MethodPost, "/api/things", nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			ctx := e.NewContext(req, httptest.NewRecorder())
			reached := false
			err := c.GuardWrites(func(echo.Context) bool { return tc.ambient })(func(echo.Context) error {
				reached = true
				return nil
			})(ctx)
			var he *echo.HTTPError
			if tc.want == nil {
				if err != nil || !reached {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if reached || !errors.As(err, &he) || he.Code != http.StatusForbidden || !errors.Is(err, tc.want) {
				t.Errorf("err = %v (reached %v), want 403 wrapping %v", err, reached, tc.want)
			}
		})
	}
}
