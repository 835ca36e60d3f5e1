package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
)

// TestSecurityPage: the numbers are the catalog's, each links to the
// console search listing its agents, the header links to the page, and
// an agent hidden from the caller is not counted (a viewer does not see
// a pending agent; development mode sees every agent).
func TestSecurityPage(t *testing.T) {
	ctx := context.Background()
	dev := newFixture(t, fixtureOptions{})
	signed := newFixture(t, fixtureOptions{opts: Options{Authorizer: headerAuth{}, Principal: callerOf}})
	for _, f := range []*fixture{dev, signed} {
		if _, err := f.store.SetListing(ctx, catalog.System("test"), catalog.ScopeAll, f.ids["evil"],
			catalog.ListingChange{State: catalog.ListingPending, Reason: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := dev.store.Search(ctx, catalog.Query{Limit: 1, Scope: catalog.ScopeAll})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		f             *fixture
		header        map[string]string
		agents        int
		want, wantNot []string
	}{
		{name: "development mode counts the pending agent", f: dev, agents: all.Total,
			want: []string{`<a href="/?signature=invalid">1</a>`, `<a href="/?audit=no_security">1</a>`,
				`<a href="/?severity=warning">1</a>`, `<a href="/?severity=error">0</a>`}},
		{name: "a viewer does not", f: signed, header: map[string]string{testCaller: "vic:viewer"}, agents: all.Total - 1,
			want:    []string{`<a href="/?severity=warning">0</a>`},
			wantNot: []string{`/?signature=invalid`, `/?audit=no_security`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tc.f.get(t, "/security", tc.header)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET /security = %d", rec.Code)
			}
			body := rec.Body.String()
			want := append([]string{`href="/security"`, `href="/?security_scheme=none"`,
				`href="/?audit=signing_key_changed"><strong>0</strong>`,
				`href="/?key_changed_since=`, `"><strong>0</strong> of them in the last 30 days`, `href="/?audit=plain_http_interface"><strong>`,
				`<strong>` + strconv.Itoa(tc.agents) + `</strong> agents`}, tc.want...)
			for _, w := range want {
				if !strings.Contains(body, w) {
					t.Errorf("security page lacks %q", w)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("security page shows %q, an agent hidden from the caller", w)
				}
			}
		})
	}
	if rec := signed.get(t, "/security", nil); rec.Code != http.StatusForbidden {
		t.Errorf("security page without a role = %d, want 403", rec.Code)
	}
}

// TestSecurityHistory: /security draws the history of the caller's
// scope, as SVG with its numbers in a table: an admin (development mode)
// reads the days of every agent, a viewer those of the public scope.
func TestSecurityHistory(t *testing.T) {
	ctx := context.Background()
	dev := newFixture(t, fixtureOptions{})
	signed := newFixture(t, fixtureOptions{opts: Options{Authorizer: headerAuth{}, Principal: callerOf}})
	for _, f := range []*fixture{dev, signed} {
		f.console.opts.History = f.store
		for i, day := range []string{"2026-02-28", "2026-03-01"} {
			for _, d := range []catalog.SecurityDay{
				{Day: day, Scope: catalog.HistoryScopeAll, Agents: 900 + i, SignatureVerified: 11, Anonymous: 3},
				{Day: day, Scope: catalog.HistoryScopePublic, Agents: 700 + i, SignatureVerified: 7, Anonymous: 2},
			} {
				if _, err := f.store.RecordSecurityDay(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, tc := range []struct {
		name          string
		f             *fixture
		header        map[string]string
		want, wantNot string
	}{
		{name: "admin", f: dev, want: "<td>901</td>", wantNot: "<td>701</td>"},
		{name: "viewer", f: signed, header: map[string]string{testCaller: "vic:viewer"}, want: "<td>701</td>", wantNot: "<td>901</td>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.f.get(t, "/security", tc.header).Body.String()
			for _, w := range []string{tc.want, `<svg viewBox="0 0 640 220" role="img"`, "<title id=\"chart-fleet-title\">Agents and signatures</title>",
				"<th scope=\"row\">2026-03-01</th>", "<polyline"} {
				if !strings.Contains(body, w) {
					t.Errorf("security page lacks %q", w)
				}
			}
			if strings.Contains(body, tc.wantNot) {
				t.Errorf("security page shows %q, another scope's history", tc.wantNot)
			}
		})
	}
}

// TestPublisherPage: a publisher's page counts and lists only the agents
// the caller sees, links each number to its search, answers any spelling
// of the domain at one address, and a verified publisher earns its badge
// on the page and in search results.
func TestPublisherPage(t *testing.T) {
	ctx := context.Background()
	signed := newFixture(t, fixtureOptions{opts: Options{Authorizer: headerAuth{}, Principal: callerOf}})
	f := signed
	first := f.upsert(t, "https://agents.acme.co.uk/card.json", evilCard("1.0.0"), t0)
	f.upsert(t, "https://billing.acme.co.uk/card.json", evilCard("2.0.0"), t0)
	if err := f.store.RecordVerifications(ctx, catalog.System("test"), []catalog.VerificationInput{{AgentID: first, Version: 1,
		Status: catalog.SignatureVerified, VerifiedAt: t0, RecheckAt: t0.Add(time.Hour), PublisherVerified: true,
		Report: []byte(`{"signatures":{"status":"verified","entries":[]},"publisher":{"domain":"acme.co.uk","verified":true,"proof":"jku"}}`)}}); err != nil {
		t.Fatal(err)
	}
	hidden := f.upsert(t, "https://hidden.acme.co.uk/card.json", evilCard("3.0.0"), t0)
	if _, err := f.store.SetListing(ctx, catalog.System("test"), catalog.ScopeAll, hidden,
		catalog.ListingChange{State: catalog.ListingPending, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	viewer := map[string]string{testCaller: "vic:viewer"}
	body := f.get(t, "/publishers/acme.co.uk", viewer).Body.String()
	for _, w := range []string{`<strong>2</strong> agents</a>`, `href="/?publisher=acme.co.uk&amp;publisher_verified=true"><strong>1</strong>`,
		`href="/?publisher=acme.co.uk&amp;signature=verified">1</a>`, `verified publisher</span>`, `/agents/` + first} {
		if !strings.Contains(body, w) {
			t.Errorf("publisher page lacks %q", w)
		}
	}
	if strings.Contains(body, hidden) {
		t.Error("publisher page lists an agent hidden from the caller")
	}
	agent := f.get(t, "/agents/"+first, viewer).Body.String()
	if !strings.Contains(agent, `Publisher <a href="/publishers/acme.co.uk">acme.co.uk</a>`) || !strings.Contains(agent, "by a jku on the domain") {
		t.Error("the agent page does not name its verified publisher")
	}
	if rec := f.get(t, "/publishers/WWW.Acme.co.uk", viewer); rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/publishers/acme.co.uk" {
		t.Errorf("another spelling = %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	if rec := f.get(t, "/publishers/nobody.example.org", viewer); rec.Code != http.StatusNotFound {
		t.Errorf("unknown publisher = %d", rec.Code)
	}
	search := f.get(t, "/?publisher=acme.co.uk", viewer).Body.String()
	if !strings.Contains(search, `href="/publishers/acme.co.uk" title="The publisher's domain proved`) || strings.Count(search, "✓ publisher") != 1 {
		t.Errorf("search results: want one verified-publisher badge linking to the page:\n%s", search)
	}
}
