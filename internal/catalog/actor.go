package catalog

import (
	"fmt"
	"strings"
)

// Actor is who makes a change. Every public write takes one, so that the
// audit log can record it in the same transaction as the change.
type Actor struct {
	Kind ActorKind
	// Name is the user's stable subject for ActorUser, the component
	// ("crawler", "verifier", "import", "cli") for ActorSystem.
	Name string
	// Request names the request a write was made for (who asked, from
	// where). It is what makes a write audited: the audit log records a
	// user's writes and those the registry makes on a request's behalf
	// (the local admin of development mode), never the crawler's and the
	// verifier's own background writes, which would flood it.
	Request *Request
}

// Request is the caller of the HTTP request behind a write, as the audit
// log records it.
type Request struct {
	// Email and DisplayName describe the user at the time of the write;
	// the subject (Actor.Name) is what stays stable.
	Email, DisplayName string
	// Role is the role the caller held ("viewer" … "admin").
	Role string
	// ID is the registry's id of the request (its X-Request-Id response
	// header), to find it in the logs.
	ID string
	// ClientID is the X-Request-Id the client sent, kept apart from ID
	// because a client chooses it.
	ClientID string
	// ClientAddr is the client's address as the server saw it.
	ClientAddr string
}

// ActorKind tells a person from the registry itself.
type ActorKind string

const (
	// ActorSystem is the registry acting on its own: the crawler, the
	// verifier, start-up imports, the command line.
	ActorSystem ActorKind = "system"
	// ActorUser is a signed-in user (or, in development mode, the local one).
	ActorUser ActorKind = "user"
)

// System is the registry component name acting on its own.
func System(name string) Actor { return Actor{Kind: ActorSystem, Name: name} }

// User is the signed-in user with the given subject.
func User(subject string) Actor { return Actor{Kind: ActorUser, Name: subject} }

// For returns a with the request it acts for, so its writes are audited.
func (a Actor) For(r Request) Actor {
	a.Request = &r
	return a
}

// audited reports whether a's writes go to the audit log: a user's
// always, the registry's own only on behalf of a request.
func (a Actor) audited() bool {
	return a.Kind == ActorUser || a.Request != nil
}

func (a Actor) String() string { return string(a.Kind) + ":" + a.Name }

// validate refuses an actor the audit log could not name.
func (a Actor) validate() error {
	switch {
	case a.Kind != ActorSystem && a.Kind != ActorUser:
		return fmt.Errorf("%w: actor kind %q", ErrInvalidQuery, a.Kind)
	case strings.TrimSpace(a.Name) == "":
		return fmt.Errorf("%w: actor without a name", ErrInvalidQuery)
	}
	return nil
}
