// Package auth says who the caller of a request is and what they may do:
// OIDC sign-in (authorization code flow with PKCE) into server-side
// sessions, bearer tokens from the same provider for the API, the
// anonymous role, and development mode (no provider: the local user is
// admin). The caller is a Principal in the request context (FromContext);
// routes declare the Role they need and an Authorizer guards them.
package auth

import (
	"fmt"

	"github.com/labstack/echo/v4"
)

// Role is what a caller may do. Roles are ordered: each includes every
// role below it.
type Role int

// The roles, least to most.
const (
	// Viewer reads the catalog: search, agents, versions, changes.
	Viewer Role = iota + 1
	// Tester may also send live requests to catalogued agents (probes,
	// the console's "try it"), which reach third parties in our name.
	Tester
	// Editor may also change the catalog: register and refresh agents.
	Editor
	// Admin may also manage trusted keys and users.
	Admin
)

var roleNames = [...]string{Viewer: "viewer", Tester: "tester", Editor: "editor", Admin: "admin"}

func (r Role) String() string {
	if r >= Viewer && r <= Admin {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Includes reports whether a caller holding r may use what needs need.
func (r Role) Includes(need Role) bool { return r >= need }

// Authorizer guards routes. RequireRole returns the middleware of a route
// that needs role: it lets a request through when its caller holds role
// or one that includes it, and otherwise answers 401 (no caller) or 403.
type Authorizer interface {
	RequireRole(role Role) echo.MiddlewareFunc
}
