package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
)

func rulesYAML(rules ...string) []byte {
	return []byte("rules:\n" + strings.Join(rules, ""))
}

func rule(id, expr, action, msg string) string {
	return fmt.Sprintf("  - id: %q\n    expression: %q\n    action: %q\n    message: %q\n", id, expr, action, msg)
}

func TestParseRefusesWholePolicy(t *testing.T) {
	good := rule("signed", `agent.signature_status == "verified"`, "flag", "sign your card")
	tests := []struct {
		name string
		raw  []byte
		// ruleID is the rule the error must name; "" for a file-level error.
		ruleID string
		want   string
	}{
		{"empty file", nil, "", "empty"},
		{"no rules", []byte("rules: []\n"), "", "no rules"},
		{"unknown top-level key", []byte("rulez: []\n"), "", "rulez"},
		{"unknown rule key", rulesYAML(good, "  - id: x\n    expression: 'true'\n    action: flag\n    message: m\n    severity: high\n"), "", "severity"},
		{"syntax error", rulesYAML(good, rule("broken", `agent.name ==`, "flag", "m")), "broken", "expression"},
		{"unknown field", rulesYAML(good, rule("typo", `agent.nmae == "x"`, "flag", "m")), "typo", "nmae"},
		{"unknown field of an element", rulesYAML(rule("sig", `agent.signatures.all(s, s.algo == "ES256")`, "hold", "m"), good), "sig", "algo"},
		{"not bool", rulesYAML(rule("str", `agent.name`, "flag", "m")), "str", "not bool"},
		{"bad action", rulesYAML(rule("act", `true`, "block", "m")), "act", "block"},
		{"empty message", rulesYAML(rule("msg", `true`, "flag", " ")), "msg", "message"},
		{"bad id", rulesYAML(rule("Has Space", `true`, "flag", "m")), "Has Space", "id must"},
		{"duplicate id", rulesYAML(good, good), "signed", "another rule"},
		{"expression too long", rulesYAML(rule("long", strings.Repeat("true && ", MaxExpressionBytes/8)+"true", "flag", "m")), "long", "longer"},
		{"too many rules", rulesYAML(strings.Repeat(rule("r", "true", "flag", "m"), MaxRules+1)), "", "at most"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.raw)
			if err == nil {
				t.Fatalf("Parse accepted the policy (%d rules)", len(p.Rules()))
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			var re *RuleError
			if got := errors.As(err, &re); got != (tc.ruleID != "") {
				t.Fatalf("error %v: RuleError %v, want %v", err, got, tc.ruleID != "")
			}
			if re != nil && re.ID != tc.ruleID {
				t.Errorf("error names rule %q, want %q", re.ID, tc.ruleID)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// A 100,000-rule file is refused by its size before anything is decoded
// or compiled, and quickly.
func TestHugeFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	raw := rulesYAML(strings.Repeat(rule("r", "true", "flag", "m"), 100_000))
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(path)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("LoadFile = %v, want the size refusal", err)
	}
}

func parseCard(t testing.TB, raw string) *card.Card {
	t.Helper()
	c, err := card.Parse([]byte(raw), card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const testCard = `{
  "name": "Invoice Reader",
  "description": "Reads invoices.",
  "version": "1.0.0",
  "supportedInterfaces": [{"url": "https://agents.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
  "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
  "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
  "capabilities": {},
  "defaultInputModes": ["application/pdf"],
  "defaultOutputModes": ["application/json"],
  "skills": [{"id": "read", "name": "Read", "description": "Reads one.", "tags": ["invoice"]}]
}`

func testAgent(t testing.TB) *Agent {
	a := FromCard(parseCard(t, testCard))
	a.SignatureStatus = "verified"
	a.SignedByTrustedKey = true
	a.Signatures = []Signature{{Alg: "ES256", KID: "k1", KeySource: "pinned", Verdict: "verified"}}
	a.Health = "up"
	return &a
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name   string
		rules  []string
		mutate func(*Agent)
		want   []Outcome
		action Action
	}{
		{"all hold", []string{
			rule("trusted", `agent.signed_by_trusted_key`, "reject", "sign with a pinned key"),
			rule("https", `agent.interfaces.all(i, i.url.startsWith("https://"))`, "hold", "https only"),
			rule("hidden", `!agent.content_findings.exists(f, f.code == "content_zero_width")`, "flag", "no hidden text"),
			rule("card", `agent.card.skills.size() > 0 && agent.card.name == agent.name`, "flag", "m"),
		}, nil, []Outcome{OutcomePass, OutcomePass, OutcomePass, OutcomePass}, ""},
		{"the most severe failure decides", []string{
			rule("trusted", `agent.signed_by_trusted_key`, "reject", "sign with a pinned key"),
			rule("https", `agent.interfaces.all(i, i.url.startsWith("https://"))`, "hold", "https only"),
			rule("up", `agent.health == "up"`, "flag", "must be up"),
		}, func(a *Agent) {
			a.SignedByTrustedKey = false
			a.Interfaces[0].URL = "http://agents.example.com/a2a"
			a.Health = "down"
		}, []Outcome{OutcomeFail, OutcomeFail, OutcomeFail}, ActionReject},
		{"hold without reject", []string{
			rule("anon", `!agent.anonymous`, "hold", "no anonymous agents"),
			rule("lint", `!agent.lint_findings.exists(f, f.severity == "error")`, "flag", "m"),
		}, func(a *Agent) { a.Anonymous = true }, []Outcome{OutcomeFail, OutcomePass}, ActionHold},
		// A card field the card lacks is a run-time error: contained,
		// reported, and neither enforced nor passed.
		{"runtime error contained", []string{
			rule("missing", `agent.card.provider.organization == "Example"`, "reject", "m"),
			rule("after", `agent.name != ""`, "reject", "m"),
		}, nil, []Outcome{OutcomeErrored, OutcomePass}, ActionFlag},
		{"division by zero contained", []string{
			rule("div", `1 / (agent.signatures.size() - 1) == 1`, "hold", "m"),
		}, nil, []Outcome{OutcomeErrored}, ActionFlag},
		{"dyn not bool at run time", []string{
			rule("dyn", `agent.card.name == "Invoice Reader" ? true : false`, "flag", "m"),
			rule("dynval", `agent.card["version"] == "1.0.0"`, "flag", "m"),
		}, nil, []Outcome{OutcomePass, OutcomePass}, ""},
		// Nested comprehensions over a long list would run for minutes;
		// the cost limit stops them.
		{"cost limit", []string{
			rule("spin", `agent.protocol_versions.all(a, agent.protocol_versions.all(b, agent.protocol_versions.all(c, a + b + c != "")))`, "reject", "m"),
		}, func(a *Agent) {
			a.ProtocolVersions = make([]string, 200)
			for i := range a.ProtocolVersions {
				a.ProtocolVersions[i] = fmt.Sprint(i)
			}
		}, []Outcome{OutcomeErrored}, ActionFlag},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(rulesYAML(tc.rules...))
			if err != nil {
				t.Fatal(err)
			}
			a := testAgent(t)
			if tc.mutate != nil {
				tc.mutate(a)
			}
			ev := p.Evaluate(a)
			if len(ev.Results) != len(tc.want) {
				t.Fatalf("%d results, want %d", len(ev.Results), len(tc.want))
			}
			for i, r := range ev.Results {
				if r.Outcome != tc.want[i] {
					t.Errorf("rule %s: %s (%s), want %s", r.RuleID, r.Outcome, r.Message, tc.want[i])
				}
				if r.Outcome != OutcomePass && r.Message == "" {
					t.Errorf("rule %s: %s without a message", r.RuleID, r.Outcome)
				}
			}
			if ev.Action != tc.action {
				t.Errorf("action %q, want %q", ev.Action, tc.action)
			}
		})
	}
}

func TestFailingAndFirst(t *testing.T) {
	p, err := Parse(rulesYAML(
		rule("a", `true`, "reject", "ma"),
		rule("b", `false`, "flag", "mb"),
		rule("c", `agent.card.nope == 1`, "reject", "mc"),
		rule("d", `false`, "hold", "md"),
	))
	if err != nil {
		t.Fatal(err)
	}
	ev := p.Evaluate(testAgent(t))
	if got := strings.Join(ev.Failing(), ","); got != "b,c,d" {
		t.Errorf("Failing = %s, want b,c,d", got)
	}
	if r, ok := ev.First(ActionHold); !ok || r.RuleID != "d" || r.Message != "md" {
		t.Errorf("First(hold) = %+v, %v", r, ok)
	}
	// The errored reject rule is no refusal.
	if r, ok := ev.First(ActionReject); ok {
		t.Errorf("First(reject) = %+v, want none", r)
	}
}

// The published card is decoded only when a rule reads it, once per
// agent however many rules do, and rules read it as JSON.
func TestCardDecodedOnlyWhenRead(t *testing.T) {
	tests := []struct {
		expr    string
		decodes bool
	}{
		{`agent.signed_by_trusted_key`, false},
		{`agent.name == "card"`, false},
		{`agent.card.name == agent.name`, true},
		{`has(agent.card.provider)`, true},
		{`[agent].all(a, a.card.skills.size() > 0)`, true},
		{`agent.card.skills[0].tags[0] == "invoice" && agent.card.capabilities == {}`, true},
	}
	for _, tc := range tests {
		p, err := Parse(rulesYAML(rule("r", tc.expr, "flag", "m"), rule("s", `has(agent.card.name) || true`, "flag", "m")))
		if err != nil {
			t.Fatal(err)
		}
		a := FromCard(parseCard(t, testCard))
		if ev := p.Evaluate(&a); ev.Results[0].Outcome == OutcomeErrored {
			t.Errorf("%s: %+v", tc.expr, ev.Results[0])
		}
		if p2, _ := Parse(rulesYAML(rule("r", tc.expr, "flag", "m"))); p2 != nil {
			b := FromCard(parseCard(t, testCard))
			p2.Evaluate(&b)
			if got := b.published != nil; got != tc.decodes {
				t.Errorf("%s: decoded %v, want %v", tc.expr, got, tc.decodes)
			}
		}
	}
}

// A rule whose worst case on a bounded agent is under the cost limit runs
// without the run-time meter, but only on an agent within the bounds: on
// a longer list than the estimate assumed, the meter is back and stops
// the rule at the limit rather than let it run past it.
func TestUnmeteredOnlyWhenBounded(t *testing.T) {
	tests := []struct {
		expr      string
		unmetered bool
	}{
		{`agent.protocol_versions.all(v, v.size() > 0)`, true},
		{`agent.interfaces.all(i, i.url.startsWith("https://"))`, true},
		{`!agent.name.lowerAscii().contains("test")`, true},
		{`agent.card.name == agent.name`, true},
		// The published card's lists have no bound the estimate knows.
		{`agent.card.skills.all(s, s.name != "")`, false},
		{`agent.protocol_versions.all(a, agent.protocol_versions.all(b, a + b != ""))`, false},
	}
	for _, tc := range tests {
		p, err := Parse(rulesYAML(rule("r", tc.expr, "reject", "m")))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.rules[0].unmetered != nil; got != tc.unmetered {
			t.Errorf("%s: unmetered %v, want %v", tc.expr, got, tc.unmetered)
		}
	}
	p, err := Parse(rulesYAML(rule("each", `agent.protocol_versions.all(v, v.size() > 0)`, "reject", "m")))
	if err != nil {
		t.Fatal(err)
	}
	a := testAgent(t)
	if ev := p.Evaluate(a); ev.Results[0].Outcome != OutcomePass {
		t.Fatalf("bounded agent: %+v", ev.Results[0])
	}
	a.ProtocolVersions = make([]string, 100*boundList)
	for i := range a.ProtocolVersions {
		a.ProtocolVersions[i] = "1.0"
	}
	if a.bounded() {
		t.Fatal("an agent with a list past boundList is bounded")
	}
	if ev := p.Evaluate(a); ev.Results[0].Outcome != OutcomeErrored || !strings.Contains(ev.Results[0].Message, "cost") {
		t.Errorf("unbounded agent: %+v, want the cost limit", ev.Results[0])
	}
}
