package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/a2aregistry/registry/internal/auth"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// TestPublisherAgainstStore: GET /publishers/{domain} lists and counts
// only the publisher's agents the caller sees (a pending agent is in an
// editor's page, not a viewer's), answers 404 for a publisher none of
// whose agents the caller sees, reads any spelling of the domain, and
// every number is what its search lists.
func TestPublisherAgainstStore(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		ctx := context.Background()
		now := time.Now()
		upsert := func(u string, verified bool) string {
			t.Helper()
			res, err := store.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: u, Card: mustCard(t, "v01_authentication.json"),
				Source: catalog.SourceURL, ReceivedAt: now})
			if err != nil {
				t.Fatal(err)
			}
			if err := store.RecordVerifications(ctx, testActor, []catalog.VerificationInput{{AgentID: res.Agent.ID, Version: 1,
				Status: catalog.SignatureVerified, Report: []byte(`{}`), VerifiedAt: now, RecheckAt: now.Add(time.Hour),
				AuditCodes: []string{"no_security"}, PublisherVerified: verified}}); err != nil {
				t.Fatal(err)
			}
			return res.Agent.ID
		}
		signed := upsert("https://agents.acme.co.uk/card.json", true)
		upsert("https://billing.acme.co.uk/card.json", false)
		upsert("https://other.example/card.json", true)
		store.SetListingPolicy(catalog.ListingPolicy{RequireApproval: true})
		upsert("https://hidden.acme.co.uk/card.json", true)
		upsert("https://secret.example.net/card.json", true)
		store.SetListingPolicy(catalog.ListingPolicy{})

		for _, tc := range []struct {
			role             auth.Role
			agents, verified int
		}{
			{auth.Viewer, 2, 1},
			{auth.Editor, 3, 2},
		} {
			t.Run(tc.role.String(), func(t *testing.T) {
				env := testEnv{e: echo.New()}
				New(Options{Catalog: store, Authorizer: signedInAs(tc.role)}).Mount(env.e)
				for _, spelling := range []string{"acme.co.uk", "ACME.co.uk", "www.acme.co.uk"} {
					rec := env.do(t, http.MethodGet, "/api/v1/publishers/"+spelling, "", nil)
					if rec.Code != http.StatusOK {
						t.Fatalf("GET /publishers/%s = %d %s", spelling, rec.Code, rec.Body)
					}
					p := decodeJSON[PublisherResponse](t, rec)
					if p.Domain != "acme.co.uk" || p.Agents != tc.agents || len(p.Items) != tc.agents || p.VerifiedAgents.Count != tc.verified {
						t.Errorf("%s: %+v, want %d agents, %d verified", spelling, p, tc.agents, tc.verified)
					}
					for _, c := range append(append(append([]ReportCount{p.VerifiedAgents}, p.Signature...), p.Findings...), p.Health...) {
						rec := env.do(t, http.MethodGet, c.Search, "", nil)
						if l := decodeJSON[SearchResponse](t, rec); l.Total != c.Count {
							t.Errorf("%s counts %d, its search lists %d", c.Search, c.Count, l.Total)
						}
					}
					for _, it := range p.Items {
						if it.Publisher != "acme.co.uk" || it.PublisherVerified != (it.ID == signed || it.CardURL == "https://hidden.acme.co.uk/card.json") {
							t.Errorf("item %s: publisher %q verified %v", it.CardURL, it.Publisher, it.PublisherVerified)
						}
					}
				}
				wantHidden := http.StatusNotFound
				if tc.role >= auth.Editor {
					wantHidden = http.StatusOK
				}
				if rec := env.do(t, http.MethodGet, "/api/v1/publishers/example.net", "", nil); rec.Code != wantHidden {
					t.Errorf("a publisher whose only agent is pending = %d, want %d", rec.Code, wantHidden)
				}
				if rec := env.do(t, http.MethodGet, "/api/v1/publishers/nobody.example.org", "", nil); rec.Code != http.StatusNotFound {
					t.Errorf("unknown publisher = %d", rec.Code)
				}
				for _, bad := range []string{"a%20b", strings.Repeat("a", 300) + ".com"} {
					if rec := env.do(t, http.MethodGet, "/api/v1/publishers/"+bad, "", nil); rec.Code != http.StatusBadRequest {
						t.Errorf("a publisher that cannot be one = %d %s", rec.Code, rec.Body)
					}
				}
			})
		}
	})
}

// TestSecurityReportHistory: with a history store the report carries the
// history of the caller's scope: the public one for a viewer, every
// agent's for an admin.
func TestSecurityReportHistory(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, store *catalog.Store) {
		ctx := context.Background()
		day := catalog.DayOf(time.Now())
		for _, d := range []catalog.SecurityDay{
			{Day: day, Scope: catalog.HistoryScopeAll, TakenAt: time.Now(), Agents: 9},
			{Day: day, Scope: catalog.HistoryScopePublic, TakenAt: time.Now(), Agents: 7},
		} {
			if _, err := store.RecordSecurityDay(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			role   auth.Role
			agents int
			scope  string
		}{{auth.Viewer, 7, catalog.HistoryScopePublic}, {auth.Admin, 9, catalog.HistoryScopeAll}} {
			env := testEnv{e: echo.New()}
			New(Options{Catalog: store, History: store, Authorizer: signedInAs(tc.role)}).Mount(env.e)
			rep := decodeJSON[SecurityReport](t, env.do(t, http.MethodGet, "/api/v1/reports/security", "", nil))
			if len(rep.History) != 1 || rep.History[0].Agents != tc.agents || rep.History[0].Scope != tc.scope || rep.History[0].Day != day {
				t.Errorf("%s: history %+v, want one day of %d agents in scope %s", tc.role, rep.History, tc.agents, tc.scope)
			}
		}
	})
}
