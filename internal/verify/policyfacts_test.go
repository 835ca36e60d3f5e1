package verify

import (
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/policy"
)

// TestPolicyFactsPublisher: a rule reads the report's publisher as
// agent.publisher (domain, verified); before a report the domain is "".
func TestPolicyFactsPublisher(t *testing.T) {
	p, err := policy.Parse([]byte(`rules:
  - id: own-key
    expression: agent.publisher.verified && agent.publisher.domain == "acme.co.uk"
    action: hold
    message: sign with a key your domain serves
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Parse([]byte(baseCard), card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		pub  *PublisherReport
		want policy.Outcome
	}{
		{"verified publisher", &PublisherReport{Domain: "acme.co.uk", Verified: true, Proof: ProofWellKnownJWKS}, policy.OutcomePass},
		{"unverified publisher", &PublisherReport{Domain: "acme.co.uk"}, policy.OutcomeFail},
		{"another publisher", &PublisherReport{Domain: "other.dev", Verified: true, Proof: ProofJKU}, policy.OutcomeFail},
		{"no report", nil, policy.OutcomeFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := policy.FromCard(c)
			if tc.pub != nil {
				PolicyFacts(&a, Report{Publisher: tc.pub})
			}
			if got := p.Evaluate(&a).Results[0].Outcome; got != tc.want {
				t.Errorf("outcome %s, want %s", got, tc.want)
			}
		})
	}
}
