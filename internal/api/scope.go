package api

import (
	"context"
	"errors"
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
)

// ScopeOf is what caller p may see of the catalog, the one rule the API
// and the console share:
//   - admins (and the local user of development mode) see every agent;
//   - editors see agents in every listing state (pending and rejected too,
//     to review them), but only in the collections their groups open;
//   - viewers, testers and anonymous callers see approved and deprecated
//     agents in the collections their groups open.
//
// An agent in no collection, or in a collection without groups, is open to
// everyone; one only in restricted collections to the holders of one of
// their groups (Principal.Groups, from the roles claim or
// --oidc-groups-claim).
func ScopeOf(p auth.Principal) catalog.Scope {
	switch {
	case p.Source == auth.SourceDev || p.Role >= auth.Admin:
		return catalog.ScopeAll
	case p.Role >= auth.Editor:
		return catalog.Scope{Review: true, Groups: p.Groups}
	default:
		return catalog.Scope{Groups: p.Groups}
	}
}

// scope is the scope of request c: ScopeOf its caller, or everything when
// the API runs without sign-in (development on loopback, tests), where
// every route is open.
func (a *API) scope(c echo.Context) catalog.Scope {
	return a.scopeCtx(c.Request().Context())
}

func (a *API) scopeCtx(ctx context.Context) catalog.Scope {
	if a.authz == nil {
		return catalog.ScopeAll
	}
	return ScopeOf(auth.FromContext(ctx))
}

// mustSee answers 404 for an agent the caller does not see, before a
// write that would otherwise tell it exists.
func (a *API) mustSee(c echo.Context, id string) error {
	sc := a.scope(c)
	if sc.All {
		return nil
	}
	_, err := a.catalog.Agent(c.Request().Context(), sc, id)
	if errors.Is(err, catalog.ErrNotFound) {
		return agentNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("reading agent %s: %w", id, err)
	}
	return nil
}
