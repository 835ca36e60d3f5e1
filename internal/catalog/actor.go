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
