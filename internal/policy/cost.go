package policy

import (
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
)

// Every rule runs under CostLimit, but cel-go's run-time meter observes
// every step of an evaluation and was two thirds of its cost. So a rule
// whose worst case can be proven under the limit runs without it: its
// cost is estimated when the policy is loaded (cel-go's static
// estimator, the one Kubernetes runs on admission rules) on an agent
// whose lists and strings are within the bounds below, and an agent is
// evaluated that way only when it is within them (Agent.bounded). An
// agent beyond them, and a rule whose worst case is not proven (one that
// walks the published card, whose shape is the publisher's, or nests
// comprehensions over long lists), runs metered.
const (
	// boundList bounds every list of a bounded agent; real cards have a
	// few interfaces, schemes and findings.
	boundList = 256
	// boundString bounds every string of a bounded agent, in bytes (a
	// CEL size counts code points, never more); card.DefaultLimits caps
	// a card's strings at the same 64 KiB.
	boundString = 64 << 10
)

// boundedAgent is the static cost estimator's view of `agent`: its lists
// and strings within the bounds, the published card unknown.
type boundedAgent struct{}

func (boundedAgent) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	path := n.Path()
	if len(path) == 0 || path[0] != "agent" || (len(path) > 1 && path[1] == "card") {
		return nil
	}
	switch n.Type().Kind() {
	case types.StringKind:
		return &checker.SizeEstimate{Min: 0, Max: boundString}
	case types.ListKind, types.MapKind:
		return &checker.SizeEstimate{Min: 0, Max: boundList}
	}
	return nil
}

func (boundedAgent) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// bounded reports whether every list and string of a (the published card
// aside) is within boundList and boundString.
func (a *Agent) bounded() bool {
	ok := strs(a.Name, a.SignatureStatus, a.Health, a.Publisher.Domain) && list(a.ProtocolVersions) && strs(a.ProtocolVersions...) &&
		list(a.Interfaces) && list(a.SecuritySchemes) && list(a.Signatures) && list(a.ContentFindings) && list(a.LintFindings) &&
		list(a.Provenance) && strs(a.Provenance...) && strs(a.VersionSource)
	for _, in := range a.Interfaces {
		ok = ok && strs(in.URL, in.Binding, in.ProtocolVersion, in.Probe)
	}
	for _, s := range a.SecuritySchemes {
		ok = ok && strs(s.Name, s.Type)
	}
	for _, s := range a.Signatures {
		ok = ok && strs(s.Alg, s.KID, s.KeySource, s.Verdict)
	}
	for _, fs := range [][]Finding{a.ContentFindings, a.LintFindings} {
		for _, f := range fs {
			ok = ok && strs(f.Code, f.Severity, f.Path)
		}
	}
	return ok
}

func list[T any](l []T) bool { return len(l) <= boundList }

func strs(ss ...string) bool {
	for _, s := range ss {
		if len(s) > boundString {
			return false
		}
	}
	return true
}
