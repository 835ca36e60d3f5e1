package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/policy"
	"github.com/a2aregistry/registry/internal/verify"
)

// TestAgentPagePolicy: the agent page lists the admission-policy rules
// failing on the current card, each linking to the search of every agent
// failing it, the operator's message escaped.
func TestAgentPagePolicy(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	raw := []byte(`rules:
  - id: never-verified
    expression: agent.signature_status != "verified"
    action: flag
    message: "<b>verified</b> cards are flagged"
`)
	p, err := policy.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	f.store.SetAdmission(verify.NewAdmission(p, raw))
	id := f.ids["translator"]
	now := time.Now()
	if err := f.store.RecordVerifications(context.Background(), catalog.System("test"), []catalog.VerificationInput{{AgentID: id,
		Version: 1, Status: catalog.SignatureVerified, Report: json.RawMessage(`{}`), VerifiedAt: now, RecheckAt: now.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	f.console = New(Options{Searcher: f.store, Agents: f.store, Logger: quietLog})
	f.e = echo.New()
	f.console.Mount(f.e)
	body := f.get(t, "/agents/"+id, nil).Body.String()
	for _, want := range []string{`id="policy"`, `href="/?policy=never-verified"`, "fails (flag)", "&lt;b&gt;verified&lt;/b&gt; cards are flagged"} {
		if !strings.Contains(body, want) {
			t.Errorf("agent page lacks %q", want)
		}
	}
	if strings.Contains(body, "<b>verified</b>") {
		t.Error("the rule's message is not escaped")
	}
}
