package report_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/query"
	"github.com/a2aregistry/registry/internal/report"
	"github.com/a2aregistry/registry/internal/verify"
)

var actor = catalog.Actor{Kind: catalog.ActorSystem, Name: "test"}

// add stores an agent whose card declares schemes (none when empty) and
// records a verification with status and codes; it returns the agent id.
func add(t *testing.T, s *catalog.Store, name, scheme, status string, codes ...string) string {
	return addAt(t, s, "https", name, scheme, status, codes...)
}

// addAt is add with the interface's URL scheme given.
func addAt(t *testing.T, s *catalog.Store, urlScheme, name, scheme, status string, codes ...string) string {
	t.Helper()
	ctx := context.Background()
	sec := ""
	if scheme != "" {
		sec = fmt.Sprintf(`, "securitySchemes": {"s": {%s}}, "securityRequirements": [{"schemes": {"s": {"list": []}}}]`, scheme)
	}
	raw := fmt.Sprintf(`{"name": %q, "description": "d", "version": "1.0.0",
  "supportedInterfaces": [{"url": "%s://agents.example/%s/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
  "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
  "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}]%s}`, name, urlScheme, name, sec)
	c, err := card.Parse([]byte(raw), card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	// The security audit's own codes join those given, as the verifier
	// would record them (plain_http_interface on an http interface).
	for _, f := range verify.New(verify.Options{}).AuditSecurity(ctx, c) {
		codes = append(codes, f.Code)
	}
	res, err := s.Upsert(ctx, actor, catalog.UpsertInput{CardURL: "https://agents.example/" + name + "/.well-known/agent-card.json", Card: c, Source: catalog.SourceURL})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecordVerifications(ctx, actor, []catalog.VerificationInput{{AgentID: res.Agent.ID, Version: 1,
		Status: status, Report: []byte(`{}`), VerifiedAt: time.Now(), RecheckAt: time.Now().Add(time.Hour), AuditCodes: codes}}); err != nil {
		t.Fatal(err)
	}
	return res.Agent.ID
}

func TestSecurityReport(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		add(t, s, "open", "", catalog.SignatureUnsigned, "no_security", "content_zero_width")
		add(t, s, "keyed", `"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}`, catalog.SignatureVerified, "signing_key_changed")
		add(t, s, "plain", "", catalog.SignatureInvalid, "no_security")
		hidden := add(t, s, "hidden", "", catalog.SignatureInvalid, "no_security", "signing_key_changed", "content_zero_width")
		addAt(t, s, "http", "clear", `"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}`, catalog.SignatureUnsigned)
		hiddenClear := addAt(t, s, "http", "hidden-clear", "", catalog.SignatureUnsigned)
		// A pending agent is hidden from the default scope: no number of
		// that scope may count it, while the all-seeing scope does.
		for _, id := range []string{hidden, hiddenClear} {
			if _, err := s.SetListing(ctx, actor, catalog.ScopeAll, id, catalog.ListingChange{State: catalog.ListingPending, Reason: "test"}); err != nil {
				t.Fatal(err)
			}
		}
		type want struct {
			agents, anonymous, keyChanges, invalid, zeroWidth, plainHTTP int
		}
		for _, tc := range []struct {
			name  string
			scope catalog.Scope
			want  want
		}{
			{"viewer", catalog.Scope{}, want{agents: 4, anonymous: 2, keyChanges: 1, invalid: 1, zeroWidth: 1, plainHTTP: 1}},
			{"all", catalog.ScopeAll, want{agents: 6, anonymous: 4, keyChanges: 2, invalid: 2, zeroWidth: 2, plainHTTP: 2}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r, err := report.SecurityReport(ctx, s, tc.scope, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				got := want{agents: r.Agents, anonymous: r.Anonymous.Count, keyChanges: r.KeyChanges.Count,
					invalid: find(r.Signature, "invalid").Count, zeroWidth: find(r.Findings, "content_zero_width").Count,
					plainHTTP: r.PlainHTTP.Count}
				if got != tc.want {
					t.Errorf("report = %+v, want %+v", got, tc.want)
				}
				// Every number is what its search lists, in the same scope.
				all := append([]report.Count{r.Anonymous, r.KeyChanges, r.PlainHTTP, r.PublisherVerified}, r.Signature...)
				all = append(append(all, r.SecurityScheme...), r.Findings...)
				for _, c := range all {
					if n := listed(t, s, tc.scope, c.Query); n != c.Count {
						t.Errorf("%s counts %d, its search %q lists %d", c.Value, c.Count, c.Query, n)
					}
				}
				if q := r.PlainHTTP.Query; q != "audit=plain_http_interface" {
					t.Errorf("plain-http query = %q", q)
				}
				if q := r.Anonymous.Query; q != "security_scheme=none" {
					t.Errorf("anonymous query = %q", q)
				}
				if f := find(r.Findings, "content_zero_width"); f.Kind != report.KindContent || f.Query != "audit=content_zero_width" {
					t.Errorf("content finding = %+v", f)
				}
				if f := find(r.Findings, "no_security"); f.Kind != report.KindSecurityAudit {
					t.Errorf("audit finding = %+v", f)
				}
				if c := find(r.SecurityScheme, "apiKey"); c.Count != 2 {
					t.Errorf("security schemes = %+v", r.SecurityScheme)
				}
			})
		}
	})
}

func find(cs []report.Count, value string) report.Count {
	for _, c := range cs {
		if c.Value == value {
			return c
		}
	}
	return report.Count{}
}

// listed is how many agents the search of query (a Count's) finds in sc.
// It reads the query as the doors do (query.ParseString).
func listed(t *testing.T, s *catalog.Store, sc catalog.Scope, rawQuery string) int {
	t.Helper()
	req, err := query.ParseString(rawQuery)
	if err != nil {
		t.Fatal(err)
	}
	req.Limit = 1
	page, err := s.Search(context.Background(), req.Query(sc))
	if err != nil {
		t.Fatal(err)
	}
	return page.Total
}

// TestSecurityReportSeverity holds the findings-by-severity counts to the
// severity search of each, in a viewer's scope (a pending agent hidden)
// and an admin's, and to a new report that changes an agent's severities.
func TestSecurityReportSeverity(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		verified := func(id string, version int, sevs ...string) {
			t.Helper()
			if err := s.RecordVerifications(ctx, actor, []catalog.VerificationInput{{AgentID: id, Version: version,
				Status: catalog.SignatureUnsigned, Report: []byte(`{}`), VerifiedAt: time.Now(), RecheckAt: time.Now().Add(time.Hour),
				AuditCodes: []string{"no_security"}, Severities: sevs}}); err != nil {
				t.Fatal(err)
			}
		}
		both := add(t, s, "both", "", catalog.SignatureUnsigned)
		verified(both, 1, "warning", "error", "warning")
		verified(add(t, s, "warned", "", catalog.SignatureUnsigned), 1, "warning")
		// A severity the registry does not know is not recorded.
		verified(add(t, s, "clean", "", catalog.SignatureUnsigned), 1, "fatal")
		hidden := add(t, s, "hidden", "", catalog.SignatureUnsigned)
		verified(hidden, 1, "info", "error")
		if _, err := s.SetListing(ctx, actor, catalog.ScopeAll, hidden, catalog.ListingChange{State: catalog.ListingPending, Reason: "test"}); err != nil {
			t.Fatal(err)
		}
		check := func(t *testing.T, sc catalog.Scope, want map[string]int) {
			t.Helper()
			r, err := report.SecurityReport(ctx, s, sc, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Severity) != len(catalog.Severities) {
				t.Fatalf("severities = %+v, want one count for each of %v", r.Severity, catalog.Severities)
			}
			for i, c := range r.Severity {
				if c.Value != catalog.Severities[i] || c.Query != "severity="+c.Value {
					t.Errorf("severity count %d = %+v", i, c)
				}
				if c.Count != want[c.Value] {
					t.Errorf("%s counts %d, want %d", c.Value, c.Count, want[c.Value])
				}
				if n := listed(t, s, sc, c.Query); n != c.Count {
					t.Errorf("%s counts %d, its search %q lists %d", c.Value, c.Count, c.Query, n)
				}
			}
		}
		t.Run("viewer", func(t *testing.T) { check(t, catalog.Scope{}, map[string]int{"error": 1, "warning": 2}) })
		t.Run("admin", func(t *testing.T) { check(t, catalog.ScopeAll, map[string]int{"error": 2, "warning": 2, "info": 1}) })
		// A new report replaces the severities in the index at once.
		verified(both, 1, "info")
		t.Run("reverified", func(t *testing.T) {
			check(t, catalog.Scope{}, map[string]int{"warning": 1, "info": 1})
			check(t, catalog.ScopeAll, map[string]int{"error": 1, "warning": 1, "info": 2})
		})
	})
}

// TestSecurityReportRecentKeyChanges: the key changes of the last 30 days
// are the agents whose current card, carrying the signing-key-change
// finding, came within them; the count is what its key_changed_since
// search lists, in a viewer's scope (a pending agent hidden) and an
// admin's, and a report without the finding takes the agent off.
func TestSecurityReportRecentKeyChanges(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		now := time.Now()
		came := func(name string, at time.Time, codes ...string) string {
			t.Helper()
			raw := fmt.Sprintf(`{"name": %q, "description": "d", "version": "1.0.0",
  "supportedInterfaces": [{"url": "https://agents.example/%s/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
  "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []}`, name, name)
			c, err := card.Parse([]byte(raw), card.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Upsert(ctx, actor, catalog.UpsertInput{CardURL: "https://agents.example/" + name + "/.well-known/agent-card.json",
				Card: c, Source: catalog.SourceURL, ReceivedAt: at})
			if err != nil {
				t.Fatal(err)
			}
			record(t, s, res.Agent.ID, codes...)
			return res.Agent.ID
		}
		fresh := came("fresh", now.Add(-48*time.Hour), verify.FindingSigningKeyChanged, "no_security")
		came("old", now.AddDate(0, 0, -40), verify.FindingSigningKeyChanged)
		came("same-key", now, "no_security")
		dropped := came("dropped", now, verify.FindingSigningKeyChanged)
		hidden := came("hidden", now.AddDate(0, 0, -29), verify.FindingSigningKeyChanged)
		if _, err := s.SetListing(ctx, actor, catalog.ScopeAll, hidden, catalog.ListingChange{State: catalog.ListingPending, Reason: "test"}); err != nil {
			t.Fatal(err)
		}
		// A later report on the same version without the finding.
		record(t, s, dropped, "no_security")
		for _, tc := range []struct {
			name        string
			scope       catalog.Scope
			recent, all int
		}{
			{"viewer", catalog.Scope{}, 1, 2},
			{"admin", catalog.ScopeAll, 2, 3},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r, err := report.SecurityReport(ctx, s, tc.scope, now)
				if err != nil {
					t.Fatal(err)
				}
				since := now.UTC().AddDate(0, 0, -29).Format(time.DateOnly)
				if c := r.RecentKeyChanges; c.Count != tc.recent || c.Value != since || c.Query != "key_changed_since="+since {
					t.Errorf("recent key changes = %+v, want %d since %s", c, tc.recent, since)
				}
				if r.KeyChanges.Count != tc.all {
					t.Errorf("key changes = %d, want %d", r.KeyChanges.Count, tc.all)
				}
				for _, c := range []report.Count{r.RecentKeyChanges, r.KeyChanges} {
					if n := listed(t, s, tc.scope, c.Query); n != c.Count {
						t.Errorf("%s counts %d, its search %q lists %d", c.Value, c.Count, c.Query, n)
					}
				}
			})
		}
		if n := listed(t, s, catalog.Scope{}, "key_changed_since="+now.UTC().Format(time.DateOnly)); n != 0 {
			t.Errorf("key changes since today list %d, want 0 (fresh came two days ago)", n)
		}
		if n := listed(t, s, catalog.Scope{}, "key_changed_since="+now.UTC().AddDate(0, 0, -2).Format(time.DateOnly)); n != 1 {
			t.Errorf("key changes since two days ago list %d, want 1 (%s)", n, fresh)
		}
	})
}

// record stores a report on version 1 of agent id with codes.
func record(t *testing.T, s *catalog.Store, id string, codes ...string) {
	t.Helper()
	if err := s.RecordVerifications(context.Background(), actor, []catalog.VerificationInput{{AgentID: id, Version: 1,
		Status: catalog.SignatureUnsigned, Report: []byte(`{}`), VerifiedAt: time.Now(), RecheckAt: time.Now().Add(time.Hour), AuditCodes: codes}}); err != nil {
		t.Fatal(err)
	}
}
