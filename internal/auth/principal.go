package auth

import (
	"context"
	"fmt"
	"strings"
)

// Source tells how the caller of a request was identified.
type Source int

// The sources of a principal.
const (
	// SourceAnonymous: nobody signed in. The principal holds the
	// anonymous role (none by default, so it may do nothing).
	SourceAnonymous Source = iota
	// SourceSession: a browser signed in through OIDC; the session cookie
	// names a row in the catalog.
	SourceSession
	// SourceBearer: an API client sent a token from the OIDC provider.
	SourceBearer
	// SourceDev: development mode, no OIDC provider configured; the local
	// user is admin.
	SourceDev
)

// Principal is the caller of a request: who they are and what they may do.
type Principal struct {
	// Subject is the provider's stable id of the user ("sub"), empty for
	// an anonymous caller.
	Subject string
	Email   string
	// Name is what to call the user: the "name" claim, else
	// "preferred_username", else the email.
	Name string
	// Role is what the caller may do; the zero Role may do nothing.
	Role Role
	// Groups are the values of the groups claim (the roles claim unless
	// --oidc-groups-claim names another) at sign-in.
	Groups []string
	Source Source
}

// SignedIn reports whether the caller is a user who signed in (session or
// bearer token), as opposed to an anonymous caller or development mode.
func (p Principal) SignedIn() bool {
	return p.Source == SourceSession || p.Source == SourceBearer
}

// devPrincipal is the local user of development mode.
var devPrincipal = Principal{Subject: "local", Name: "local user", Role: Admin, Source: SourceDev}

// requestAuth is what the Authenticator learned about a request.
type requestAuth struct {
	principal Principal
	// csrf is the token state-changing requests of this caller must
	// carry, empty when the caller is not a browser (bearer tokens).
	csrf string
	// err is why the request's credentials were refused, nil when they
	// were accepted or absent.
	err error
	// session is the hash of the caller's session token, "" without one.
	session string
}

type ctxKey struct{}

// FromContext returns the caller of the request whose context ctx is.
// Outside a request the Authenticator saw, it returns the zero Principal:
// anonymous, no role.
func FromContext(ctx context.Context) Principal {
	if ra, ok := ctx.Value(ctxKey{}).(*requestAuth); ok {
		return ra.principal
	}
	return Principal{}
}

// CSRFToken returns the token the caller's state-changing browser requests
// must carry, derived from the session (or kept in a cookie of a browser
// without one), or "" outside a request the Authenticator saw. Auth issues
// it with the session; the console's CSRF check compares it.
func CSRFToken(ctx context.Context) string {
	if ra, ok := ctx.Value(ctxKey{}).(*requestAuth); ok {
		return ra.csrf
	}
	return ""
}

// WithPrincipal returns ctx carrying p and csrf as the caller of a
// request, as the Authenticator does. It is for tests of handlers that
// read FromContext and CSRFToken.
func WithPrincipal(ctx context.Context, p Principal, csrf string) context.Context {
	return withAuth(ctx, &requestAuth{principal: p, csrf: csrf})
}

func withAuth(ctx context.Context, ra *requestAuth) context.Context {
	return context.WithValue(ctx, ctxKey{}, ra)
}

func authFromContext(ctx context.Context) (*requestAuth, bool) {
	ra, ok := ctx.Value(ctxKey{}).(*requestAuth)
	return ra, ok
}

// ParseRole reads a role name: viewer, tester, editor or admin. Case is
// ignored.
func ParseRole(s string) (Role, error) {
	for r := Viewer; r <= Admin; r++ {
		if strings.EqualFold(s, roleNames[r]) {
			return r, nil
		}
	}
	return 0, fmt.Errorf("unknown role %q: want viewer, tester, editor or admin", s)
}
