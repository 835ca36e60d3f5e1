package policy

import (
	"errors"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// Outcome is one rule's result on one agent version.
type Outcome string

const (
	OutcomePass Outcome = "pass"
	OutcomeFail Outcome = "fail"
	// OutcomeErrored: the expression failed at run time on this agent (a
	// missing card field, a cost limit reached). It is reported as a
	// finding and never enforced: a rule that cannot be judged must
	// neither pass silently nor hold or refuse an agent by accident.
	OutcomeErrored Outcome = "errored"
)

// Result is one rule's outcome.
type Result struct {
	RuleID  string
	Action  Action
	Outcome Outcome
	// Message is the rule's message when it failed; for an errored rule,
	// what went wrong (CEL's own words, which name no secret: the input
	// is a public card and the registry's findings).
	Message string
}

// Evaluation is a policy's verdict on one agent version.
type Evaluation struct {
	// Results has one entry per rule, in policy order.
	Results []Result
	// Action is the most severe action among failed rules (reject > hold
	// > flag), "" when none failed. Errored rules count as flags.
	Action Action
}

// Failing lists the ids of rules that failed or errored, in policy order
// (the `policy` search facet's values).
func (e Evaluation) Failing() []string {
	var out []string
	for _, r := range e.Results {
		if r.Outcome != OutcomePass {
			out = append(out, r.RuleID)
		}
	}
	return out
}

// First returns the first failed rule whose action is a, and whether
// there is one: the rule a hold or a refusal names.
func (e Evaluation) First(a Action) (Result, bool) {
	for _, r := range e.Results {
		if r.Outcome == OutcomeFail && r.Action == a {
			return r, true
		}
	}
	return Result{}, false
}

var errNotBool = errors.New("the expression did not give a bool")

// Evaluate runs every rule on a. It never fails: a rule's run-time error
// is that rule's Errored result.
func (p *Policy) Evaluate(a *Agent) Evaluation {
	ev := Evaluation{Results: make([]Result, len(p.rules))}
	bounded := a.bounded()
	// One activation for every rule, holding the agent already adapted
	// to a CEL value: each Eval would otherwise wrap both again.
	vars, err := cel.NewActivation(map[string]any{"agent": p.adapter.NativeToValue(a)})
	if err != nil {
		// A map of values is always an activation; should cel-go ever
		// refuse one, every rule says so rather than pass.
		for i, r := range p.rules {
			ev.Results[i] = Result{RuleID: r.ID, Action: r.Action, Outcome: OutcomeErrored, Message: err.Error()}
		}
		ev.Action = ActionFlag
		return ev
	}
	for i, r := range p.rules {
		res := Result{RuleID: r.ID, Action: r.Action, Outcome: OutcomePass}
		prg := r.metered
		if bounded && r.unmetered != nil {
			prg = r.unmetered
		}
		out, _, err := prg.Eval(vars)
		if err == nil {
			if b, ok := out.(types.Bool); !ok {
				err = errNotBool
			} else if !b {
				res.Outcome, res.Message = OutcomeFail, r.Message
			}
		}
		act := r.Action
		if err != nil {
			res.Outcome, res.Message, act = OutcomeErrored, err.Error(), ActionFlag
		}
		if res.Outcome != OutcomePass && act.rank() > ev.Action.rank() {
			ev.Action = act
		}
		ev.Results[i] = res
	}
	return ev
}
