package proxy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/a2aregistry/registry/internal/card"
)

// Choice narrows the interfaces a call may use. The zero Choice lets the
// proxy walk the card's interfaces in order of preference.
type Choice struct {
	// URL is a declared interface URL; empty means any.
	URL string
	// Binding and Version narrow a URL declared more than once (the same
	// URL in a mixed card's v1.0 and v0.3 views); empty means any.
	Binding string
	Version string
	// SpeakVersion is the protocol version to speak on an interface whose
	// declared version is card.VersionUnknown ("1.0" or "0.3"). The proxy
	// never picks one itself: the wrong guess sends the wrong wire format.
	SpeakVersion string
}

// Endpoint is one interface the proxy will try, with the version it speaks
// there.
type Endpoint struct {
	card.Interface
	// Speaks is the protocol version used on the wire: the declared one,
	// or Choice.SpeakVersion for an interface of unknown version.
	Speaks string
}

// Skipped is a declared interface the proxy did not try, and why.
type Skipped struct {
	Interface card.Interface
	Reason    string
}

// endpoints lists the interfaces to try, in order. A caller's pick is the
// only one tried: a tester who asks for the gRPC interface wants to know
// whether the gRPC interface works, not to be served by another. Without a
// pick, the card's order (the first is the preferred one, v1.0
// AgentCard.supportedInterfaces) is kept, and interfaces the proxy cannot
// speak are skipped with their reason.
func endpoints(c *card.Card, ch Choice) ([]Endpoint, []Skipped, error) {
	var out []Endpoint
	var skipped []Skipped
	matched := false
	for _, in := range c.Interfaces {
		if ch.URL != "" && in.URL != ch.URL {
			continue
		}
		if ch.Binding != "" && in.Binding != ch.Binding {
			continue
		}
		// An interface of unknown version matches any: the version is
		// then the one the caller speaks (SpeakVersion).
		if ch.Version != "" && in.ProtocolVersion != ch.Version && in.ProtocolVersion != card.VersionUnknown {
			continue
		}
		matched = true
		speaks := in.ProtocolVersion
		if speaks == card.VersionUnknown {
			if ch.SpeakVersion == "" {
				skipped = append(skipped, Skipped{in, "the card declares no protocol version for this interface"})
				continue
			}
			speaks = ch.SpeakVersion
		}
		if _, ok := wireVersion(speaks); !ok {
			skipped = append(skipped, Skipped{in, fmt.Sprintf("protocol version %s is not one the proxy speaks (1.x, 0.2, 0.3)", speaks)})
			continue
		}
		switch in.Binding {
		case card.BindingJSONRPC, card.BindingHTTPJSON, card.BindingGRPC:
		default:
			skipped = append(skipped, Skipped{in, fmt.Sprintf("binding %s is not one the proxy speaks", in.Binding)})
			continue
		}
		out = append(out, Endpoint{Interface: in, Speaks: speaks})
	}
	switch {
	case ch.URL != "" && !matched:
		return nil, nil, fmt.Errorf("%w: %s", ErrInterfaceNotDeclared, ch.URL)
	case len(out) == 0 && len(skipped) > 0 && allUnknown(skipped):
		return nil, skipped, ErrVersionUnknown
	case len(out) == 0:
		return nil, skipped, ErrNoUsableInterface
	}
	return out, skipped, nil
}

func allUnknown(s []Skipped) bool {
	for _, k := range s {
		if k.Interface.ProtocolVersion != card.VersionUnknown {
			return false
		}
	}
	return true
}

// wireVersion maps a declared major.minor onto the two wire formats the
// SDK speaks: v1.x through its own transports, 0.2 and 0.3 through
// a2acompat/a2av0 (the 0.2.5 JSON-RPC methods are those of 0.3).
func wireVersion(v string) (v1 bool, ok bool) {
	major, minor, found := strings.Cut(v, ".")
	if !found {
		return false, false
	}
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return false, false
	}
	switch {
	case ma == 1:
		return true, true
	case ma == 0 && (mi == 2 || mi == 3):
		return false, true
	}
	return false, false
}
