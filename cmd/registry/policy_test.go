package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/examples"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/importer"
	"github.com/a2aregistry/registry/internal/verify"
)

const plainHTTPCard = `{"name": "Open Echo", "description": "Echoes.", "version": "1",
  "supportedInterfaces": [{"url": "http://echo.open.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
  "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
  "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": ["echo"]}]}`

// TestPolicyTestCommand judges a catalog of the shipped examples, an
// anonymous agent over plain http and one agent with a report signed by a
// pinned key, and checks what the command says it would do — and that it
// changed nothing.
func TestPolicyTestCommand(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + dir + "/reg.db"
	ctx := context.Background()
	s := catalogtest.Open(t, db)
	lim := cardLimits(config.Default())
	imported, err := (&importer.Importer{Store: s, Limits: lim}).FS(ctx, examples.Cards, "cards/*.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Parse([]byte(plainHTTPCard), lim)
	if err != nil {
		t.Fatal(err)
	}
	open, err := s.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: "https://echo.open.example/.well-known/agent-card.json", Card: c, Source: catalog.SourceURL})
	if err != nil {
		t.Fatal(err)
	}
	var signed importer.Result
	for _, r := range imported {
		if r.Name == "Trip Planner" {
			signed = r
		}
	}
	if signed.AgentID == "" {
		t.Fatal("the Trip Planner example was not imported")
	}
	report, _ := json.Marshal(verify.Report{Signatures: verify.SignatureReport{Status: verify.StatusVerified, Trust: verify.TrustPinned,
		Entries: []verify.SignatureResult{{Result: verify.ResultVerified, Alg: "EdDSA", KID: "k1", Signer: &verify.Signer{KID: "k1", Source: verify.KeySourcePinned}}}}})
	now := time.Now()
	if err := s.RecordVerifications(ctx, catalog.System("test"), []catalog.VerificationInput{{AgentID: signed.AgentID, Version: 1,
		Status: catalog.SignatureVerified, Report: report, VerifiedAt: now, RecheckAt: now.Add(time.Hour), Trust: string(verify.TrustPinned)}}); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Count(ctx)

	policyFile := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policyFile, []byte(`rules:
  - id: trusted-signature
    expression: agent.signed_by_trusted_key
    action: flag
    message: sign the card with a key we pinned
  - id: https-only
    expression: agent.interfaces.all(i, i.url.startsWith("https://"))
    action: reject
    message: every interface over https
  - id: no-anonymous
    expression: "!agent.anonymous"
    action: hold
    message: agents must ask for credentials
  - id: provider
    expression: agent.card.provider.organization != ""
    action: flag
    message: name a provider
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"policy", "test", "--db", db, policyFile}, &out, &errOut, func(string) string { return "" }); code != exitOK {
		t.Fatalf("policy test: exit %d: %s", code, errOut.String())
	}
	got := out.String()
	lines := map[string]string{}
	for _, l := range strings.Split(got, "\n") {
		if id, _, ok := strings.Cut(l, "\t"); ok {
			lines[id] = l
		}
	}
	if l := lines[open.Agent.ID]; !strings.Contains(l, "reject (stale: https-only)") || !strings.Contains(l, "no-anonymous: agents must ask") {
		t.Errorf("plain-http anonymous agent: %q", l)
	}
	if l := lines[signed.AgentID]; strings.Contains(l, "trusted-signature") {
		t.Errorf("agent signed by a pinned key fails trusted-signature: %q", l)
	}
	for _, want := range []string{
		"7 agents judged: 1 would be refused, 0 held, 5 flagged, 0 unreadable; nothing was changed",
		"rule trusted-signature: 6 failing, 0 errored",
		"rule https-only: 1 failing, 0 errored",
		"rule no-anonymous: 1 failing, 0 errored",
		// The examples name a provider; the echo agent's card has none,
		// which is an error of that rule on that agent, reported.
		"rule provider: 0 failing, 1 errored",
		"provider errored: no such key: provider",
		// Nothing is stored yet: every failure is new.
		"newly failing: https-only, no-anonymous, provider, trusted-signature",
		"6 agents' stored results would change",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	after, _ := s.Count(ctx)
	if a, err := s.Agent(ctx, catalog.Scope{All: true}, open.Agent.ID); err != nil || a.Listing.State != catalog.ListingApproved || after != before {
		t.Errorf("the command changed the catalog: %d agents (had %d), listing %+v, %v", after, before, a.Listing, err)
	}

	// An invalid policy is refused with the rule named, before the
	// catalog is opened.
	if err := os.WriteFile(policyFile, []byte("rules:\n  - id: bad\n    expression: agent.nmae == 'x'\n    action: flag\n    message: m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	errOut.Reset()
	if code := run(ctx, []string{"policy", "test", "--db", db, policyFile}, &out, &errOut, func(string) string { return "" }); code != exitFail || !strings.Contains(errOut.String(), `rule "bad"`) {
		t.Errorf("invalid policy: exit %d, stderr %q", code, errOut.String())
	}
}
