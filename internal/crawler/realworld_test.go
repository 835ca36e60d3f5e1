package crawler_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/importer"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/verify"
)

// corpusDir holds cards written for the registry's real-world cases: each
// era's version declarations, mixed cards, legacy authentication,
// misplaced security, non-cards, skills without ids.
var corpusDir = filepath.Join("..", "card", "testdata", "realworld")

// realWorldCase is what the registry must say about one corpus card,
// whichever way the card arrived.
type realWorldCase struct {
	file string
	// refused is the card.ParseError code the card is refused with
	// (card.CodeNotACard, card.CodeMissingName), and refusedHas a part
	// of its message; the rest is then unused.
	refused, refusedHas string
	// versions is Card.ProtocolVersions; each is also a protocol_version
	// filter that must find the agent.
	versions []string
	// ifaces are "BINDING VERSION" per interface; each binding is also a
	// binding filter that must find the agent.
	ifaces []string
	// schemes are the security_scheme facet values (card.SecurityTypes;
	// "none" when anonymous).
	schemes []string
	// findings must be reported; absent must not.
	findings, absent []string
	// audit and noAudit are verify.AuditSecurity codes that must, and must
	// not, be reported.
	audit, noAudit []string
	// skillNames must each find the agent by text search.
	skillNames []string
}

var realWorldCases = []realWorldCase{
	{file: "v10_full.json", versions: []string{"1.0"}, ifaces: []string{"JSONRPC 1.0", "HTTP+JSON 1.0"}, schemes: []string{"http"},
		absent: []string{card.LintMissingProtocolVersion, card.LintInsecureURL, card.LintLegacySecurityKey}},
	{file: "v10rc_protocol_versions.json", versions: []string{"1.0"}, ifaces: []string{"JSONRPC 1.0"}, schemes: []string{"none"},
		findings: []string{card.LintMissingProtocolVersion}, audit: []string{verify.FindingNoSecurity}},
	{file: "v10_shape_declares_040.json", versions: []string{"0.4"}, ifaces: []string{"JSONRPC 0.4"}, schemes: []string{"none"},
		findings: []string{card.LintMissingProtocolVersion}},
	{file: "v10_no_version_anywhere.json", versions: []string{card.VersionUnknown}, ifaces: []string{"GRPC unknown"}, schemes: []string{"none"},
		findings: []string{card.LintMissingProtocolVersion, card.LintNoncanonicalBinding}},
	{file: "v03_rest_alias.json", versions: []string{"0.3"}, ifaces: []string{"JSONRPC 0.3", "HTTP+JSON 0.3"}, schemes: []string{"apiKey"},
		findings: []string{card.LintUnknownBinding, card.LintDuplicateInterface}, absent: []string{card.LintConflictingTransports}},
	{file: "v026_no_preferred_transport.json", versions: []string{"0.2"}, ifaces: []string{"JSONRPC 0.2"}, schemes: []string{"none"},
		absent: []string{card.LintMissingPreferredTransport}},
	{file: "v02_url_only.json", versions: []string{card.VersionUnknown}, ifaces: []string{"JSONRPC unknown"}, schemes: []string{"none"},
		absent: []string{card.LintMissingPreferredTransport}},
	{file: "no_interface.json", versions: []string{card.VersionUnknown}, schemes: []string{"none"},
		findings: []string{card.LintMissingField}},
	{file: "mixed_leftover_url.json", versions: []string{"1.0"}, ifaces: []string{"HTTP+JSON 1.0", "GRPC 1.0"}, schemes: []string{"none"},
		findings: []string{card.LintIgnoredURL}, absent: []string{card.LintConflictingTransports, card.LintMissingPreferredTransport}},
	{file: "declares_10_without_supported_interfaces.json", versions: []string{"1.0"}, ifaces: []string{"JSONRPC 1.0"}, schemes: []string{"none"},
		findings: []string{card.LintMissingSupportedInterfaces}},
	{file: "v01_authentication_none.json", versions: []string{card.VersionUnknown}, ifaces: []string{"JSONRPC unknown"}, schemes: []string{"none"},
		findings: []string{card.LintLegacyAuthentication, card.LintInsecureURL}, absent: []string{card.LintIncompleteLegacyScheme},
		audit: []string{verify.FindingNoSecurity}, noAudit: []string{verify.FindingCredentialsOverHTTP}},
	{file: "v01_authentication_apikey_oauth.json", versions: []string{card.VersionUnknown}, ifaces: []string{"JSONRPC unknown"},
		schemes: []string{"apiKey", "oauth2"}, findings: []string{card.LintLegacyAuthentication, card.LintIncompleteLegacyScheme},
		noAudit: []string{verify.FindingNoSecurity}},
	{file: "v10_security_body_under_v03_key.json", versions: []string{"1.0"}, ifaces: []string{"JSONRPC 1.0"}, schemes: []string{"oauth2"},
		findings: []string{card.LintMisplacedSecurity}, absent: []string{card.LintUndeclaredScheme, card.LintLegacySecurityKey},
		noAudit: []string{verify.FindingNoSecurity, verify.FindingUndeclaredScheme}},
	{file: "v10_with_v03_security_key.json", versions: []string{"1.0"}, ifaces: []string{"JSONRPC 1.0"}, schemes: []string{"openIdConnect"},
		findings: []string{card.LintLegacySecurityKey}, absent: []string{card.LintMisplacedSecurity}},
	{file: "hybrid_extended_card_flag.json", versions: []string{"1.0"}, ifaces: []string{"JSONRPC 1.0"}, schemes: []string{"none"},
		findings: []string{card.LintHybridField}},
	{file: "skills_without_id.json", versions: []string{"0.3"}, ifaces: []string{"JSONRPC 0.3"}, schemes: []string{"none"},
		findings: []string{card.LintMissingField}, skillNames: []string{"Sourdough troubleshooting", "Menu planner"}},
	{file: "insecure_links_only.json", versions: []string{"1.0"}, ifaces: []string{"JSONRPC 1.0"}, schemes: []string{"none"},
		absent: []string{card.LintInsecureURL, card.LintInvalidURL}},
	{file: "not_a_card_package_manifest.json", refused: card.CodeNotACard},
	{file: "not_a_card_other_format.json", refused: card.CodeNotACard},
	{file: "not_a_card_empty_object.json", refused: card.CodeNotACard},
	{file: "not_a_card_mcp_tools.json", refused: card.CodeNotACard, refusedHas: "nothing to call or choose"},
	{file: "not_a_card_product_features.json", refused: card.CodeNotACard, refusedHas: "nothing to call or choose"},
	{file: "nameless_display_name.json", refused: card.CodeMissingName, refusedHas: "$.display_name"},
	{file: "undeclared_scheme_requirement.json", versions: []string{"0.3"}, ifaces: []string{"JSONRPC 0.3"}, schemes: []string{card.SchemeUndeclared},
		findings: []string{card.LintUndeclaredScheme}, audit: []string{verify.FindingUndeclaredScheme}, noAudit: []string{verify.FindingNoSecurity}},
	{file: "placeholder_looker_url.json", versions: []string{"1.0"}, ifaces: []string{"HTTP+JSON 1.0"}, schemes: []string{"none"},
		findings: []string{card.LintInvalidURL}, absent: []string{card.LintNoInterfaces}},
	{file: "placeholder_base_url.json", versions: []string{"0.3"}, schemes: []string{"none"},
		findings: []string{card.LintInvalidURL, card.LintNoInterfaces}},
	{file: "mcp_date_protocol_version.json", versions: []string{"1.0"}, ifaces: []string{"JSONRPC 1.0"}, schemes: []string{"none"},
		findings: []string{card.LintInvalidProtocolVersion}, absent: []string{card.LintMissingProtocolVersion}},
	{file: "v01_authentication_x402.json", versions: []string{card.VersionUnknown}, ifaces: []string{"JSONRPC unknown"},
		schemes: []string{card.SchemeUndeclared}, findings: []string{card.LintLegacyAuthentication, card.LintUnknownLegacyScheme},
		absent: []string{card.LintIncompleteLegacyScheme}, noAudit: []string{verify.FindingNoSecurity}},
	{file: "skills_null.json", versions: []string{"1.0"}, ifaces: []string{"JSONRPC 1.0"}, schemes: []string{"none"},
		findings: []string{card.LintEmptySkills}, absent: []string{card.LintMissingField}},
}

// seedCard is the card a crawled agent had before its card URL started
// serving the corpus card.
const seedCard = `{"name":"Seed","description":"d","version":"0",
"supportedInterfaces":[{"url":"https://seed.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`

// TestRealWorldCorpus runs every corpus card through the three ways a card
// reaches the catalog (registry import --url, registration by URL, a crawl
// of a registered agent) on each database, and checks what the registry
// then says: versions, interfaces, schemes, findings, facets, search.
func TestRealWorldCorpus(t *testing.T) {
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tc := range realWorldCases {
		listed = append(listed, tc.file)
	}
	for _, e := range entries {
		if !slices.Contains(listed, e.Name()) {
			t.Errorf("corpus file %s has no case", e.Name())
		}
	}

	// Each case is served at its own path of one loopback host: a hub.
	mux := http.NewServeMux()
	mux.HandleFunc("/agents/{file}/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		raw, err := os.ReadFile(filepath.Join(corpusDir, filepath.Base(r.PathValue("file"))))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(raw)
	})
	// Other spellings of a case's directory redirect to it.
	mux.HandleFunc("/agents/{file}/{how}/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/agents/"+r.PathValue("file")+"/.well-known/agent-card.json", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Timeout: 5 * time.Second})
	defer client.CloseIdleConnections()
	fetcher := crawler.NewFetcher(client, 0)

	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		// cardURL spells the served URL the way a user might; the key is
		// its canonical form.
		cardURL := func(file, how string) string {
			return srv.URL + "/agents/" + file + "/" + how + "/.well-known/agent-card.json"
		}
		ways := []struct {
			name   string
			arrive func(t *testing.T, tc realWorldCase, raw []byte, u string) error
		}{
			{"import", func(t *testing.T, tc realWorldCase, raw []byte, u string) error {
				im := &importer.Importer{Store: s}
				_, err := im.CardAt(ctx, raw, strings.Replace(u, "/.well-known/", "//./.well-known/", 1))
				return err
			}},
			{"register", func(t *testing.T, tc realWorldCase, raw []byte, u string) error {
				r := crawler.NewRegistrar(fetcher, s, card.Limits{}, nil)
				_, err := r.Register(ctx, catalog.System("test"), catalog.ScopeAll, strings.Replace(u, "/.well-known/", "/x/../.well-known/", 1))
				return err
			}},
			{"crawl", func(t *testing.T, tc realWorldCase, raw []byte, u string) error {
				seed, err := card.Parse([]byte(seedCard), card.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				res, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: u, Card: seed, Source: catalog.SourceURL, ReceivedAt: time.Now().Add(-time.Hour)})
				if err != nil {
					t.Fatal(err)
				}
				c := crawler.New(crawler.Config{}, s, fetcher, nil)
				out, err := c.RefreshNow(ctx, catalog.System("test"), res.Agent.ID)
				if err != nil {
					t.Fatal(err)
				}
				if out.Outcome.Class == crawler.ClassNotACard {
					// The fetch history keeps the refusal's text, which
					// names its code (crawler.ProblemOf).
					code := card.CodeNotACard
					if strings.Contains(out.Outcome.Message, "("+card.CodeMissingName+" at $.name)") {
						code = card.CodeMissingName
					}
					return &card.ParseError{Code: code, Message: out.Outcome.Message}
				}
				if out.Outcome.Class != "" {
					t.Fatalf("crawl failed: %s %s", out.Outcome.Class, out.Outcome.Message)
				}
				return nil
			}},
		}
		for _, way := range ways {
			for _, tc := range realWorldCases {
				t.Run(way.name+"/"+tc.file, func(t *testing.T) {
					raw, err := os.ReadFile(filepath.Join(corpusDir, tc.file))
					if err != nil {
						t.Fatal(err)
					}
					u := cardURL(tc.file, way.name)
					err = way.arrive(t, tc, raw, u)
					if tc.refused != "" {
						checkRefused(t, s, tc, way.name, u, err)
						return
					}
					if err != nil {
						t.Fatalf("%s: %v", way.name, err)
					}
					checkRealWorld(t, s, tc, u)
				})
			}
		}
	})
}

func checkRefused(t *testing.T, s *catalog.Store, tc realWorldCase, way, u string, err error) {
	t.Helper()
	var pe *card.ParseError
	if !errors.As(err, &pe) || pe.Code != tc.refused {
		t.Fatalf("error %v, want a %s ParseError", err, tc.refused)
	}
	if !strings.Contains(pe.Message, tc.refusedHas) {
		t.Errorf("message %q does not say %q", pe.Message, tc.refusedHas)
	}
	ctx := context.Background()
	a, aerr := s.AgentByURL(ctx, u)
	if way != "crawl" {
		if !errors.Is(aerr, catalog.ErrNotFound) {
			t.Errorf("a non-card was stored: %+v, %v", a, aerr)
		}
		return
	}
	// A registered agent whose card turned into a non-card keeps its last
	// good version and goes stale with the failure class.
	if aerr != nil {
		t.Fatal(aerr)
	}
	if a.CurrentVersion != 1 || a.Card.Name != "Seed" {
		t.Errorf("agent now %q version %d, want the last good card kept", a.Card.Name, a.CurrentVersion)
	}
	h, err := s.AgentHealth(ctx, a.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if h.State != catalog.HealthStale || h.LastError == nil || h.LastError.Class != crawler.ClassNotACard {
		t.Errorf("health %+v (last error %+v), want stale with class %s", h, h.LastError, crawler.ClassNotACard)
	}
}

func checkRealWorld(t *testing.T, s *catalog.Store, tc realWorldCase, u string) {
	t.Helper()
	ctx := context.Background()
	key, err := card.CanonicalCardURL(u)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.AgentByURL(ctx, key)
	if err != nil {
		t.Fatalf("AgentByURL(%s): %v", key, err)
	}
	c := a.Card
	if !slices.Equal(c.ProtocolVersions, tc.versions) {
		t.Errorf("protocol versions %q, want %q", c.ProtocolVersions, tc.versions)
	}
	var ifaces []string
	for _, in := range c.Interfaces {
		ifaces = append(ifaces, in.Binding+" "+in.ProtocolVersion)
		// Probes, checks and test runs reach only Card.Interfaces.
		if m, ok := card.PlaceholderIn(in.URL); ok {
			t.Errorf("interface %s with placeholder %s would be probed and offered to the proxy", in.URL, m)
		}
	}
	if !slices.Equal(ifaces, tc.ifaces) {
		t.Errorf("interfaces %q, want %q", ifaces, tc.ifaces)
	}
	codes := map[string]bool{}
	for _, f := range c.Findings {
		codes[f.Code] = true
	}
	for _, code := range tc.findings {
		if !codes[code] {
			t.Errorf("no %s finding; findings %+v", code, c.Findings)
		}
	}
	for _, code := range tc.absent {
		if codes[code] {
			t.Errorf("unexpected %s finding; findings %+v", code, c.Findings)
		}
	}
	audit := map[string]bool{}
	for _, f := range verify.New(verify.Options{}).AuditSecurity(ctx, c) {
		audit[f.Code] = true
	}
	for _, code := range tc.audit {
		if !audit[code] {
			t.Errorf("security audit lacks %s", code)
		}
	}
	for _, code := range tc.noAudit {
		if audit[code] {
			t.Errorf("security audit reports %s", code)
		}
	}

	// What search says: each facet value finds the agent; the scheme facet
	// lists exactly the declared types.
	found := func(q catalog.Query) bool {
		t.Helper()
		q.Limit = 100
		page, err := s.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if it.ID == a.ID {
				return true
			}
		}
		return false
	}
	filters := map[string][]string{catalog.FieldProtocolVersion: tc.versions, catalog.FieldSecurityScheme: tc.schemes}
	for _, in := range tc.ifaces {
		filters[catalog.FieldBinding] = append(filters[catalog.FieldBinding], strings.Fields(in)[0])
	}
	for field, values := range filters {
		for _, v := range values {
			if !found(catalog.Query{Filters: map[string][]string{field: {v}}}) {
				t.Errorf("%s=%s does not find the agent", field, v)
			}
		}
	}
	if !slices.ContainsFunc(tc.ifaces, func(s string) bool { return strings.HasPrefix(s, "JSONRPC") }) &&
		found(catalog.Query{Filters: map[string][]string{catalog.FieldBinding: {"JSONRPC"}}}) {
		t.Error("binding=JSONRPC finds an agent that declares no JSON-RPC interface")
	}
	schemes := c.SecurityTypes()
	if len(schemes) == 0 {
		schemes = []string{"none"}
	}
	if !slices.Contains(tc.schemes, "none") && found(catalog.Query{Filters: map[string][]string{catalog.FieldSecurityScheme: {"none"}}}) {
		t.Error("security_scheme=none finds an agent that asks for security")
	}
	if !slices.Equal(schemes, tc.schemes) {
		t.Errorf("scheme types %q, want %q", schemes, tc.schemes)
	}
	for _, name := range tc.skillNames {
		if !found(catalog.Query{Text: name}) {
			t.Errorf("skill %q does not find the agent", name)
		}
	}
}

// TestRealWorldIdentity: one agent per canonical card URL, path included,
// however the URL is spelled and whichever way the card arrives; two
// agents served from one host at two paths stay two agents.
func TestRealWorldIdentity(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/agents/{name}/card.json", func(w http.ResponseWriter, r *http.Request) {
		raw, err := os.ReadFile(filepath.Join(corpusDir, "v10_full.json"))
		if err != nil {
			t.Error(err)
			return
		}
		// Two distinct agents: the name differs per path.
		w.Write([]byte(strings.Replace(string(raw), "Invoice Reader", "Agent "+r.PathValue("name"), 1)))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Timeout: 5 * time.Second})
	defer client.CloseIdleConnections()
	fetcher := crawler.NewFetcher(client, 0)
	port := strings.TrimPrefix(srv.URL, "http://127.0.0.1:")

	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		reg := crawler.NewRegistrar(fetcher, s, card.Limits{}, nil)
		im := &importer.Importer{Store: s}
		raw, err := os.ReadFile(filepath.Join(corpusDir, "v10_full.json"))
		if err != nil {
			t.Fatal(err)
		}
		canonA := srv.URL + "/agents/a/card.json"
		first, err := reg.Register(ctx, catalog.System("test"), catalog.ScopeAll, canonA)
		if err != nil {
			t.Fatal(err)
		}
		if first.Agent.CardURL != canonA {
			t.Fatalf("card URL %s, want %s", first.Agent.CardURL, canonA)
		}
		spellings := []string{
			srv.URL + "/agents/a/card.json?",
			srv.URL + "/agents/a/card.json#top",
			srv.URL + "//agents/a//card.json",
			srv.URL + "/agents/a/%63ard.json",
			srv.URL + "/agents/./a/card.json",
			srv.URL + "/agents/x/../a/card.json",
			"HTTP://127.0.0.1.:" + port + "/agents/a/card.json",
			"http://[::ffff:127.0.0.1]:" + port + "/agents/a/card.json",
		}
		for _, u := range spellings {
			res, err := reg.Register(ctx, catalog.System("test"), catalog.ScopeAll, u)
			if err != nil {
				t.Errorf("register %s: %v", u, err)
				continue
			}
			if res.Agent.ID != first.Agent.ID || res.Created {
				t.Errorf("register %s: agent %s (created %v), want %s", u, res.Agent.ID, res.Created, first.Agent.ID)
			}
		}
		// An import told where the card is served files it under the
		// same agent (a new version: the bytes differ from what the
		// server sends).
		res, err := im.CardAt(ctx, raw, "http://[::ffff:127.0.0.1]:"+port+"/agents/x/../a/card.json?")
		if err != nil {
			t.Fatal(err)
		}
		if res.AgentID != first.Agent.ID || res.CardURL != canonA {
			t.Errorf("import --url: agent %s at %s, want %s at %s", res.AgentID, res.CardURL, first.Agent.ID, canonA)
		}
		// Another path on the same host is another agent.
		b, err := reg.Register(ctx, catalog.System("test"), catalog.ScopeAll, srv.URL+"/agents/b/card.json")
		if err != nil {
			t.Fatal(err)
		}
		if b.Agent.ID == first.Agent.ID || !b.Created {
			t.Errorf("agent b merged into agent a")
		}
		if n, err := s.Count(ctx); err != nil || n != 2 {
			t.Errorf("%d agents, %v; want 2", n, err)
		}
	})
}

// TestStoredUnderOlderRulesStillReads: a card an older release admitted
// (nameless, or with nothing to call) reads back, with its faults as
// findings; the crawler's next check refuses the new fetch instead.
func TestStoredUnderOlderRulesStillReads(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		for i, raw := range []string{
			`{"display_name":"Old","url":"https://old.example.com/a2a","skills":[{"id":"s","name":"S"}]}`,
			`{"name":"Features","capabilities":{"sso":true},"defaultInputModes":["text"]}`,
		} {
			if _, err := card.Parse([]byte(raw), card.Limits{}); err == nil {
				t.Fatalf("%s is admitted", raw)
			}
			c, err := card.Parse([]byte(raw), card.Limits{Stored: true})
			if err != nil {
				t.Fatal(err)
			}
			u := "https://old.example.com/" + strconv.Itoa(i) + "/.well-known/agent-card.json"
			res, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: u, Card: c, Source: catalog.SourceURL, ReceivedAt: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			a, err := s.AgentByURL(ctx, u)
			if err != nil {
				t.Fatalf("reading an agent stored under older rules: %v", err)
			}
			if len(a.Card.Findings) == 0 {
				t.Errorf("%s read without findings", raw)
			}
			if _, err := s.AgentView(ctx, catalog.Scope{All: true}, res.Agent.ID, time.Now()); err != nil {
				t.Errorf("agent view: %v", err)
			}
		}
	})
}
