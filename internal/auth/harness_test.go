package auth

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/labstack/echo/v4"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// clock is a settable clock for session and token expiry.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// harness is a registry-like server signing in through an in-process
// mockoidc provider. Its routes:
//
//	GET  /whoami          (viewer)  the caller as JSON
//	POST /things          (editor)  a console write
//	GET  /api/v1/things   (viewer)  an API read
//	POST /api/v1/things   (editor)  an API write
//	GET  /csrf                       the caller's CSRF token
type harness struct {
	oidc  *mockoidc.MockOIDC
	store *catalog.Store
	auth  *Authenticator
	srv   *httptest.Server
	clock *clock
}

const (
	testIdle = time.Hour
	testMax  = 8 * time.Hour
)

// whoami is what GET /whoami answers.
type whoami struct {
	Subject, Email, Name string
	Role                 string
	Groups               []string
	Source               Source
	CSRF                 string
}

func newHarness(t *testing.T, store *catalog.Store, tweak func(*Config)) *harness {
	t.Helper()
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	h := &harness{oidc: m, store: store, clock: &clock{t: time.Now()}}
	e := echo.New()
	h.srv = httptest.NewServer(e)
	t.Cleanup(h.srv.Close)
	cfg := Config{
		Issuer: m.Issuer(), ClientID: m.ClientID, ClientSecret: m.ClientSecret,
		Scopes:    []string{"openid", "email", "profile", "groups"},
		PublicURL: h.srv.URL,
		Roles:     []RoleMapping{{Admin, "admins"}, {Editor, "eng"}, {Tester, "qa"}},
		// DefaultRole viewer, as the registry's default.
		DefaultRole: Viewer,
		SessionIdle: testIdle, SessionMax: testMax,
		Sessions: store, Now: h.clock.Now, Logger: slog.New(slog.DiscardHandler),
	}
	if tweak != nil {
		tweak(&cfg)
	}
	h.auth, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.auth.Mount(e)
	ok := func(c echo.Context) error { return c.String(http.StatusOK, "ok") }
	e.GET("/whoami", func(c echo.Context) error {
		ctx := c.Request().Context()
		p := FromContext(ctx)
		return c.JSON(http.StatusOK, whoami{p.Subject, p.Email, p.Name, p.Role.String(), p.Groups, p.Source, CSRFToken(ctx)})
	}, h.auth.RequireRole(Viewer))
	e.POST("/things", ok, h.auth.RequireRole(Editor))
	e.GET("/api/v1/things", ok, h.auth.RequireRole(Viewer))
	e.POST("/api/v1/things", ok, h.auth.RequireRole(Editor))
	e.GET("/csrf", func(c echo.Context) error { return c.String(http.StatusOK, CSRFToken(c.Request().Context())) })
	return h
}

// browser returns a client with a cookie jar that does not follow
// redirects, so each step of a sign-in can be checked.
func (h *harness) browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
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

func location(t *testing.T, resp *http.Response) string {
	t.Helper()
	if resp.StatusCode/100 != 3 {
		t.Fatalf("%s %s: status %d, want a redirect", resp.Request.Method, resp.Request.URL, resp.StatusCode)
	}
	// As sent: a relative Location is what keeps a redirect on this site.
	return resp.Header.Get("Location")
}

// startLogin starts a sign-in in browser b, lets the provider sign in
// user, and returns the callback URL the provider sent the browser to.
func (h *harness) startLogin(t *testing.T, b *http.Client, user mockoidc.User, next string) string {
	t.Helper()
	return h.startLoginVia(t, b, user, next, nil)
}

// startLoginVia is startLogin with the authorization request changed by
// edit on its way to the provider (nil: unchanged).
func (h *harness) startLoginVia(t *testing.T, b *http.Client, user mockoidc.User, next string, edit func(q url.Values)) string {
	t.Helper()
	authorize := location(t, get(t, b, h.srv.URL+"/auth/login?next="+url.QueryEscape(next)))
	if !strings.HasPrefix(authorize, h.oidc.AuthorizationEndpoint()) {
		t.Fatalf("login redirects to %s, want the provider", authorize)
	}
	au, _ := url.Parse(authorize)
	q := au.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("state") == "" {
		t.Fatalf("authorization request lacks PKCE, nonce or state: %s", authorize)
	}
	if edit != nil {
		edit(q)
		au.RawQuery = q.Encode()
		authorize = au.String()
	}
	if user != nil {
		h.oidc.QueueUser(user)
	}
	callback := location(t, get(t, b, authorize))
	if !strings.HasPrefix(callback, h.srv.URL+CallbackPath+"?") {
		t.Fatalf("provider redirects to %s, want the callback", callback)
	}
	return callback
}

// login signs user in with browser b and returns where the callback sent
// it.
func (h *harness) login(t *testing.T, b *http.Client, user mockoidc.User, next string) string {
	t.Helper()
	resp := get(t, b, h.startLogin(t, b, user, next))
	return location(t, resp)
}

func (h *harness) whoami(t *testing.T, b *http.Client) (whoami, int) {
	t.Helper()
	resp := get(t, b, h.srv.URL+"/whoami")
	if resp.StatusCode != http.StatusOK {
		return whoami{}, resp.StatusCode
	}
	var w whoami
	if err := json.NewDecoder(resp.Body).Decode(&w); err != nil {
		t.Fatal(err)
	}
	return w, resp.StatusCode
}

// sessionCookie returns the value of b's session cookie, "" for none.
func (h *harness) sessionCookie(b *http.Client) string {
	u, _ := url.Parse(h.srv.URL)
	for _, c := range b.Jar.Cookies(u) {
		if c.Name == sessionCookie {
			return c.Value
		}
	}
	return ""
}

func user(sub string, groups ...string) *mockoidc.MockUser {
	return &mockoidc.MockUser{Subject: sub, Email: sub + "@example.com", PreferredUsername: sub, Groups: groups}
}

// token signs claims with key (the provider's unless another is given):
// the standard claims of a valid API token for the harness, changed by
// tweak.
func (h *harness) token(t *testing.T, key *mockoidc.Keypair, tweak func(jwt.MapClaims)) string {
	t.Helper()
	now := time.Now()
	claims := jwt.MapClaims{
		"iss": h.oidc.Issuer(), "sub": "api-client", "aud": h.oidc.ClientID,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(10 * time.Minute).Unix(),
		"email": "ci@example.com", "groups": []string{"eng"},
	}
	if tweak != nil {
		tweak(claims)
	}
	if key == nil {
		key = h.oidc.Keypair
	}
	tok, err := key.SignJWT(claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func forEachStore(t *testing.T, fn func(t *testing.T, s *catalog.Store)) {
	catalogtest.ForEach(t, fn)
}

func sessionExists(t *testing.T, s *catalog.Store, token string) bool {
	t.Helper()
	_, err := s.Session(t.Context(), hashToken(token))
	if err != nil && !errors.Is(err, catalog.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func newStore(t *testing.T) *catalog.Store { return catalogtest.SQLite(t) }
