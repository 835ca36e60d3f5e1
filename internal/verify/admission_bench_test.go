package verify

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/policy"
	"github.com/a2aregistry/registry/internal/synth"
)

// BenchmarkAdmissionJudge is what the catalog's write pays per judged
// card version with a 20-rule policy: the input built from the parsed
// card and its stored report (PolicyInput), then the evaluation. The
// issue's budget for the evaluation is 50 µs (BenchmarkEvaluate20Rules in
// internal/policy measures it alone).
func BenchmarkAdmissionJudge(b *testing.B) {
	exprs := []string{
		`agent.signed_by_trusted_key`, `agent.signature_status == "verified"`,
		`agent.interfaces.all(i, i.url.startsWith("https://"))`,
		`!agent.content_findings.exists(f, f.code in ["content_bidi_control", "content_zero_width", "content_tag_characters"])`,
		`!agent.anonymous`, `agent.security_schemes.exists(s, s.type in ["oauth2", "openIdConnect", "mutualTLS"])`,
		`agent.signatures.all(s, s.alg in ["ES256", "EdDSA", "RS256"])`, `!agent.lint_findings.exists(f, f.severity == "error")`,
		`agent.health != "down"`, `"1.0" in agent.protocol_versions`, `agent.interfaces.all(i, i.probe in ["", "confirmed"])`,
		`agent.name.size() <= 100`, `agent.publisher.verified || agent.publisher.domain != ""`, `agent.version_source != "import" && !("federatedFrom" in agent.provenance)`,
		`agent.signatures.all(s, s.key_source != "jku")`, `agent.content_findings.filter(f, f.severity == "warning").size() < 3`,
		`!agent.name.lowerAscii().contains("test")`, `agent.interfaces.size() <= 8`, `agent.lint_findings.size() < 20`,
		`agent.security_schemes.size() <= 8`,
	}
	var rules strings.Builder
	rules.WriteString("rules:\n")
	for i, e := range exprs {
		fmt.Fprintf(&rules, "  - id: r%d\n    expression: %q\n    action: flag\n    message: m\n", i, e)
	}
	raw := []byte(rules.String())
	p, err := policy.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	c, err := card.Parse(synth.New(1).Card(7), card.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	report, err := json.Marshal(Report{Signatures: SignatureReport{Status: StatusVerified, Trust: TrustPinned,
		Entries: []SignatureResult{{Result: ResultVerified, Alg: "ES256", KID: "k1", Signer: &Signer{KID: "k1", Source: KeySourcePinned}}}},
		Publisher: &PublisherReport{Domain: "example.com", Verified: true}})
	if err != nil {
		b.Fatal(err)
	}
	adm := NewAdmission(p, raw)
	in := catalog.AdmissionInput{AgentID: "a", CardURL: "https://a.example.com/.well-known/agent-card.json", Card: c,
		Source: catalog.SourceCrawl, Report: report, SignatureStatus: catalog.SignatureVerified, Health: catalog.HealthUp}
	b.ReportAllocs()
	for b.Loop() {
		adm.Judge(in)
	}
}
