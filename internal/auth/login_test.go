package auth

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/a2aregistry/registry/internal/catalog"
)

// TestLogin signs users in through the whole flow and checks the role
// each gets from the roles claim, and that the session is a catalog row
// holding only a hash of the cookie's token.
func TestLogin(t *testing.T) {
	tests := []struct {
		name        string
		user        *mockoidc.MockUser
		defaultRole Role
		wantRole    Role // 0: refused
	}{
		{"admin group", user("ann", "admins"), Viewer, Admin},
		{"highest of several mappings", user("bob", "eng", "admins", "qa"), Viewer, Admin},
		{"editor group", user("eve", "eng"), Viewer, Editor},
		{"tester group", user("tim", "qa", "design"), Viewer, Tester},
		{"no mapping: default role", user("dan", "design"), Viewer, Viewer},
		{"no groups: default role", user("gus"), Tester, Tester},
		{"no mapping, default none: refused", user("nob", "design"), 0, 0},
		{"mapping wins over default none", user("max", "eng"), 0, Editor},
	}
	forEachStore(t, func(t *testing.T, s *catalog.Store) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h := newHarness(t, s, func(c *Config) { c.DefaultRole = tt.defaultRole })
				b := h.browser(t)
				resp := get(t, b, h.startLogin(t, b, tt.user, "/whoami?x=1"))
				if tt.wantRole == 0 {
					if resp.StatusCode != http.StatusForbidden || h.sessionCookie(b) != "" {
						t.Fatalf("callback: status %d, session cookie %q; want 403 and none", resp.StatusCode, h.sessionCookie(b))
					}
					if _, code := h.whoami(t, b); code != http.StatusSeeOther {
						t.Errorf("after a refused sign-in /whoami answers %d, want a redirect to sign-in", code)
					}
					return
				}
				if got := location(t, resp); got != "/whoami?x=1" {
					t.Errorf("callback redirects to %q, want the next page", got)
				}
				w, code := h.whoami(t, b)
				if code != http.StatusOK {
					t.Fatalf("/whoami after sign-in: %d", code)
				}
				want := whoami{Subject: tt.user.Subject, Email: tt.user.Email, Name: tt.user.PreferredUsername,
					Role: tt.wantRole.String(), Groups: tt.user.Groups, Source: SourceSession}
				if w.Subject != want.Subject || w.Email != want.Email || w.Name != want.Name || w.Role != want.Role ||
					!slices.Equal(w.Groups, want.Groups) || w.Source != want.Source || w.CSRF == "" {
					t.Errorf("caller %+v, want %+v with a CSRF token", w, want)
				}
				token := h.sessionCookie(b)
				if !sessionExists(t, s, token) {
					t.Error("no session row under the hash of the cookie's token")
				}
				if sessionExists(t, s, hashToken(token)) || strings.Contains(hashToken(token), token) {
					t.Error("the session row is found by the raw token: the token is stored")
				}
			})
		}
	})
}

// TestCallbackRefuses: a callback the browser did not start, or whose
// code is not this login's, signs nobody in.
func TestCallbackRefuses(t *testing.T) {
	h := newHarness(t, newStore(t), nil)
	tests := []struct {
		name     string
		callback func(t *testing.T, b *http.Client) string
		want     int
	}{
		{"tampered state", func(t *testing.T, b *http.Client) string {
			return setQuery(t, h.startLogin(t, b, user("u", "eng"), "/"), "state", strings.Repeat("A", 43))
		}, http.StatusBadRequest},
		{"tampered state, same cookie", func(t *testing.T, b *http.Client) string {
			cb := h.startLogin(t, b, user("u", "eng"), "/")
			state := mustURL(t, cb).Query().Get("state")
			return setQuery(t, cb, "state", state[:16]+strings.Repeat("A", len(state)-16))
		}, http.StatusBadRequest},
		{"state of another browser", func(t *testing.T, b *http.Client) string {
			return h.startLogin(t, h.browser(t), user("u", "eng"), "/")
		}, http.StatusBadRequest},
		{"no state", func(t *testing.T, b *http.Client) string {
			return setQuery(t, h.startLogin(t, b, user("u", "eng"), "/"), "state", "")
		}, http.StatusBadRequest},
		{"replayed code", func(t *testing.T, b *http.Client) string {
			first := h.startLogin(t, b, user("u", "eng"), "/")
			if resp := get(t, h.browser(t), first); resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("callback in a browser without the login: %d", resp.StatusCode)
			}
			if resp := get(t, b, first); resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("first use of the code: %d", resp.StatusCode)
			}
			b.Jar.SetCookies(mustURL(t, h.srv.URL), []*http.Cookie{{Name: sessionCookie, Value: "", MaxAge: -1}})
			// A new login of the same browser, answered with the old code.
			second := h.startLogin(t, b, user("u", "eng"), "/")
			return setQuery(t, second, "code", mustURL(t, first).Query().Get("code"))
		}, http.StatusUnauthorized},
		{"code of another login (PKCE and nonce)", func(t *testing.T, b *http.Client) string {
			other := h.startLogin(t, b, user("u", "admins"), "/")
			mine := h.startLogin(t, b, user("u", "eng"), "/")
			return setQuery(t, mine, "code", mustURL(t, other).Query().Get("code"))
		}, http.StatusUnauthorized},
		{"ID token with another nonce", func(t *testing.T, b *http.Client) string {
			// Only the nonce catches this: state, code and PKCE are this login's.
			return h.startLoginVia(t, b, user("u", "eng"), "/", func(q url.Values) { q.Set("nonce", "replayed-nonce") })
		}, http.StatusUnauthorized},
		{"provider error", func(t *testing.T, b *http.Client) string {
			cb := h.startLogin(t, b, user("u", "eng"), "/")
			return setQuery(t, setQuery(t, cb, "code", ""), "error", "access_denied")
		}, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := h.browser(t)
			cb := tt.callback(t, b)
			resp := get(t, b, cb)
			if resp.StatusCode != tt.want {
				t.Errorf("callback: status %d, want %d", resp.StatusCode, tt.want)
			}
			if h.sessionCookie(b) != "" {
				t.Error("a session cookie was set")
			}
			if _, code := h.whoami(t, b); code == http.StatusOK {
				t.Error("the browser is signed in")
			}
		})
	}
}

// TestLoginStateServesOnce: the login cookie is cleared by its callback.
func TestLoginStateServesOnce(t *testing.T) {
	h := newHarness(t, newStore(t), nil)
	b := h.browser(t)
	cb := h.startLogin(t, b, user("u", "eng"), "/")
	if resp := get(t, b, cb); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("callback: %d", resp.StatusCode)
	}
	if resp := get(t, b, cb); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("second use of the callback: %d, want 400", resp.StatusCode)
	}
}

// TestLoginNext: where sign-in sends the browser afterwards.
func TestLoginNext(t *testing.T) {
	h := newHarness(t, newStore(t), nil)
	for _, tt := range []struct{ next, want string }{
		{"/agents/a1?tab=diff", "/agents/a1?tab=diff"},
		{"https://evil.example/", "/"},
		{"//evil.example/", "/"},
		{"/\\evil.example/", "/"},
		{"/auth/logout", "/"},
		{"", "/"},
	} {
		b := h.browser(t)
		if got := h.login(t, b, user("u", "eng"), tt.next); got != tt.want {
			t.Errorf("next %q: signed in to %q, want %q", tt.next, got, tt.want)
		}
	}
}

// TestLogoutRevokes: logout deletes the row, so a copy of the cookie is
// worthless afterwards. (Its CSRF check is the console's, on the route
// serve mounts: cmd/registry TestSessionCSRF.)
func TestLogoutRevokes(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *catalog.Store) {
		h := newHarness(t, s, nil)
		b := h.browser(t)
		h.login(t, b, user("u", "eng"), "/")
		token := h.sessionCookie(b)

		resp := post(t, b, h.srv.URL+LogoutPath, nil, "Origin", h.srv.URL, "Sec-Fetch-Site", "same-origin")
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("logout: status %d, want 303", resp.StatusCode)
		}
		// Not "/": where pages need a role, that would send the browser
		// to the provider, whose SSO session signs it straight back in.
		if got := resp.Header.Get("Location"); got != SignedOutPath {
			t.Errorf("logout: Location %q, want %q", got, SignedOutPath)
		}
		if sessionExists(t, s, token) {
			t.Error("logout left the session row")
		}
		// The copied cookie, sent by another browser, no longer signs in.
		thief := h.browser(t)
		thief.Jar.SetCookies(mustURL(t, h.srv.URL), []*http.Cookie{{Name: sessionCookie, Value: token}})
		if _, code := h.whoami(t, thief); code != http.StatusSeeOther {
			t.Errorf("/whoami with the revoked cookie: %d, want a redirect to sign-in", code)
		}
	})
}

// TestSessionExpiry: idle and absolute expiry, on the injected clock.
func TestSessionExpiry(t *testing.T) {
	tests := []struct {
		name string
		// steps are the clock advances, each followed by a request.
		steps []time.Duration
		// alive is whether the session serves after the last step.
		alive bool
	}{
		{"fresh", []time.Duration{time.Minute}, true},
		{"idle", []time.Duration{testIdle + time.Second}, false},
		{"idle exactly", []time.Duration{testIdle}, false},
		{"use keeps it alive", []time.Duration{testIdle - time.Minute, testIdle - time.Minute, testIdle - time.Minute}, true},
		{"absolute expiry however used", repeat(testIdle-time.Minute, int(testMax/(testIdle-time.Minute))+1), false},
	}
	forEachStore(t, func(t *testing.T, s *catalog.Store) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h := newHarness(t, s, nil)
				b := h.browser(t)
				h.login(t, b, user("u", "eng"), "/")
				token := h.sessionCookie(b)
				code := 0
				for _, d := range tt.steps {
					h.clock.Add(d)
					_, code = h.whoami(t, b)
				}
				if alive := code == http.StatusOK; alive != tt.alive {
					t.Errorf("after %v: /whoami %d, alive %v; want %v", tt.steps, code, alive, tt.alive)
				}
				if !tt.alive && sessionExists(t, s, token) {
					t.Error("the expired session's row is still there")
				}
			})
		}
	})
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func post(t *testing.T, c *http.Client, u string, form url.Values, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func setQuery(t *testing.T, raw, key, value string) string {
	t.Helper()
	u := mustURL(t, raw)
	q := u.Query()
	if value == "" {
		q.Del(key)
	} else {
		q.Set(key, value)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSecondLoginReplacesSession: two logins started in one browser (two
// tabs) both finish; the second session replaces the first, whose row is
// deleted rather than left behind.
func TestSecondLoginReplacesSession(t *testing.T) {
	s := newStore(t)
	h := newHarness(t, s, nil)
	b := h.browser(t)
	first := h.startLogin(t, b, user("u", "eng"), "/")
	second := h.startLogin(t, b, user("u", "eng"), "/")
	get(t, b, first)
	firstToken := h.sessionCookie(b)
	get(t, b, second)
	secondToken := h.sessionCookie(b)
	if firstToken == "" || secondToken == firstToken {
		t.Fatalf("session tokens %q then %q, want two different ones", firstToken, secondToken)
	}
	if sessionExists(t, s, firstToken) || !sessionExists(t, s, secondToken) {
		t.Error("the first session's row survived, or the second's is missing")
	}
}

// TestSignInAudited: a sign-in and a sign-out are audited under the user,
// in the transaction of the session's write; a session replaced by a
// second sign-in or ended by expiry is the registry's housekeeping, not
// a sign-out; a user the provider vouched for but no role maps to is
// audited as refused. No row carries the session's hash.
func TestSignInAudited(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *catalog.Store) {
		h := newHarness(t, s, func(c *Config) { c.DefaultRole = 0 })
		b := h.browser(t)
		// Two sign-ins started in two tabs: the second replaces the first.
		first := h.startLogin(t, b, user("u", "eng"), "/")
		second := h.startLogin(t, b, user("u", "eng"), "/")
		get(t, b, first)
		get(t, b, second)
		token := h.sessionCookie(b)
		resp := post(t, b, h.srv.URL+LogoutPath, nil, "Origin", h.srv.URL, "Sec-Fetch-Site", "same-origin")
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("logout: status %d, want 303", resp.StatusCode)
		}
		guest := h.browser(t)
		if resp := get(t, guest, h.startLogin(t, guest, user("nobody", "guests"), "/")); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a user without a role: status %d, want 403", resp.StatusCode)
		}
		page, err := s.AuditLog(context.Background(), "", 50)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range page.Entries {
			got = append(got, e.Action+" "+e.TargetID+" "+string(e.ActorKind)+":"+e.Subject)
			if strings.Contains(string(e.Detail), hashToken(token)) {
				t.Errorf("audit row %s names the session hash", e.Action)
			}
		}
		slices.Reverse(got)
		want := []string{
			catalog.ActionSignIn + " u user:u",
			catalog.ActionSignIn + " u user:u",
			catalog.ActionSignOut + " u user:u",
			catalog.ActionSignInRefused + " nobody user:nobody",
		}
		if !slices.Equal(got, want) {
			t.Errorf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
