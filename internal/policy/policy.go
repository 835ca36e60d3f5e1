// Package policy is the registry's admission policy: rules written in CEL
// (github.com/google/cel-go) over one agent version (Agent), each with an
// action — flag, hold or reject — and a message. It owns the policy file's
// format, its limits, the CEL environment and evaluation; it does not know
// where agents are stored or what an action does to them.
//
// A policy is refused whole when any rule is invalid, so a typo in one rule
// can never switch the others off; the error names the rule. Programs are
// compiled once when the file is loaded, and every evaluation runs under a
// cost limit, so no expression can run away. An expression that fails at
// run time on some agent (a missing card field, a division by zero) is
// contained: that rule's result for that agent is Errored, a finding, and
// evaluation goes on with the next rule.
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"gopkg.in/yaml.v3"
)

// Action is what a failing rule does.
type Action string

const (
	// ActionFlag: the failure is a finding; nothing is hidden.
	ActionFlag Action = "flag"
	// ActionHold: the agent waits in the pending listing, with the rule's
	// message, until it complies or an editor overrides.
	ActionHold Action = "hold"
	// ActionReject: registration and import refuse the card; a crawl keeps
	// the agent's last compliant version.
	ActionReject Action = "reject"
)

// rank orders actions by severity; 0 is no action.
func (a Action) rank() int {
	switch a {
	case ActionFlag:
		return 1
	case ActionHold:
		return 2
	case ActionReject:
		return 3
	}
	return 0
}

// Limits of a policy file. They keep loading and evaluation bounded: a
// policy is read on every reload and evaluated on every card write.
const (
	// MaxFileBytes bounds the file itself.
	MaxFileBytes = 1 << 20
	// MaxRules bounds the rules of one policy: each is evaluated on every
	// new version, so the count is the write path's cost.
	MaxRules = 200
	// MaxExpressionBytes bounds one expression's source.
	MaxExpressionBytes = 4096
	// MaxMessageBytes bounds one rule's message, which the agent page and
	// the 422 answer show.
	MaxMessageBytes = 1024
	// CostLimit bounds one evaluation of one rule, in cel-go's cost units
	// (about one per operation and per list element visited). A
	// comprehension over a card's skills costs a few hundred; a nested
	// one over a hostile card's largest lists stays far below it, while
	// an expression built to run away stops there.
	CostLimit = 100_000
)

// ErrInvalid is wrapped by every error about a policy file: its syntax, a
// limit, or one of its rules (a *RuleError).
var ErrInvalid = errors.New("policy: invalid")

// RuleError is a refused rule; Index is its place in the file (from 0).
type RuleError struct {
	Index int
	ID    string
	Err   error
}

func (e *RuleError) Error() string {
	if e.ID == "" {
		return fmt.Sprintf("policy: rule %d: %v", e.Index+1, e.Err)
	}
	return fmt.Sprintf("policy: rule %q: %v", e.ID, e.Err)
}

func (e *RuleError) Unwrap() []error { return []error{ErrInvalid, e.Err} }

// Rule is one rule as the file writes it.
type Rule struct {
	ID         string `yaml:"id"`
	Expression string `yaml:"expression"`
	Action     Action `yaml:"action"`
	Message    string `yaml:"message"`
}

// file is the policy file: `rules:` and nothing else.
type file struct {
	Rules []Rule `yaml:"rules"`
}

// Policy is a compiled policy; safe for concurrent use.
type Policy struct {
	rules []compiled
	// adapter turns an *Agent into the CEL value the rules read.
	adapter types.Adapter
}

type compiled struct {
	Rule
	// metered runs under the run-time cost limit; unmetered without it,
	// nil unless the rule's static worst case on a bounded agent stays
	// under CostLimit (staticCost).
	metered, unmetered cel.Program
}

// Rules returns the policy's rules in file order.
func (p *Policy) Rules() []Rule {
	out := make([]Rule, len(p.rules))
	for i, r := range p.rules {
		out[i] = r.Rule
	}
	return out
}

var ruleID = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// env is the CEL environment every rule compiles in: `agent` of type
// policy.Agent, the standard library and the string extensions. Built
// once: an environment costs milliseconds.
var env = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		ext.NativeTypes(reflect.TypeFor[Agent](), ext.ParseStructTags(true)),
		cardField(),
		cel.Variable("agent", cel.ObjectType("policy.Agent")),
		ext.Strings(),
		cel.ParserExpressionSizeLimit(MaxExpressionBytes),
		cel.ParserRecursionLimit(64),
	)
})

// LoadFile reads and compiles the policy at path.
func LoadFile(path string) (*Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("policy: reading %s: %w", path, err)
	}
	return Parse(raw)
}

// Parse compiles a policy file's bytes. It refuses the whole policy when
// the file is too large, is not the format (unknown keys included), has
// more than MaxRules rules, or any rule is invalid.
func Parse(raw []byte) (*Policy, error) {
	if len(raw) > MaxFileBytes {
		return nil, fmt.Errorf("%w: the file is larger than %d bytes", ErrInvalid, MaxFileBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var f file
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the file is empty", ErrInvalid)
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(f.Rules) == 0 {
		return nil, fmt.Errorf("%w: no rules (a policy lists them under `rules:`)", ErrInvalid)
	}
	if len(f.Rules) > MaxRules {
		return nil, fmt.Errorf("%w: %d rules, at most %d are allowed", ErrInvalid, len(f.Rules), MaxRules)
	}
	e, err := env()
	if err != nil {
		return nil, fmt.Errorf("policy: building the CEL environment: %w", err)
	}
	p := &Policy{rules: make([]compiled, 0, len(f.Rules)), adapter: e.CELTypeAdapter()}
	seen := make(map[string]bool, len(f.Rules))
	for i, r := range f.Rules {
		c, err := compile(e, r)
		if err == nil && seen[r.ID] {
			err = errors.New("the id is used by another rule")
		}
		if err != nil {
			return nil, &RuleError{Index: i, ID: r.ID, Err: err}
		}
		seen[r.ID] = true
		p.rules = append(p.rules, c)
	}
	return p, nil
}

func compile(e *cel.Env, r Rule) (c compiled, err error) {
	switch {
	case !ruleID.MatchString(r.ID):
		return c, errors.New("id must be 1-64 of a-z, 0-9, '_', '.', '-', starting with a letter or digit")
	case r.Action.rank() == 0:
		return c, fmt.Errorf("action %q is none of flag, hold, reject", r.Action)
	case strings.TrimSpace(r.Message) == "":
		return c, errors.New("message is empty")
	case len(r.Message) > MaxMessageBytes:
		return c, fmt.Errorf("message is longer than %d bytes", MaxMessageBytes)
	case strings.TrimSpace(r.Expression) == "":
		return c, errors.New("expression is empty")
	case len(r.Expression) > MaxExpressionBytes:
		return c, fmt.Errorf("expression is longer than %d bytes", MaxExpressionBytes)
	}
	ast, iss := e.Compile(r.Expression)
	if iss.Err() != nil {
		return c, fmt.Errorf("expression: %w", iss.Err())
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return c, fmt.Errorf("expression gives %s, not bool", ast.OutputType())
	}
	c.Rule = r
	c.metered, err = e.Program(ast, cel.CostLimit(CostLimit), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return c, fmt.Errorf("expression: %w", err)
	}
	if est, err := e.EstimateCost(ast, boundedAgent{}); err == nil && est.Max <= CostLimit {
		if c.unmetered, err = e.Program(ast, cel.EvalOptions(cel.OptOptimize)); err != nil {
			return c, fmt.Errorf("expression: %w", err)
		}
	}
	return c, nil
}
