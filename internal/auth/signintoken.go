package auth

import (
	"context"
	"strings"
	"sync"
	"time"
)

// The console may send the signed-in user's own access token to an agent
// whose card names this registry's provider (an openIdConnect scheme at
// its issuer): "use my sign-in token". The token the sign-in got is kept
// for that, in this process's memory only, by the session's hash: never in
// the sessions table (which holds only the hash), a log or a page. It is
// forgotten at sign-out, at its expiry, and when the process ends; another
// replica, or this one after a restart, has none until the user signs in
// again.

// maxSignInTokens bounds the tokens kept; the oldest goes first.
const maxSignInTokens = 10000

type heldToken struct {
	token   string
	expires time.Time
}

type signInTokens struct {
	mu sync.Mutex
	m  map[string]heldToken
}

func (s *signInTokens) put(session, token string, expires, now time.Time) {
	if token == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]heldToken{}
	}
	// A sign-in is rare next to requests: each one drops the expired
	// tokens, and the one closest to expiring when the bound is reached.
	oldest, at := "", time.Time{}
	for k, h := range s.m {
		if !now.Before(h.expires) {
			delete(s.m, k)
			continue
		}
		if oldest == "" || h.expires.Before(at) {
			oldest, at = k, h.expires
		}
	}
	if len(s.m) >= maxSignInTokens {
		delete(s.m, oldest)
	}
	s.m[session] = heldToken{token: token, expires: expires}
}

func (s *signInTokens) get(session string, now time.Time) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.m[session]
	if !ok {
		return "", false
	}
	if !now.Before(h.expires) {
		delete(s.m, session)
		return "", false
	}
	return h.token, true
}

func (s *signInTokens) drop(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, session)
}

// SignInToken returns the access token the caller's session signed in
// with, when this process still holds it (see above).
func (a *Authenticator) SignInToken(ctx context.Context) (string, bool) {
	ra, ok := authFromContext(ctx)
	if !ok || ra.session == "" {
		return "", false
	}
	return a.tokens.get(ra.session, a.now())
}

// Issuer is the provider's issuer URL; empty in development mode.
func (a *Authenticator) Issuer() string {
	if a.dev {
		return ""
	}
	return a.cfg.Issuer
}

// NamesIssuer tells whether an openIdConnect scheme's discovery URL is
// that of issuer: the issuer itself, or its
// /.well-known/openid-configuration (OpenID Connect Discovery 1.0 §4).
func NamesIssuer(openIDConnectURL, issuer string) bool {
	if issuer == "" || openIDConnectURL == "" {
		return false
	}
	iss := strings.TrimSuffix(issuer, "/")
	u := strings.TrimSuffix(openIDConnectURL, "/")
	return u == iss || u == iss+"/.well-known/openid-configuration"
}
