package auth

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/labstack/echo/v4"
	"golang.org/x/oauth2"

	"github.com/a2aregistry/registry/internal/catalog"
)

// Paths of the sign-in routes.
const (
	LoginPath    = "/auth/login"
	CallbackPath = "/auth/callback"
	LogoutPath   = "/auth/logout"
	// SignedOutPath is where sign-out lands: a page open to anyone that
	// only links to sign-in. Landing on "/" instead would, where pages
	// need a role, send the browser straight to the provider, whose own
	// session (SSO) would sign the user back in at once.
	SignedOutPath = "/signed-out"
)

// Mount adds the sign-in routes to e:
//
//	GET  /auth/login?next=/path  starts a sign-in at the provider
//	GET  /auth/callback          where the provider sends the browser back
//	POST /auth/logout            ends the session, behind writes, and
//	                             sends the browser to SignedOutPath
//
// writes is the registry's CSRF check (the console's), which auth does
// not make: it authenticates and authorizes only. Mount also puts
// Middleware in front of every route of e, so every handler can read
// FromContext.
func (a *Authenticator) Mount(e *echo.Echo, writes ...echo.MiddlewareFunc) {
	e.Use(a.Middleware())
	e.GET(LoginPath, a.login)
	e.GET(CallbackPath, a.callback)
	e.POST(LogoutPath, a.logout, writes...)
}

// pendingLogin is what a login needs to remember between the redirect to
// the provider and the redirect back: the state (RFC 6749 §10.12), the
// nonce (OpenID Connect Core §3.1.2.1) and the PKCE verifier (RFC 7636).
// It lives in a short-lived cookie of the browser that started the
// login, so any replica can finish it, and is cleared when used.
type pendingLogin struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Next     string `json:"next"`
}

// loginCookieName is the cookie of the login with this state.
func (a *Authenticator) loginCookieName(state string) string {
	if len(state) > 16 {
		state = state[:16]
	}
	return a.cookieName(loginCookie + state)
}

func (a *Authenticator) login(c echo.Context) error {
	next := safeNext(c.QueryParam("next"))
	if a.dev || FromContext(c.Request().Context()).Source == SourceSession {
		return c.Redirect(http.StatusSeeOther, next)
	}
	oc, _, _, err := a.provider(c.Request().Context())
	if err != nil {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "the sign-in provider cannot be reached; try again later").SetInternal(err)
	}
	pl := pendingLogin{State: randomToken(), Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(), Next: next}
	b, err := json.Marshal(pl)
	if err != nil {
		return err
	}
	c.SetCookie(&http.Cookie{
		Name: a.loginCookieName(pl.State), Value: base64.RawURLEncoding.EncodeToString(b), Path: "/",
		MaxAge: int(pendingLoginTTL.Seconds()), HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode,
	})
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusFound, oc.AuthCodeURL(pl.State, oidc.Nonce(pl.Nonce), oauth2.S256ChallengeOption(pl.Verifier)))
}

func (a *Authenticator) callback(c echo.Context) error {
	if a.dev {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	r := c.Request()
	ctx := r.Context()
	c.Response().Header().Set("Cache-Control", "no-store")
	state := c.QueryParam("state")
	pl, err := a.takePendingLogin(c, state)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "this sign-in expired or was not started here; sign in again").SetInternal(err)
	}
	if e := c.QueryParam("error"); e != "" {
		// RFC 6749 §4.1.2.1: the provider refused (the user said no, or
		// the client is misconfigured).
		return echo.NewHTTPError(http.StatusUnauthorized, "the sign-in provider refused: "+e).
			SetInternal(fmt.Errorf("%w: provider error %q: %s", ErrLoginFailed, e, c.QueryParam("error_description")))
	}
	oc, idVerifier, _, err := a.provider(ctx)
	if err != nil {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "the sign-in provider cannot be reached; try again later").SetInternal(err)
	}
	tok, err := oc.Exchange(oidc.ClientContext(ctx, a.client), c.QueryParam("code"), oauth2.VerifierOption(pl.Verifier))
	if err != nil {
		return loginFailed(fmt.Errorf("exchanging the code: %w", err))
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return loginFailed(errors.New("the token response has no id_token"))
	}
	idTok, err := idVerifier.Verify(ctx, raw)
	if err != nil {
		return loginFailed(fmt.Errorf("verifying the ID token: %w", err))
	}
	if subtle.ConstantTimeCompare([]byte(idTok.Nonce), []byte(pl.Nonce)) != 1 {
		return loginFailed(errors.New("the ID token's nonce is not this login's"))
	}
	p, err := a.principal(idTok)
	if err != nil {
		return loginFailed(err)
	}
	if p.Role == 0 {
		a.log.Info("sign-in refused: no role", "subject", p.Subject, "email", p.Email)
		refused := p
		refused.Source = SourceSession
		if err := a.cfg.Sessions.RecordRefusedSignIn(ctx, ActorOf(refused, RequestOf(c)), p.Subject, "no role"); err != nil {
			a.log.Error("auditing a refused sign-in", "err", err)
		}
		return echo.NewHTTPError(http.StatusForbidden, "you signed in, but this registry grants your account no role").SetInternal(ErrNoRole)
	}
	// The session's user is the actor of its own sign-in.
	p.Source = SourceSession
	token, err := a.startSession(c, p)
	if err != nil {
		return err
	}
	p.Source = SourceSession
	c.SetRequest(r.WithContext(withAuth(ctx, &requestAuth{principal: p, csrf: sessionCSRF(token)})))
	a.log.Info("signed in", "subject", p.Subject, "email", p.Email, "role", p.Role.String())
	return c.Redirect(http.StatusSeeOther, pl.Next)
}

func loginFailed(err error) error {
	return echo.NewHTTPError(http.StatusUnauthorized, "sign-in failed; sign in again").
		SetInternal(fmt.Errorf("%w: %w", ErrLoginFailed, err))
}

// takePendingLogin returns the login whose state the callback carries
// and clears its cookie, so a state serves once.
func (a *Authenticator) takePendingLogin(c echo.Context, state string) (pendingLogin, error) {
	if state == "" {
		return pendingLogin{}, fmt.Errorf("%w: no state", ErrLoginState)
	}
	name := a.loginCookieName(state)
	ck, err := c.Request().Cookie(name)
	if err != nil {
		return pendingLogin{}, fmt.Errorf("%w: no login cookie", ErrLoginState)
	}
	c.SetCookie(&http.Cookie{Name: name, Path: "/", MaxAge: -1, HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode})
	b, err := base64.RawURLEncoding.DecodeString(ck.Value)
	var pl pendingLogin
	if err == nil {
		err = json.Unmarshal(b, &pl)
	}
	if err != nil {
		return pendingLogin{}, fmt.Errorf("%w: unreadable login cookie", ErrLoginState)
	}
	if pl.State == "" || subtle.ConstantTimeCompare([]byte(pl.State), []byte(state)) != 1 {
		return pendingLogin{}, fmt.Errorf("%w: state does not match", ErrLoginState)
	}
	pl.Next = safeNext(pl.Next)
	return pl, nil
}

// startSession stores a session for p and sets its cookie. The cookie
// holds a random token; the catalog holds only its hash.
func (a *Authenticator) startSession(c echo.Context, p Principal) (string, error) {
	token := randomToken()
	now := a.now().UTC()
	s := catalog.Session{
		IDHash: hashToken(token), Subject: p.Subject, Email: p.Email, Name: p.Name,
		Role: p.Role.String(), Groups: p.Groups,
		CreatedAt: now, LastSeenAt: now, IdleExpiresAt: now.Add(min(a.cfg.SessionIdle, a.cfg.SessionMax)),
		ExpiresAt: now.Add(a.cfg.SessionMax),
	}
	ctx := c.Request().Context()
	if err := a.cfg.Sessions.CreateSession(ctx, ActorOf(p, RequestOf(c)), s); err != nil {
		return "", fmt.Errorf("starting session: %w", err)
	}
	// A session this browser had before is replaced, not left to expire.
	if old, err := c.Request().Cookie(a.cookieName(sessionCookie)); err == nil && old.Value != "" {
		if err := a.cfg.Sessions.DeleteSession(ctx, sessionActor, hashToken(old.Value)); err != nil {
			a.log.Warn("deleting the replaced session", "err", err)
		}
	}
	a.setCookie(c, sessionCookie, token, a.cfg.SessionMax)
	// A CSRF cookie of the signed-out browser is no longer used.
	a.clearCookie(c, csrfCookie)
	return token, nil
}

// logout ends the caller's session: the row is deleted, so the cookie is
// worthless on every replica at once, even if it was copied.
func (a *Authenticator) logout(c echo.Context) error {
	if !a.dev {
		if ck, err := c.Request().Cookie(a.cookieName(sessionCookie)); err == nil && ck.Value != "" {
			p := FromContext(c.Request().Context())
			if err := a.cfg.Sessions.DeleteSession(c.Request().Context(), ActorOf(p, RequestOf(c)), hashToken(ck.Value)); err != nil {
				return fmt.Errorf("signing out: %w", err)
			}
			a.log.Info("signed out", "subject", p.Subject, "email", p.Email)
		}
		a.clearCookie(c, sessionCookie)
	}
	return c.Redirect(http.StatusSeeOther, SignedOutPath)
}

// safeNext returns next when it is a path on this site, "/" otherwise,
// so sign-in cannot be used to send a user elsewhere (an open redirect).
// Browsers read "\" as "/" and drop tabs and newlines, so "/\evil" and
// "/\t/evil" would leave the site: any of them refuses next.
func safeNext(next string) string {
	if next == "" || next[0] != '/' || strings.HasPrefix(next, "//") ||
		strings.ContainsFunc(next, func(r rune) bool { return r == '\\' || r < 0x20 || r == 0x7f }) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || strings.HasPrefix(u.Path, "/auth/") {
		return "/"
	}
	return next
}
