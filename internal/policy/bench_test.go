package policy

import (
	"fmt"
	"testing"
)

// BenchmarkEvaluate20Rules is the budget: a 20-rule policy on one
// agent version in under 50 µs. The rules mix what real policies ask:
// flags, comprehensions over interfaces, signatures and findings, and the
// published card.
func BenchmarkEvaluate20Rules(b *testing.B) {
	exprs := []string{
		`agent.signed_by_trusted_key`,
		`agent.signature_status == "verified"`,
		`agent.interfaces.all(i, i.url.startsWith("https://"))`,
		`!agent.content_findings.exists(f, f.code in ["content_bidi_control", "content_zero_width", "content_tag_characters"])`,
		`!agent.anonymous`,
		`agent.security_schemes.exists(s, s.type in ["oauth2", "openIdConnect", "mutualTLS"])`,
		`agent.signatures.all(s, s.alg in ["ES256", "EdDSA", "RS256"])`,
		`!agent.lint_findings.exists(f, f.severity == "error")`,
		`agent.health != "down"`,
		`"1.0" in agent.protocol_versions`,
		`agent.interfaces.all(i, i.probe in ["", "confirmed"])`,
		`agent.name.size() <= 100`,
		`agent.card.skills.size() > 0`,
		`has(agent.card.description)`,
		`agent.card.name == agent.name`,
		`agent.signatures.all(s, s.key_source != "jku")`,
		`agent.content_findings.filter(f, f.severity == "warning").size() < 3`,
		`!agent.name.lowerAscii().contains("test")`,
		`agent.interfaces.size() <= 8`,
		`agent.lint_findings.size() < 20`,
	}
	var raw []byte
	raw = append(raw, "rules:\n"...)
	for i, e := range exprs {
		raw = append(raw, rule(fmt.Sprintf("r%d", i), e, "flag", "m")...)
	}
	p, err := Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	a := testAgent(b)
	a.ContentFindings = []Finding{{Code: "content_foreign_link", Severity: "info", Path: "$.description"}}
	b.ReportAllocs()
	for b.Loop() {
		p.Evaluate(a)
	}
}
