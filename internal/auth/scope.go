package auth

import "github.com/a2aregistry/registry/internal/catalog"

// ScopeOf is what caller p may see of the catalog, the one rule every door
// shares:
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
func ScopeOf(p Principal) catalog.Scope {
	switch {
	case p.Source == SourceDev || p.Role >= Admin:
		return catalog.ScopeAll
	case p.Role >= Editor:
		return catalog.Scope{Review: true, Groups: p.Groups}
	default:
		return catalog.Scope{Groups: p.Groups}
	}
}

// ActorOf is who the catalog records as making the writes of caller p,
// with what the audit log needs: req carries the request's facts (its id
// and client address), to which ActorOf adds the caller's name, email and
// role. A signed-in user is named by their subject; in development mode
// (or with sign-in off) the registry acts on the request's behalf. Every
// door names one caller alike through it.
func ActorOf(p Principal, req catalog.Request) catalog.Actor {
	req.Email, req.DisplayName = p.Email, p.Name
	if p.Role >= Viewer {
		req.Role = p.Role.String()
	}
	switch {
	case p.SignedIn() && p.Subject != "":
		return catalog.User(p.Subject).For(req)
	case p.Source == SourceDev:
		return catalog.System("local-admin").For(req)
	default:
		// No authenticator in front (tests, embedding) or an anonymous
		// caller the anonymous role let through.
		return catalog.System("anonymous").For(req)
	}
}
