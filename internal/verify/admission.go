package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/policy"
)

// PolicyInput is what the admission policy sees of one card version: the
// card, the verification report on it when there is one (nil before the
// verifier reported: the signature is then "unchecked"), the catalog's
// signature status and health, and how the version came. It is the one
// place every caller (the catalog's writes through Admission, `registry
// policy test`) builds the input, so a field filled here is filled
// everywhere.
func PolicyInput(in catalog.AdmissionInput) (policy.Agent, error) {
	a := policy.FromCard(in.Card)
	if in.Report != nil {
		var r Report
		if err := json.Unmarshal(in.Report, &r); err != nil {
			return policy.Agent{}, fmt.Errorf("reading the verification report: %w", err)
		}
		PolicyFacts(&a, r)
	}
	if in.SignatureStatus != "" {
		a.SignatureStatus = in.SignatureStatus
	}
	if in.Health != "" {
		a.Health = in.Health
	}
	a.VersionSource = in.Source
	if in.Provenance != nil {
		a.Provenance = in.Provenance
	}
	// The publisher's domain is known from the card URL alone; whether
	// it is verified only from a report (PolicyFacts).
	if a.Publisher.Domain == "" {
		if d, err := card.PublisherOfCard(in.CardURL); err == nil {
			a.Publisher.Domain = d
		}
	}
	return a, nil
}

// Admission is an admission policy as the catalog runs it in its writes
// (catalog.Admission).
type Admission struct {
	p      *policy.Policy
	digest string
}

// NewAdmission wraps p, whose file's bytes were raw (its digest names the
// policy in the catalog).
func NewAdmission(p *policy.Policy, raw []byte) *Admission {
	sum := sha256.Sum256(raw)
	return &Admission{p: p, digest: hex.EncodeToString(sum[:8])}
}

// Policy returns the compiled policy.
func (a *Admission) Policy() *policy.Policy { return a.p }

// Digest names the policy's file content.
func (a *Admission) Digest() string { return a.digest }

// Judge evaluates the policy on one card version. An input that cannot
// be built (a report that does not decode) errors every rule, so the
// failure is a finding on each and never a silent pass.
func (a *Admission) Judge(in catalog.AdmissionInput) catalog.Judgement {
	ag, err := PolicyInput(in)
	if err != nil {
		var j catalog.Judgement
		for _, r := range a.p.Rules() {
			j.Results = append(j.Results, catalog.PolicyResult{RuleID: r.ID, Action: catalog.PolicyFlag,
				Outcome: catalog.PolicyErrored, Message: err.Error()})
		}
		j.Action = catalog.PolicyFlag
		return j
	}
	return JudgementOf(a.p.Evaluate(&ag))
}

// JudgementOf is ev in the catalog's terms: the rules that did not pass.
func JudgementOf(ev policy.Evaluation) catalog.Judgement {
	j := catalog.Judgement{Action: string(ev.Action)}
	for _, r := range ev.Results {
		if r.Outcome == policy.OutcomePass {
			continue
		}
		act := string(r.Action)
		if r.Outcome == policy.OutcomeErrored {
			act = catalog.PolicyFlag
		}
		j.Results = append(j.Results, catalog.PolicyResult{RuleID: r.RuleID, Action: act, Outcome: string(r.Outcome), Message: r.Message})
	}
	return j
}
