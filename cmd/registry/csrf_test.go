package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/a2aregistry/registry/internal/api"
	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
)

// The registry's one CSRF check is the console's (web.GuardWrites and its
// forms' check); serve puts it on the API's writes and on sign-out. These
// tests prove it there, through the handler serve mounts.

var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrfRequest sends method path with body through c, with headers; a
// POST's body is JSON unless it is a form.
func csrfRequest(t *testing.T, c *http.Client, method, u, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// pageToken reads the CSRF token a console page renders for c's caller.
func pageToken(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	code, body := csrfRequest(t, c, http.MethodGet, u, "", map[string]string{"Accept": "text/html"})
	m := csrfInput.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("GET %s: %d without a CSRF token: %.600s", u, code, body)
	}
	return m[1]
}

func apiCode(body string) string {
	var e api.ErrorResponse
	_ = json.Unmarshal([]byte(body), &e)
	return e.Error.Code
}

// TestCrossSiteWritesRefused: without sign-in (development mode), a page
// on another site must not register agents through the operator's
// browser, on the API or the console; programs (no Sec-Fetch-Site, no
// Origin), same-origin pages and the trusted public origin may.
func TestCrossSiteWritesRefused(t *testing.T) {
	reg := &countingRegistrar{}
	srv := httptest.NewServer(newHandler(handlerDeps{log: slog.New(slog.DiscardHandler), store: catalogtest.SQLite(t),
		registrar: reg, origins: []string{"https://registry.example.com"}}))
	t.Cleanup(srv.Close)
	c := srv.Client()
	tok := pageToken(t, c, srv.URL+"/register")
	form := url.Values{"urls": {"https://agent.example"}, "csrf_token": {tok}}.Encode()
	formType := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	with := func(h map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	for _, tc := range []struct {
		name, method, path, body string
		header                   map[string]string
		wantStatus               int
		wantCode                 string // the API's code, "" for the console
	}{
		{"API register, cross-site fetch", http.MethodPost, "/api/v1/agents", `{"url":"https://agent.example"}`,
			map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, api.CodeCrossSite},
		{"API register, foreign Origin", http.MethodPost, "/api/v1/agents", `{"url":"https://agent.example"}`,
			map[string]string{"Origin": "https://attacker.example"}, 403, api.CodeCrossSite},
		{"API register, same origin", http.MethodPost, "/api/v1/agents", `{"url":"https://agent.example"}`,
			map[string]string{"Sec-Fetch-Site": "same-origin"}, 422, api.CodeBlockedAddress},
		{"API register, trusted public origin", http.MethodPost, "/api/v1/agents", `{"url":"https://agent.example"}`,
			map[string]string{"Origin": "https://registry.example.com"}, 422, api.CodeBlockedAddress},
		{"API register, curl", http.MethodPost, "/api/v1/agents", `{"url":"https://agent.example"}`, nil, 422, api.CodeBlockedAddress},
		{"API read, cross-site", http.MethodGet, "/api/v1/agents", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 200, ""},
		{"console register, cross-site with the token", http.MethodPost, "/register", form,
			with(formType, "Sec-Fetch-Site", "cross-site"), 403, ""},
		{"console register, without the token", http.MethodPost, "/register", "urls=https%3A%2F%2Fagent.example", formType, 403, ""},
		{"console register, same origin with the token", http.MethodPost, "/register", form,
			with(formType, "Sec-Fetch-Site", "same-origin"), 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := reg.calls.Load()
			code, body := csrfRequest(t, c, tc.method, srv.URL+tc.path, tc.body, tc.header)
			if code != tc.wantStatus || (tc.wantCode != "" && apiCode(body) != tc.wantCode) {
				t.Fatalf("status %d code %q, want %d %q: %s", code, apiCode(body), tc.wantStatus, tc.wantCode, body)
			}
			if reached := reg.calls.Load() > before; reached != (code != 403 && tc.method == http.MethodPost) {
				t.Errorf("registrar reached: %v", reached)
			}
		})
	}
}

// TestSessionCSRF: a browser signed in with a session cookie writes
// through the API only with its CSRF token and from this site (a cookie
// rides along with a cross-site request, a token does not), and so
// through the console and sign-out; a bearer token is no ambient
// credential and needs no token.
func TestSessionCSRF(t *testing.T) {
	// mockoidc puts the groups claim (the roles claim) in the ID token
	// only when the groups scope is asked for.
	s := newSignInServer(t, func(c *config.Config) { c.Auth.Scopes = append(c.Auth.Scopes, "groups") })
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	s.signIn(t, b, &mockoidc.MockUser{Subject: "ed", Email: "ed@example.com", Groups: []string{"eng"}})
	tok := pageToken(t, b, s.srv.URL+"/register")
	register := `{"url":"https://agent.example"}`
	form := url.Values{"urls": {"https://agent.example"}, "csrf_token": {tok}}.Encode()
	for _, tc := range []struct {
		name, path, body string
		client           *http.Client
		header           map[string]string
		wantStatus       int
		wantCode         string
	}{
		{"API, session without the token", "/api/v1/agents", register, b,
			map[string]string{"Sec-Fetch-Site": "same-origin"}, 403, api.CodeForbidden},
		{"API, session cross-site with the token", "/api/v1/agents", register, b,
			map[string]string{"Sec-Fetch-Site": "cross-site", "X-CSRF-Token": tok}, 403, api.CodeCrossSite},
		{"API, session with the token", "/api/v1/agents", register, b,
			map[string]string{"Sec-Fetch-Site": "same-origin", "X-CSRF-Token": tok}, 422, api.CodeBlockedAddress},
		{"API, bearer token without a CSRF token", "/api/v1/agents", register, http.DefaultClient,
			map[string]string{"Authorization": "Bearer " + s.token(t, "eng")}, 422, api.CodeBlockedAddress},
		{"console, session cross-site with the token", "/register", form, b,
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site"}, 403, ""},
		{"sign-out without the token", auth.LogoutPath, "", b, map[string]string{"Sec-Fetch-Site": "same-origin"}, 403, ""},
		{"sign-out cross-site with the token", auth.LogoutPath, "", b,
			map[string]string{"Sec-Fetch-Site": "cross-site", "X-CSRF-Token": tok}, 403, ""},
		{"sign-out with the token", auth.LogoutPath, "", b,
			map[string]string{"Sec-Fetch-Site": "same-origin", "X-CSRF-Token": tok}, 303, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.reg.calls.Load()
			code, body := csrfRequest(t, tc.client, http.MethodPost, s.srv.URL+tc.path, tc.body, tc.header)
			if code != tc.wantStatus || (tc.wantCode != "" && apiCode(body) != tc.wantCode) {
				t.Fatalf("status %d code %q, want %d %q: %s", code, apiCode(body), tc.wantStatus, tc.wantCode, body)
			}
			if code == 403 && s.reg.calls.Load() != before {
				t.Error("a refused write reached the registrar")
			}
		})
	}
}

// signIn signs b in through the provider as user, following the login's
// redirects by hand.
func (s *signInServer) signIn(t *testing.T, b *http.Client, user mockoidc.User) {
	t.Helper()
	next := func(u string) string {
		t.Helper()
		resp, err := b.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if loc == "" {
			t.Fatalf("GET %s: %d without a redirect", u, resp.StatusCode)
		}
		return loc
	}
	authorize := next(s.srv.URL + auth.LoginPath + "?next=/")
	s.oidc.QueueUser(user)
	callback := next(authorize)
	next(callback)
}
