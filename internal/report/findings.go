package report

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/verify"
)

// Sources of an exported finding: which check made it.
const (
	SourceAudit     = "audit"
	SourceLint      = "lint"
	SourceContent   = "content"
	SourceSignature = "signature"
	// SourcePolicy: a rule of the admission policy that failed, or
	// errored, on the current version (its id is the code).
	SourcePolicy = "policy"
)

// Finding is one current finding of one agent, flattened for export. Every
// text field but AgentID and CardURL may come from the card, which anyone
// can publish: a door writes it out as data, never as markup or formulas.
type Finding struct {
	AgentID string
	// URN is card.URNOf(CardURL); empty when the URL has none.
	URN     string
	Name    string
	CardURL string
	Source  string
	Code    string
	// Severity is card.SeverityError, Warning or Info.
	Severity card.Severity
	// Path is a JSON path into the card ("$.skills[2].id").
	Path    string
	Message string
}

// CardReader walks the current cards the scope sees; *catalog.Store
// implements it.
type CardReader interface {
	CurrentCards(ctx context.Context, sc catalog.Scope, fn func(catalog.CurrentCard) error) error
	CardLimits() card.Limits
}

// Findings calls fn with every current finding of every agent sc sees:
// the security audit, the card lint, the content scan and each signature
// that did not verify, and each admission-policy rule failing or errored
// on the current version. The catalog applies the scope and reads in
// pages, so the export streams at any catalog size.
func Findings(ctx context.Context, r CardReader, sc catalog.Scope, fn func(Finding) error) error {
	lim := r.CardLimits()
	err := r.CurrentCards(ctx, sc, func(c catalog.CurrentCard) error {
		base := Finding{AgentID: c.AgentID, CardURL: c.CardURL}
		base.URN, _ = card.URNOf(c.CardURL) // a URL without a URN exports without one
		var fs []Finding
		// The lint is derived, so it is rebuilt from the stored bytes as
		// the agent page does; a card that no longer parses has none.
		if parsed, err := card.Parse(c.Raw, catalog.StoredCardLimits(lim, c.Raw)); err == nil {
			base.Name = parsed.Name
			for _, f := range parsed.Findings {
				fs = append(fs, Finding{Source: SourceLint, Code: f.Code, Severity: f.Severity, Path: f.Path, Message: f.Message})
			}
		}
		if c.Report != nil {
			var rep verify.Report
			if err := json.Unmarshal(c.Report, &rep); err != nil {
				return fmt.Errorf("reading the verification report of agent %s: %w", c.AgentID, err)
			}
			for _, f := range rep.Security {
				fs = append(fs, Finding{Source: SourceAudit, Code: f.Code, Severity: f.Severity, Path: f.Path, Message: f.Message})
			}
			for _, f := range rep.Content {
				// Related (the other agents a confusable name is about) is
				// left out: the caller's scope may not see them.
				fs = append(fs, Finding{Source: SourceContent, Code: f.Code, Severity: f.Severity, Path: f.Path, Message: f.Message})
			}
			for _, e := range rep.Signatures.Entries {
				if e.Result == verify.ResultVerified {
					continue
				}
				msg := e.Problem
				if msg == "" {
					msg = "signature " + string(e.Result)
				}
				fs = append(fs, Finding{Source: SourceSignature, Code: string(e.Result), Severity: signatureSeverity(e.Result),
					Path: fmt.Sprintf("$.signatures[%d]", e.Index), Message: msg})
			}
		}
		for _, r := range c.Policy {
			fs = append(fs, Finding{Source: SourcePolicy, Code: r.RuleID, Severity: policySeverity(r), Message: r.Message})
		}
		for _, f := range fs {
			f.AgentID, f.URN, f.Name, f.CardURL = base.AgentID, base.URN, base.Name, base.CardURL
			if err := fn(f); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("exporting findings: %w", err)
	}
	return nil
}

// signatureSeverity ranks a signature that did not verify: one that could
// not be checked (no acceptable key was found) is a warning, as its status
// key_unavailable is; one that is wrong is an error (verify.StatusInvalid).
func signatureSeverity(r verify.Result) card.Severity {
	switch r {
	case verify.ResultUnknownKey, verify.ResultUntrustedKeySource, verify.ResultKeyFetchFailed:
		return card.SeverityWarning
	}
	return card.SeverityError
}

// policySeverity ranks an admission-policy result: a failed rule that
// holds or refuses is an error, a flag a warning, and an errored rule (the
// expression could not be judged on this agent, never enforced) a warning.
func policySeverity(r catalog.PolicyResult) card.Severity {
	if r.Outcome == catalog.PolicyFail && (r.Action == catalog.PolicyHold || r.Action == catalog.PolicyReject) {
		return card.SeverityError
	}
	return card.SeverityWarning
}
