package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/contentscan"
	"github.com/a2aregistry/registry/internal/verify"
)

// The catalog store satisfies the interfaces the console declares.
var (
	_ Searcher    = (*catalog.Store)(nil)
	_ AgentReader = (*catalog.Store)(nil)
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// xssPayload is card text that would run script if a page rendered it as
// markup: each part sets window.__xss.
const xssPayload = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>` +
	`"><svg onload="window.__xss=3">`

// rlo is U+202E RIGHT-TO-LEFT OVERRIDE: "invoice\u202Efdp.exe" reads as
// "invoiceexe.pdf".
const rlo = "\u202e"

// evilCard is a card whose text fields attack the console: markup, a
// bidi override, a zero-width space, a javascript: provider link and a
// hot-linkable icon.
func evilCard(version string) []byte {
	c := map[string]any{
		"name":             "Evil" + rlo + "fdp.exe Agent",
		"description":      "Looks harmless. " + xssPayload + " zero\u200bwidth",
		"url":              "https://evil.example/a2a",
		"version":          version,
		"protocolVersion":  "0.3.0",
		"iconUrl":          "https://tracker.example/pixel.png",
		"documentationUrl": "https://docs.evil.example/",
		"provider":         map[string]any{"organization": "Evil Corp", "url": "javascript:window.__xss=4"},
		"capabilities":     map[string]any{},
		"defaultInputModes": []string{
			"text/plain",
		},
		"defaultOutputModes": []string{"text/plain"},
		"skills": []any{map[string]any{
			"id": "pwn", "name": "Pwn <b>bold</b>", "description": "Skill " + xssPayload,
			"tags": []string{"evil", "<i>tag</i>"}, "examples": []string{xssPayload},
		}},
	}
	raw, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		panic(err)
	}
	return raw
}

// fixture is a catalog with the shipped example cards and the evil card
// in two versions, behind a console.
type fixture struct {
	store   *catalog.Store
	console *Console
	e       *echo.Echo
	// ids by card name prefix: "invoice", "evil".
	ids map[string]string
}

// testAPIPath is where the tests say the JSON API is mounted.
const testAPIPath = "/api/v1"

type fixtureOptions struct {
	opts Options
}

func newFixture(t *testing.T, fo fixtureOptions) *fixture {
	t.Helper()
	store := catalogtest.SQLite(t)
	ctx := context.Background()
	f := &fixture{store: store, ids: map[string]string{}}
	files, err := filepath.Glob("../../examples/cards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example cards: %v", err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		f.ids[name] = f.upsert(t, "https://"+name+".example/.well-known/agent-card.json", raw, t0)
	}
	evilURL := "https://evil.example/.well-known/agent-card.json"
	f.upsert(t, evilURL, evilCard("1.0.0"), t0)
	f.ids["evil"] = f.upsert(t, evilURL, evilCard("1.1.0"), t0.Add(time.Hour))

	report := verify.Report{
		CardURL: evilURL, Origins: []string{"https://evil.example"}, CheckedAt: t0.Add(2 * time.Hour),
		Signatures: verify.SignatureReport{
			Status: verify.StatusInvalid,
			Entries: []verify.SignatureResult{{
				Index: 0, Result: verify.ResultBadSignature, Alg: "ES256", KID: "key-" + rlo + "1",
				Form: "jcs", UnsignedFields: []string{"$.url"}, Problem: "signature does not match " + xssPayload,
				Signer: &verify.Signer{KID: "key-1", Thumbprint: "abc", Source: verify.KeySourcePinned, KeyType: "EC", Curve: "P-256"},
			}},
		},
		Security: []verify.Finding{{Code: "no_security", Severity: verify.SeverityWarning, Path: "$", Message: "no security"}},
	}
	evil, err := card.Parse(evilCard("1.1.0"), card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	// The real scan of the evil card (its excerpts hold the XSS payload
	// and the override), and a confusable name pointing at another agent.
	if report.Content, err = (contentscan.Scanner{}).Scan(ctx, evil, report.Origins); err != nil {
		t.Fatal(err)
	}
	report.Content = append(report.Content, verify.ContentFinding{Code: contentscan.CodeConfusableName,
		Severity: verify.SeverityWarning, Path: "$.name", Message: "looks like another",
		Why: contentscan.Why(contentscan.CodeConfusableName), Related: []contentscan.Related{{AgentID: f.ids["invoice-extractor"], Text: "Invoice " + rlo + "Extractor"}}})
	rb, err := json.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.RecordVerifications(ctx, catalog.System("test"), []catalog.VerificationInput{{
		AgentID: f.ids["evil"], Version: 2, Status: catalog.SignatureInvalid, Report: rb,
		VerifiedAt: t0.Add(2 * time.Hour), RecheckAt: t0.Add(26 * time.Hour), KIDs: []string{"key-1"},
		AuditCodes: []string{"no_security"}, Severities: []string{"warning"},
	}}); err != nil {
		t.Fatalf("recording verification: %v", err)
	}

	opts := fo.opts
	if opts.Searcher == nil {
		opts.Searcher = store
	}
	opts.Agents = store
	opts.Logger = quietLog
	opts.APIPath = testAPIPath
	f.console = New(opts)
	f.console.now = func() time.Time { return t0.Add(3 * time.Hour) }
	f.e = echo.New()
	f.console.Mount(f.e)
	return f
}

func (f *fixture) upsert(t *testing.T, cardURL string, raw []byte, at time.Time) string {
	t.Helper()
	c, err := card.Parse(raw, card.DefaultLimits())
	if err != nil {
		t.Fatalf("parsing card for %s: %v", cardURL, err)
	}
	res, err := f.store.Upsert(context.Background(), catalog.System("test"), catalog.UpsertInput{
		CardURL: cardURL, Card: c, Source: catalog.SourceURL, ReceivedAt: at,
	})
	if err != nil {
		t.Fatalf("upserting %s: %v", cardURL, err)
	}
	return res.Agent.ID
}

// get requests target with the given headers.
func (f *fixture) get(t testing.TB, target string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	f.e.ServeHTTP(rec, req)
	return rec
}

// quietLog drops the console's logs: failures are asserted on pages.
var quietLog = slog.New(slog.DiscardHandler)

// htmx request headers.
var (
	hxFragment = map[string]string{hxRequest: "true"}
	hxBoost    = map[string]string{hxRequest: "true", hxBoosted: "true"}
	hxRestore  = map[string]string{hxRequest: "true", hxHistoryRestore: "true"}
)
