package report_test

import (
	"context"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/policy"
	"github.com/a2aregistry/registry/internal/report"
	"github.com/a2aregistry/registry/internal/verify"
)

// TestPolicyInReports: the security report counts agents per failing
// admission-policy rule, each count listing them by the policy filter,
// and the findings export carries each failing or errored rule.
func TestPolicyInReports(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		raw := []byte(`rules:
  - id: ask-credentials
    expression: "!agent.anonymous"
    action: hold
    message: agents must ask for credentials
  - id: provider
    expression: agent.card.provider.organization != ""
    action: flag
    message: name a provider
`)
		p, err := policy.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		s.SetAdmission(verify.NewAdmission(p, raw))
		open := add(t, s, "open", "", catalog.SignatureUnsigned)
		add(t, s, "keyed", `"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}`, catalog.SignatureUnsigned)

		r, err := report.SecurityReport(ctx, s, catalog.ScopeAll, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if c := find(r.Policy, "ask-credentials"); c.Count != 1 || c.Query != "policy=ask-credentials" {
			t.Errorf("ask-credentials = %+v", c)
		}
		// Neither card names a provider: the rule errors on both.
		if c := find(r.Policy, "provider"); c.Count != 2 {
			t.Errorf("provider = %+v", c)
		}

		got := map[string]report.Finding{}
		err = report.Findings(ctx, s, catalog.ScopeAll, func(f report.Finding) error {
			if f.Source == report.SourcePolicy {
				got[f.AgentID+" "+f.Code] = f
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if f := got[open+" ask-credentials"]; f.Severity != card.SeverityError || f.Message != "agents must ask for credentials" {
			t.Errorf("exported hold failure = %+v", f)
		}
		if f := got[open+" provider"]; f.Severity != card.SeverityWarning || f.Message == "" {
			t.Errorf("exported errored rule = %+v", f)
		}
		if len(got) != 3 {
			t.Errorf("exported policy findings = %v, want 3", got)
		}
	})
}
