package api

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/report"
)

var _ report.CardReader = (*catalog.Store)(nil)

// findingsReport is a stored verification report with one finding of
// each stored source; its audit message is a spreadsheet formula, as card
// text quoted into a message can be.
func findingsReport(tag string) json.RawMessage {
	return json.RawMessage(`{"origins":[],"checked_at":"2026-01-01T00:00:00Z",
		"signatures":{"status":"invalid","entries":[{"index":0,"result":"bad_signature","problem":"the signature does not match"}]},
		"security_findings":[{"code":"no_security","severity":"warning","path":"$","message":"=HYPERLINK(\"http://evil\",\"` + tag + `\")"}],
		"content_findings":[{"code":"content_hidden_text","severity":"error","path":"$.description","message":"+hidden ` + tag + `","why":"w"}]}`)
}

// TestSecurityFindingsExport reads each format back with its own parser,
// over both databases: every stored finding of the agents the caller
// sees, a pending agent's only for an editor or admin, formulas defused in
// CSV.
func TestSecurityFindingsExport(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		ctx := context.Background()
		upsert := func(u string) string {
			t.Helper()
			res, err := store.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: u, Card: mustCard(t, "v01_authentication.json"),
				Source: catalog.SourceURL, ReceivedAt: t0})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			if err := store.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: res.Agent.ID, Version: 1,
				Status: catalog.SignatureInvalid, Report: findingsReport(res.Agent.ID), VerifiedAt: now, RecheckAt: now.Add(time.Hour)}}); err != nil {
				t.Fatal(err)
			}
			return res.Agent.ID
		}
		listed := upsert("https://listed.example/card.json")
		store.SetListingPolicy(catalog.ListingPolicy{RequireApproval: true})
		pending := upsert("https://pending.example/card.json")
		store.SetListingPolicy(catalog.ListingPolicy{})
		// The card has a lint finding of its own, re-derived at export.
		lint := len(mustCard(t, "v01_authentication.json").Findings)
		if lint == 0 {
			t.Fatal("the test card has no lint finding to export")
		}
		perAgent := 3 + lint

		get := func(role auth.Role, format string) *http.Response {
			t.Helper()
			env := testEnv{e: echo.New()}
			New(Options{Catalog: store, Authorizer: signedInAs(role), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Mount(env.e)
			rec := env.do(t, http.MethodGet, "/api/v1/reports/security/findings?format="+format, "", nil)
			return rec.Result()
		}

		for _, tc := range []struct {
			role   auth.Role
			agents []string
		}{
			{auth.Viewer, []string{listed}},
			{auth.Editor, []string{listed, pending}},
			{auth.Admin, []string{listed, pending}},
		} {
			t.Run(tc.role.String(), func(t *testing.T) {
				// JSON: one array, each finding of each agent seen.
				res := get(tc.role, "json")
				var fs []ExportedFinding
				if err := json.NewDecoder(res.Body).Decode(&fs); err != nil || res.StatusCode != http.StatusOK {
					t.Fatalf("json: %d %v", res.StatusCode, err)
				}
				if len(fs) != perAgent*len(tc.agents) {
					t.Errorf("json: %d findings, want %d", len(fs), perAgent*len(tc.agents))
				}
				sources := map[string]int{}
				for _, f := range fs {
					if !slices.Contains(tc.agents, f.AgentID) {
						t.Errorf("json: a finding of agent %s, which the %s does not see", f.AgentID, tc.role)
					}
					if f.URN == "" || f.Name == "" || !strings.HasPrefix(f.CardURL, "https://") {
						t.Errorf("json: agent fields missing: %+v", f)
					}
					sources[f.Source]++
				}
				if n := len(tc.agents); sources["audit"] != n || sources["content"] != n || sources["signature"] != n || sources["lint"] != lint*n {
					t.Errorf("json: findings by source %v", sources)
				}

				// CSV: RFC 4180, a header row, formulas defused.
				res = get(tc.role, "csv")
				if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
					t.Errorf("csv: Content-Type %q", ct)
				}
				recs, err := csv.NewReader(res.Body).ReadAll()
				if err != nil {
					t.Fatalf("csv: %v", err)
				}
				if !slices.Equal(recs[0], findingsColumns) || len(recs) != 1+perAgent*len(tc.agents) {
					t.Fatalf("csv: header %v, %d rows", recs[0], len(recs))
				}
				for _, r := range recs[1:] {
					switch r[4] {
					case "audit":
						if !strings.HasPrefix(r[8], `'=HYPERLINK(`) {
							t.Errorf("csv: formula not defused: %q", r[8])
						}
					case "content":
						if !strings.HasPrefix(r[8], "'+hidden") {
							t.Errorf("csv: formula not defused: %q", r[8])
						}
					}
				}

				// SARIF 2.1.0: the structure code scanners read.
				res = get(tc.role, "sarif")
				var log struct {
					Version string `json:"version"`
					Schema  string `json:"$schema"`
					Runs    []struct {
						Tool struct {
							Driver struct {
								Name, InformationURI string
								Rules                []struct {
									ID               string `json:"id"`
									ShortDescription struct{ Text string }
								}
							}
						}
						Results []struct {
							RuleID    string `json:"ruleId"`
							RuleIndex int    `json:"ruleIndex"`
							Level     string `json:"level"`
							Message   struct{ Text string }
							Locations []struct {
								PhysicalLocation struct{ ArtifactLocation struct{ URI string } }
								LogicalLocations []struct{ Name string }
							}
						}
					}
				}
				if err := json.NewDecoder(res.Body).Decode(&log); err != nil {
					t.Fatalf("sarif: %v", err)
				}
				if log.Version != "2.1.0" || log.Schema == "" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name == "" || log.Runs[0].Tool.Driver.InformationURI == "" {
					t.Fatalf("sarif: log %+v", log)
				}
				run := log.Runs[0]
				if len(run.Results) != perAgent*len(tc.agents) {
					t.Errorf("sarif: %d results", len(run.Results))
				}
				for _, r := range run.Results {
					if r.RuleIndex >= len(run.Tool.Driver.Rules) || run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID || run.Tool.Driver.Rules[r.RuleIndex].ShortDescription.Text == "" {
						t.Errorf("sarif: result of rule %s index %d not in the rules", r.RuleID, r.RuleIndex)
					}
					want := map[string]string{"audit/no_security": "warning", "content/content_hidden_text": "error", "signature/bad_signature": "error"}[r.RuleID]
					if want != "" && r.Level != want || !slices.Contains([]string{"error", "warning", "note"}, r.Level) || r.Message.Text == "" {
						t.Errorf("sarif: %s level %q message %q", r.RuleID, r.Level, r.Message.Text)
					}
					if len(r.Locations) != 1 || !strings.HasPrefix(r.Locations[0].PhysicalLocation.ArtifactLocation.URI, "https://") ||
						len(r.Locations[0].LogicalLocations) != 1 || !slices.Contains(tc.agents, r.Locations[0].LogicalLocations[0].Name) {
						t.Errorf("sarif: %s locations %+v", r.RuleID, r.Locations)
					}
				}
			})
		}

		env := testEnv{e: echo.New()}
		New(Options{Catalog: store}).Mount(env.e)
		rec := env.do(t, http.MethodGet, "/api/v1/reports/security/findings?format=xlsx", "", nil)
		if e := decodeError(t, rec); rec.Code != http.StatusBadRequest || e.Code != CodeInvalidParameter {
			t.Errorf("unknown format = %d %+v", rec.Code, e)
		}
	})
}

func TestDefuseFormula(t *testing.T) {
	for in, want := range map[string]string{
		"=1+1": "'=1+1", "+1": "'+1", "-1": "'-1", "@SUM(A1)": "'@SUM(A1)", "\tx": "'\tx", "\rx": "'\rx",
		"": "", "plain": "plain", "a=b": "a=b", "'quoted": "'quoted",
	} {
		if got := defuseFormula(in); got != want {
			t.Errorf("defuseFormula(%q) = %q, want %q", in, got, want)
		}
	}
}
