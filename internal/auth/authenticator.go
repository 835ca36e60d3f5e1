package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"github.com/a2aregistry/registry/internal/catalog"
)

// Causes of refusals, wrapped in the *echo.HTTPError the middleware and
// the /auth routes return (errors.Is sees them).
var (
	// ErrUnauthenticated: the route needs a role the anonymous caller
	// lacks, or the credentials sent (bearer token) are not valid. 401.
	ErrUnauthenticated = errors.New("auth: sign-in required")
	// ErrForbidden: the caller is known but their role is too low. 403.
	ErrForbidden = errors.New("auth: role too low")
	// ErrLoginState: a callback whose state matches no login this browser
	// started (expired, tampered, or another browser's). 400.
	ErrLoginState = errors.New("auth: unknown or expired login")
	// ErrLoginFailed: the provider refused the login or its answer did
	// not verify (code already used, bad ID token, wrong nonce). 401.
	ErrLoginFailed = errors.New("auth: sign-in failed")
	// ErrNoRole: the user signed in but no role is theirs (no mapping
	// matches and the default role is none). 403.
	ErrNoRole = errors.New("auth: no role for this user")
	// ErrProviderUnavailable: the provider's discovery document could not
	// be read. 503.
	ErrProviderUnavailable = errors.New("auth: sign-in provider unavailable")
)

// SessionStore keeps sessions where every replica sees them.
// *catalog.Store implements it.
type SessionStore interface {
	// CreateSession audits the sign-in as actor's.
	CreateSession(ctx context.Context, actor catalog.Actor, s catalog.Session) error
	// Session returns catalog.ErrNotFound for an unknown hash.
	Session(ctx context.Context, idHash string) (catalog.Session, error)
	TouchSession(ctx context.Context, idHash string, seen, idleExpires time.Time) error
	// DeleteSession audits a sign-out when actor is audited.
	DeleteSession(ctx context.Context, actor catalog.Actor, idHash string) error
	// RecordRefusedSignIn audits a user refused for want of a role.
	RecordRefusedSignIn(ctx context.Context, actor catalog.Actor, subject, reason string) error
}

// sessionActor names the registry's own session housekeeping (expiry, a
// session replaced by a new sign-in): not audited.
var sessionActor = catalog.System("auth")

// RoleMapping grants Role to users whose roles claim holds Value.
type RoleMapping struct {
	Role  Role
	Value string
}

// Config configures an Authenticator. With no Issuer it runs in
// development mode and needs nothing else.
type Config struct {
	// Issuer is the OIDC provider's issuer URL; empty for development mode.
	Issuer       string
	ClientID     string
	ClientSecret string
	// Scopes requested at sign-in; "openid", "email" and "profile" when nil.
	Scopes []string
	// PublicURL is where browsers reach the registry; the redirect URL is
	// PublicURL + "/auth/callback" and cookies are Secure when it is https.
	PublicURL string
	// RolesClaim names the claim whose values Roles map; a dotted name
	// ("realm_access.roles") walks nested objects when no top-level claim
	// has the full name.
	RolesClaim string
	// GroupsClaim names the claim whose values are the principal's Groups
	// (they open restricted collections); RolesClaim when empty.
	GroupsClaim string
	Roles       []RoleMapping
	// DefaultRole is the role of a user no mapping matches; zero refuses
	// them.
	DefaultRole Role
	// APIAudience is the audience bearer tokens must name; ClientID when
	// empty.
	APIAudience string
	// AnonymousRole is the role of callers who did not sign in; zero
	// grants nothing.
	AnonymousRole Role
	SessionIdle   time.Duration
	SessionMax    time.Duration
	Sessions      SessionStore
	// HTTPClient talks to the provider; a client with a 10 s timeout when
	// nil.
	HTTPClient *http.Client
	// Now is the clock of sessions and token expiry; time.Now when nil.
	Now    func() time.Time
	Logger *slog.Logger
}

// Cookie names. With an https public URL they get the __Host- prefix
// (RFC 6265bis §4.1.3.2): Secure, no Domain, Path=/, so no other host,
// not even a sibling subdomain, can plant them.
const (
	sessionCookie = "registry_session"
	csrfCookie    = "registry_csrf"
	// loginCookie + a prefix of the state holds one pending login, so
	// logins started in several tabs do not overwrite each other.
	loginCookie = "registry_login_"
)

// Timing of sessions and logins.
const (
	// pendingLoginTTL bounds the time between starting a login and the
	// provider's redirect back.
	pendingLoginTTL = 10 * time.Minute
	// touchInterval: a session's idle expiry moves at most this often,
	// so an active browser does not write a row on every request.
	touchInterval = time.Minute
	// providerTimeout bounds discovery and token requests.
	providerTimeout = 10 * time.Second
	// discoveryRetry is how long a failed discovery is not retried.
	discoveryRetry = 30 * time.Second
)

// Authenticator identifies the caller of each request (session cookie,
// bearer token, or anonymous; the local admin in development mode),
// guards routes by role (it is an Authorizer) and serves the /auth routes.
type Authenticator struct {
	cfg    Config
	dev    bool
	secure bool
	roles  map[string]Role
	client *http.Client
	now    func() time.Time
	log    *slog.Logger

	// The provider is discovered on first use, not at start-up, so the
	// registry starts (and serves anonymous and bearer-less callers)
	// while the provider is down; mu guards the fields below.
	mu          sync.Mutex
	oauth       *oauth2.Config
	idVerifier  *oidc.IDTokenVerifier
	apiVerifier *oidc.IDTokenVerifier
	// lastErr is the last failed discovery, retried only after
	// discoveryRetry so a provider outage does not make every request
	// wait for a timeout of its own.
	lastErr   error
	lastErrAt time.Time
}

// New returns an Authenticator over cfg. It does not contact the provider.
func New(cfg Config) (*Authenticator, error) {
	a := &Authenticator{cfg: cfg, dev: cfg.Issuer == "", client: cfg.HTTPClient, now: cfg.Now, log: cfg.Logger}
	if a.now == nil {
		a.now = time.Now
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.client == nil {
		// Not the safe outbound client: the provider is the operator's
		// choice, not a card's, and often lives on a private network.
		a.client = &http.Client{Timeout: providerTimeout}
	}
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("auth: public URL %q is not an absolute URL", cfg.PublicURL)
		}
		a.secure = u.Scheme == "https"
	}
	if a.dev {
		return a, nil
	}
	switch {
	case cfg.ClientID == "":
		return nil, errors.New("auth: an issuer needs a client id")
	case cfg.PublicURL == "":
		return nil, errors.New("auth: an issuer needs a public URL for the redirect")
	case cfg.Sessions == nil:
		return nil, errors.New("auth: an issuer needs a session store")
	case cfg.SessionIdle <= 0 || cfg.SessionMax <= 0:
		return nil, errors.New("auth: session lifetimes must be positive")
	}
	if a.cfg.RolesClaim == "" {
		a.cfg.RolesClaim = "groups"
	}
	if len(a.cfg.Scopes) == 0 {
		a.cfg.Scopes = []string{oidc.ScopeOpenID, "email", "profile"}
	}
	a.roles = map[string]Role{}
	for _, m := range cfg.Roles {
		a.roles[m.Value] = max(a.roles[m.Value], m.Role)
	}
	return a, nil
}

// DevMode reports whether no provider is configured.
func (a *Authenticator) DevMode() bool { return a.dev }

// Middleware identifies the caller of every request and puts them in the
// request context (FromContext, CSRFToken), so pages that need no role
// still know who is looking. It refuses nothing: RequireRole does.
func (a *Authenticator) Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			a.identify(c)
			return next(c)
		}
	}
}

// RequireRole implements Authorizer. A caller without role is refused:
//   - bad credentials (a bearer token that does not verify): 401 with
//     WWW-Authenticate: Bearer error="invalid_token" (RFC 6750 §3.1);
//   - an anonymous caller: on the API 401 with WWW-Authenticate: Bearer,
//     on console pages a redirect to sign-in for GET and HEAD, 401 else;
//   - a known caller whose role is too low: 403.
//
// Cross-site request forgery is not its business: the registry's one CSRF
// check (the console's) guards every state-changing route.
func (a *Authenticator) RequireRole(need Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ra := a.identify(c)
			p := ra.principal
			if errors.Is(ra.err, ErrProviderUnavailable) {
				return echo.NewHTTPError(http.StatusServiceUnavailable, "the sign-in provider cannot be reached to check the token").SetInternal(ra.err)
			}
			if ra.err != nil {
				return a.unauthenticated(c, ra.err)
			}
			if !p.Role.Includes(need) {
				if !p.SignedIn() && p.Source != SourceDev {
					return a.unauthenticated(c, nil)
				}
				return echo.NewHTTPError(http.StatusForbidden,
					fmt.Sprintf("this needs the %s role", need)).SetInternal(ErrForbidden)
			}
			return next(c)
		}
	}
}

func (a *Authenticator) unauthenticated(c echo.Context, cause error) error {
	r := c.Request()
	if !isAPIPath(r.URL.Path) && cause == nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		return c.Redirect(http.StatusSeeOther, "/auth/login?next="+url.QueryEscape(safeNext(r.URL.RequestURI())))
	}
	challenge := `Bearer realm="registry"`
	msg := "sign-in required: send Authorization: Bearer <token>"
	if cause != nil {
		challenge += `, error="invalid_token"`
		msg = "the bearer token is not valid"
	} else {
		cause = ErrUnauthenticated
	}
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, challenge)
	return echo.NewHTTPError(http.StatusUnauthorized, msg).SetInternal(cause)
}

// identify resolves the caller of c's request once and stores the answer
// in the request context.
func (a *Authenticator) identify(c echo.Context) *requestAuth {
	r := c.Request()
	if ra, ok := authFromContext(r.Context()); ok {
		return ra
	}
	ra := a.resolve(c)
	c.SetRequest(r.WithContext(withAuth(r.Context(), ra)))
	return ra
}

func (a *Authenticator) resolve(c echo.Context) *requestAuth {
	r := c.Request()
	if a.dev {
		return &requestAuth{principal: devPrincipal, csrf: a.browserCSRF(c)}
	}
	if h := r.Header.Get(echo.HeaderAuthorization); h != "" {
		p, err := a.bearer(r.Context(), h)
		if err != nil {
			// The token is not logged: it is a credential. The request
			// log shows the refusal with its cause.
			a.log.Debug("bearer token refused", "err", err, "path", r.URL.Path)
			return &requestAuth{principal: Principal{}, err: fmt.Errorf("%w: %w", ErrUnauthenticated, err)}
		}
		return &requestAuth{principal: p}
	}
	if ck, err := r.Cookie(a.cookieName(sessionCookie)); err == nil && ck.Value != "" {
		if p, ok := a.session(r.Context(), ck.Value); ok {
			return &requestAuth{principal: p, csrf: sessionCSRF(ck.Value), session: hashToken(ck.Value)}
		}
		// Expired or revoked: forget it, so the browser stops sending it.
		a.clearCookie(c, sessionCookie)
	}
	return &requestAuth{principal: Principal{Role: a.cfg.AnonymousRole}, csrf: a.browserCSRF(c)}
}

// session returns the principal of the session whose token is token,
// and moves its idle expiry.
func (a *Authenticator) session(ctx context.Context, token string) (Principal, bool) {
	hash := hashToken(token)
	s, err := a.cfg.Sessions.Session(ctx, hash)
	if err != nil {
		if !errors.Is(err, catalog.ErrNotFound) {
			a.log.Error("reading session", "err", err)
		}
		return Principal{}, false
	}
	now := a.now()
	if !now.Before(s.IdleExpiresAt) || !now.Before(s.ExpiresAt) {
		if err := a.cfg.Sessions.DeleteSession(ctx, sessionActor, hash); err != nil {
			a.log.Warn("deleting expired session", "err", err)
		}
		return Principal{}, false
	}
	role, err := ParseRole(s.Role)
	if err != nil {
		a.log.Error("session with an unknown role", "role", s.Role)
		return Principal{}, false
	}
	if now.Sub(s.LastSeenAt) >= touchInterval {
		if err := a.cfg.Sessions.TouchSession(ctx, hash, now, now.Add(a.cfg.SessionIdle)); err != nil {
			a.log.Warn("touching session", "err", err)
		}
	}
	return Principal{Subject: s.Subject, Email: s.Email, Name: s.Name, Role: role, Groups: s.Groups, Source: SourceSession}, true
}

// bearer verifies an Authorization header's bearer token: signature by
// the provider's keys, issuer, expiry, and audience (RFC 9068 §4 asks
// the same of JWT access tokens).
func (a *Authenticator) bearer(ctx context.Context, header string) (Principal, error) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return Principal{}, errors.New("authorization header is not a bearer token")
	}
	_, _, apiVerifier, err := a.provider(ctx)
	if err != nil {
		return Principal{}, err
	}
	tok, err := apiVerifier.Verify(ctx, strings.TrimSpace(token))
	if err != nil {
		return Principal{}, err
	}
	p, err := a.principal(tok)
	if err != nil {
		return Principal{}, err
	}
	p.Source = SourceBearer
	return p, nil
}

// principal reads the user and their role from a verified token.
func (a *Authenticator) principal(tok *oidc.IDToken) (Principal, error) {
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return Principal{}, fmt.Errorf("reading token claims: %w", err)
	}
	roles := claimValues(claims, a.cfg.RolesClaim)
	p := Principal{Subject: tok.Subject, Groups: roles}
	if a.cfg.GroupsClaim != "" && a.cfg.GroupsClaim != a.cfg.RolesClaim {
		p.Groups = claimValues(claims, a.cfg.GroupsClaim)
	}
	if p.Subject == "" {
		return Principal{}, errors.New("token without subject")
	}
	p.Email, _ = claims["email"].(string)
	for _, k := range []string{"name", "preferred_username", "email"} {
		if v, ok := claims[k].(string); ok && v != "" {
			p.Name = v
			break
		}
	}
	for _, g := range roles {
		p.Role = max(p.Role, a.roles[g])
	}
	if p.Role == 0 {
		p.Role = a.cfg.DefaultRole
	}
	return p, nil
}

// claimValues returns the strings of a claim that is a string or a list.
func claimValues(claims map[string]any, name string) []string {
	v, ok := claims[name]
	if !ok {
		// A nested claim, as Keycloak's realm_access.roles.
		var cur any = claims
		for part := range strings.SplitSeq(name, ".") {
			m, isMap := cur.(map[string]any)
			if !isMap {
				return nil
			}
			cur = m[part]
		}
		v = cur
	}
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// provider discovers the provider on first use and returns the OAuth2
// client and the verifiers of ID tokens (audience: the client id) and
// API tokens (the API audience).
func (a *Authenticator) provider(ctx context.Context) (*oauth2.Config, *oidc.IDTokenVerifier, *oidc.IDTokenVerifier, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.oauth != nil {
		return a.oauth, a.idVerifier, a.apiVerifier, nil
	}
	if a.lastErr != nil && a.now().Sub(a.lastErrAt) < discoveryRetry {
		return nil, nil, nil, a.lastErr
	}
	dctx, cancel := context.WithTimeout(oidc.ClientContext(context.WithoutCancel(ctx), a.client), providerTimeout)
	defer cancel()
	p, err := oidc.NewProvider(dctx, a.cfg.Issuer)
	if err != nil {
		a.log.Warn("discovering the OIDC provider", "issuer", a.cfg.Issuer, "err", err)
		a.lastErr, a.lastErrAt = fmt.Errorf("%w: %w", ErrProviderUnavailable, err), a.now()
		return nil, nil, nil, a.lastErr
	}
	a.oauth = &oauth2.Config{
		ClientID:     a.cfg.ClientID,
		ClientSecret: a.cfg.ClientSecret,
		Endpoint:     p.Endpoint(),
		RedirectURL:  strings.TrimSuffix(a.cfg.PublicURL, "/") + "/auth/callback",
		Scopes:       a.cfg.Scopes,
	}
	a.idVerifier = p.Verifier(&oidc.Config{ClientID: a.cfg.ClientID, Now: a.now})
	aud := a.cfg.APIAudience
	if aud == "" {
		aud = a.cfg.ClientID
	}
	a.apiVerifier = p.Verifier(&oidc.Config{ClientID: aud, Now: a.now})
	return a.oauth, a.idVerifier, a.apiVerifier, nil
}

// browserCSRF returns the CSRF token of a browser without a session,
// kept in a cookie of its own and set on its first page view.
func (a *Authenticator) browserCSRF(c echo.Context) string {
	r := c.Request()
	if ck, err := r.Cookie(a.cookieName(csrfCookie)); err == nil && len(ck.Value) >= 32 {
		return ck.Value
	}
	// Only pages get one: API responses, health checks and scrapers
	// should not collect cookies.
	if isAPIPath(r.URL.Path) || !isSafeMethod(r.Method) || !strings.Contains(r.Header.Get(echo.HeaderAccept), echo.MIMETextHTML) {
		return ""
	}
	tok := randomToken()
	a.setCookie(c, csrfCookie, tok, 0)
	return tok
}

// sessionCSRF derives a session's CSRF token from its token, so it needs
// no storage and changes at every sign-in. It reveals nothing of the
// session token (SHA-256 is one-way).
func sessionCSRF(sessionToken string) string {
	sum := sha256.Sum256([]byte("registry csrf\x00" + sessionToken))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// hashToken is what the catalog stores of a session token.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// randomToken returns 256 random bits, base64url.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (a *Authenticator) cookieName(base string) string {
	if a.secure {
		return "__Host-" + base
	}
	return base
}

// setCookie sets an HttpOnly, SameSite=Lax cookie on Path=/; maxAge 0
// makes it last until the browser closes. Lax lets the provider's
// redirect back (a top-level GET) carry the login cookie, and keeps
// cookies off cross-site POSTs.
func (a *Authenticator) setCookie(c echo.Context, base, value string, maxAge time.Duration) {
	c.SetCookie(&http.Cookie{
		Name: a.cookieName(base), Value: value, Path: "/",
		MaxAge: int(maxAge / time.Second), HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode,
	})
}

func (a *Authenticator) clearCookie(c echo.Context, base string) {
	c.SetCookie(&http.Cookie{
		Name: a.cookieName(base), Value: "", Path: "/",
		MaxAge: -1, HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode,
	})
}

// isAPIPath tells the JSON API's paths from the console's: the API
// answers in JSON and with WWW-Authenticate, the console redirects.
func isAPIPath(p string) bool {
	// /ard/ is the ARD registry API (internal/ard): machine clients too,
	// answered 401 with a challenge rather than sent to sign in.
	return p == "/api" || strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/ard/")
}

// isSafeMethod: RFC 9110 §9.2.1.
func isSafeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// Issuer is the provider's issuer URL; empty in development mode.
func (a *Authenticator) Issuer() string {
	if a.dev {
		return ""
	}
	return a.cfg.Issuer
}
