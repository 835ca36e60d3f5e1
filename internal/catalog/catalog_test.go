package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/synth"
)

// testActor is who the tests write as.
var testActor = catalog.System("test")

const v02Card = `{
  "name": "Legacy Weather Bot",
  "description": "Answers weather questions for any city.",
  "url": "https://weather.example.com/a2a",
  "version": "0.9.0",
  "capabilities": {"streaming": false},
  "defaultInputModes": ["text/plain"],
  "defaultOutputModes": ["text/plain"],
  "skills": [{"id": "forecast", "name": "Forecast", "description": "Five day forecast.", "tags": ["weather", "forecast"]}]
}`

const v03Card = `{
  "protocolVersion": "0.3.0",
  "name": "Invoice Extractor",
  "description": "Reads invoices and returns structured JSON.",
  "url": "https://invoices.example.com/a2a/v1",
  "preferredTransport": "JSONRPC",
  "additionalInterfaces": [
    {"url": "https://invoices.example.com/a2a/v1", "transport": "JSONRPC"},
    {"url": "https://invoices.example.com/a2a/grpc", "transport": "GRPC"}
  ],
  "provider": {"organization": "Acme Finance", "url": "https://acme.example.com"},
  "version": "2.1.0",
  "capabilities": {"streaming": true},
  "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-API-Key"}},
  "security": [{"key": []}],
  "defaultInputModes": ["application/pdf", "image/png"],
  "defaultOutputModes": ["application/json"],
  "skills": [
    {"id": "extract-invoice", "name": "Extract invoice fields", "description": "Pulls totals, dates and line items out of invoices.", "tags": ["finance", "invoices", "ocr"], "examples": ["Extract the total from this invoice"]},
    {"id": "classify-document", "name": "Classify document", "description": "Tells receipts from invoices.", "tags": ["finance", "classification"], "inputModes": ["image/jpeg"], "outputModes": ["text/plain"]}
  ]
}`

const v10Card = `{
  "name": "Polyglot Translator",
  "description": "Translates documents between 40 languages.",
  "supportedInterfaces": [
    {"url": "https://translate.example.org/a2a", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    {"url": "https://translate.example.org/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
  ],
  "provider": {"organization": "Lingua Labs", "url": "https://lingua.example.org"},
  "version": "1.0.0",
  "capabilities": {"streaming": true, "extendedAgentCard": true},
  "securitySchemes": {"oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://id.example.org/.well-known/openid-configuration"}}},
  "securityRequirements": [{"schemes": {"oidc": {"list": ["openid"]}}}],
  "defaultInputModes": ["text/plain"],
  "defaultOutputModes": ["text/plain"],
  "skills": [
    {"id": "translate", "name": "Translate text", "description": "Translates text, keeping formatting.", "tags": ["translation", "language"]},
    {"id": "translate-pdf", "name": "Translate PDF", "description": "Translates whole PDF documents.", "tags": ["translation", "documents"], "inputModes": ["application/pdf"], "outputModes": ["application/pdf"]}
  ]
}`

func mustParse(t testing.TB, raw string) *card.Card {
	t.Helper()
	c, err := card.Parse([]byte(raw), card.DefaultLimits())
	if err != nil {
		t.Fatalf("parsing test card: %v", err)
	}
	return c
}

func upsert(t testing.TB, s *catalog.Store, url, raw string) catalog.UpsertResult {
	t.Helper()
	res, err := s.Upsert(context.Background(), testActor, catalog.UpsertInput{CardURL: url, Card: mustParse(t, raw), Source: catalog.SourceURL})
	if err != nil {
		t.Fatalf("upsert %s: %v", url, err)
	}
	return res
}

func seed(t testing.TB, s *catalog.Store) map[string]catalog.UpsertResult {
	return map[string]catalog.UpsertResult{
		"weather":    upsert(t, s, "https://weather.example.com/.well-known/agent.json", v02Card),
		"invoice":    upsert(t, s, "https://invoices.example.com/.well-known/agent-card.json", v03Card),
		"translator": upsert(t, s, "https://translate.example.org/.well-known/agent-card.json", v10Card),
	}
}

func TestUpsertVersions(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		const url = "https://invoices.example.com/.well-known/agent-card.json"
		first := upsert(t, s, url, v03Card)
		if !first.Created || !first.NewVersion || first.Agent.CurrentVersion != 1 {
			t.Fatalf("first upsert = created %v new %v version %d", first.Created, first.NewVersion, first.Agent.CurrentVersion)
		}
		same := upsert(t, s, url, v03Card)
		if same.Created || same.NewVersion || same.Agent.ID != first.Agent.ID {
			t.Fatalf("identical bytes: created %v new %v id %s", same.Created, same.NewVersion, same.Agent.ID)
		}
		// Whitespace alone is a change of the raw bytes, hence a version:
		// signatures and audits are about bytes.
		changed := upsert(t, s, url, strings.Replace(v03Card, "2.1.0", "2.2.0", 1))
		if changed.Created || !changed.NewVersion || changed.Agent.CurrentVersion != 2 {
			t.Fatalf("changed card: created %v new %v version %d", changed.Created, changed.NewVersion, changed.Agent.CurrentVersion)
		}
		vs, err := s.Versions(ctx, catalog.ScopeAll, first.Agent.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 2 || vs[0].Number != 2 || vs[1].Number != 1 {
			t.Fatalf("versions = %+v", vs)
		}
		v1, err := s.Version(ctx, catalog.ScopeAll, first.Agent.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if string(v1.Raw) != v03Card {
			t.Fatal("version 1 raw bytes differ from what was stored")
		}
		raw, err := s.RawCard(ctx, catalog.ScopeAll, first.Agent.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "2.2.0") {
			t.Fatal("RawCard does not return the current version")
		}
		got, err := s.Agent(ctx, catalog.ScopeAll, first.Agent.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Card.Version != "2.2.0" || got.CardURL != url || got.Health != catalog.HealthUnknown ||
			got.SignatureStatus != catalog.SignatureUnchecked {
			t.Fatalf("agent = %+v", got)
		}
		if n, err := s.Count(ctx); err != nil || n != 1 {
			t.Fatalf("Count = %d, %v", n, err)
		}
	})
}

func TestNotFound(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		res := upsert(t, s, "https://weather.example.com/.well-known/agent.json", v02Card)
		checks := map[string]error{}
		_, checks["Agent"] = s.Agent(ctx, catalog.ScopeAll, "no-such-id")
		_, checks["AgentByURL"] = s.AgentByURL(ctx, "https://nowhere.example/")
		_, checks["RawCard"] = s.RawCard(ctx, catalog.ScopeAll, "no-such-id")
		_, checks["Versions"] = s.Versions(ctx, catalog.ScopeAll, "no-such-id")
		_, checks["Version"] = s.Version(ctx, catalog.ScopeAll, res.Agent.ID, 7)
		for name, err := range checks {
			if !errors.Is(err, catalog.ErrNotFound) {
				t.Errorf("%s: err = %v, want ErrNotFound", name, err)
			}
		}
	})
}

func ids(p catalog.Page) []string {
	out := make([]string, len(p.Items))
	for i, it := range p.Items {
		out[i] = it.Name
	}
	slices.Sort(out)
	return out
}

func TestSearchFilters(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		seed(t, s)
		const (
			weather = "Legacy Weather Bot"
			invoice = "Invoice Extractor"
			transl  = "Polyglot Translator"
		)
		tests := []struct {
			name    string
			text    string
			filters map[string][]string
			want    []string
		}{
			{"everything", "", nil, []string{invoice, weather, transl}},
			{"text in name", "translator", nil, []string{transl}},
			{"text prefix", "invoic", nil, []string{invoice}},
			{"text in skill description", "receipts", nil, []string{invoice}},
			{"text in tag", "ocr", nil, []string{invoice}},
			{"text in provider", "lingua", nil, []string{transl}},
			{"text in example", "total", nil, []string{invoice}},
			{"text any word matches", "invoices weather", nil, []string{invoice, weather}},
			{"text half of three words must match", "weather forecast invoices", nil, []string{weather}},
			{"text case and punctuation", "  LANGUAGES!!  ", nil, []string{transl}},
			{"text related word (pdf: document)", "pdf", nil, []string{invoice, transl}},
			{"tag", "", map[string][]string{"tag": {"finance"}}, []string{invoice}},
			{"tag case-insensitive", "", map[string][]string{"tag": {"Translation"}}, []string{transl}},
			{"two tags both required", "", map[string][]string{"tag": {"finance", "translation"}}, []string{}},
			{"skill by id", "", map[string][]string{"skill": {"forecast"}}, []string{weather}},
			{"skill by name", "", map[string][]string{"skill": {"translate pdf"}}, []string{transl}},
			{"input mode exact, inherited default", "", map[string][]string{"input_mode": {"image/png"}}, []string{invoice}},
			{"input mode wildcard", "", map[string][]string{"input_mode": {"image/*"}}, []string{invoice}},
			{"input mode any", "", map[string][]string{"input_mode": {"*/*"}}, []string{invoice, weather, transl}},
			{"output mode skill override", "", map[string][]string{"output_mode": {"application/pdf"}}, []string{transl}},
			{"input pdf output json", "", map[string][]string{"input_mode": {"application/pdf"}, "output_mode": {"application/json"}}, []string{invoice}},
			{"binding", "", map[string][]string{"binding": {"grpc"}}, []string{invoice}},
			{"binding http+json", "", map[string][]string{"binding": {"HTTP+JSON"}}, []string{transl}},
			{"protocol version 1.0", "", map[string][]string{"protocol_version": {"1.0"}}, []string{transl}},
			{"protocol version unknown", "", map[string][]string{"protocol_version": {"unknown"}}, []string{weather}},
			{"security scheme", "", map[string][]string{"security_scheme": {"openIdConnect"}}, []string{transl}},
			{"no security scheme", "", map[string][]string{"security_scheme": {"none"}}, []string{weather}},
			{"provider", "", map[string][]string{"provider": {"acme finance"}}, []string{invoice}},
			{"signature", "", map[string][]string{"signature": {"unchecked"}}, []string{invoice, weather, transl}},
			{"health", "", map[string][]string{"health": {"up"}}, []string{}},
			{"text plus filter", "documents", map[string][]string{"tag": {"translation"}}, []string{transl}},
			{"unknown value", "", map[string][]string{"tag": {"nonexistent"}}, []string{}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				p, err := s.Search(context.Background(), catalog.Query{Text: tc.text, Filters: tc.filters})
				if err != nil {
					t.Fatal(err)
				}
				if got := ids(p); !slices.Equal(got, tc.want) {
					t.Errorf("got %v, want %v", got, tc.want)
				}
				if p.Total != len(tc.want) {
					t.Errorf("total = %d, want %d", p.Total, len(tc.want))
				}
			})
		}
	})
}

func TestSearchFacetsAndRanking(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		seed(t, s)
		p, err := s.Search(ctx, catalog.Query{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]catalog.FacetCount{
			"binding":          {{Value: "JSONRPC", Count: 3}, {Value: "GRPC", Count: 1}, {Value: "HTTP+JSON", Count: 1}},
			"protocol_version": {{Value: "0.3", Count: 1}, {Value: "1.0", Count: 1}, {Value: "unknown", Count: 1}},
			"tag":              {{Value: "finance", Count: 1}, {Value: "translation", Count: 1}},
		}
		for field, w := range want {
			got := p.Facets[field]
			if field == "tag" {
				got = slices.DeleteFunc(slices.Clone(got), func(f catalog.FacetCount) bool {
					return f.Value != "finance" && f.Value != "translation"
				})
			}
			if !slices.Equal(got, w) {
				t.Errorf("facet %s = %v, want %v", field, got, w)
			}
		}
		for _, f := range catalog.FilterFields {
			_, ok := p.Facets[f]
			// The listing facet is for scopes that review (editors).
			if want := f != catalog.FieldListing; ok != want {
				t.Errorf("facet %s present = %v, want %v", f, ok, want)
			}
		}
		// A door that shows no facets gets the same agents and no counts.
		np, err := s.Search(ctx, catalog.Query{NoFacets: true})
		if err != nil {
			t.Fatal(err)
		}
		if np.Total != p.Total || len(np.Items) != len(p.Items) {
			t.Errorf("NoFacets: %d agents, %d listed; want %d, %d", np.Total, len(np.Items), p.Total, len(p.Items))
		}
		for f, counts := range np.Facets {
			if len(counts) > 0 {
				t.Errorf("NoFacets: facet %s = %v, want none", f, counts)
			}
		}
		// Facets follow the filters.
		p, err = s.Search(ctx, catalog.Query{Filters: map[string][]string{"tag": {"translation"}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Facets["provider"]; !slices.Equal(got, []catalog.FacetCount{{Value: "Lingua Labs", Count: 1}}) {
			t.Errorf("provider facet under tag filter = %v", got)
		}
		// A name match outranks a description match.
		upsert(t, s, "https://other.example.com/.well-known/agent-card.json",
			strings.NewReplacer("Polyglot Translator", "Document Helper", "translate.example.org", "other.example.com").Replace(v10Card))
		p, err = s.Search(ctx, catalog.Query{Text: "translator"})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) == 0 || p.Items[0].Name != "Polyglot Translator" || p.Items[0].Score <= 0 {
			t.Fatalf("ranking: %+v", p.Items)
		}
	})
}

func TestSearchPagination(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		const n = 23
		for i := range n {
			raw := strings.NewReplacer(
				"Invoice Extractor", fmt.Sprintf("Invoice Agent %02d", (i*7)%n),
				"invoices.example.com", fmt.Sprintf("inv%d.example.com", i)).Replace(v03Card)
			upsert(t, s, fmt.Sprintf("https://inv%d.example.com/.well-known/agent-card.json", i), raw)
		}
		for _, text := range []string{"", "invoice"} {
			seen := map[string]bool{}
			var names []string
			q := catalog.Query{Text: text, Limit: 5, Filters: map[string][]string{"tag": {"finance"}}}
			for pages := 0; ; pages++ {
				if pages > 10 {
					t.Fatal("pagination does not end")
				}
				p, err := s.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != n {
					t.Fatalf("total = %d", p.Total)
				}
				for _, it := range p.Items {
					if seen[it.ID] {
						t.Fatalf("%q: %s listed twice", text, it.Name)
					}
					seen[it.ID] = true
					names = append(names, it.Name)
				}
				if p.NextCursor == "" {
					break
				}
				q.Cursor = p.NextCursor
			}
			if len(seen) != n {
				t.Fatalf("%q: paged through %d of %d agents", text, len(seen), n)
			}
			if text == "" && !slices.IsSorted(names) {
				t.Errorf("browse order is not by name: %v", names)
			}
		}
	})
}

func TestSearchRejectsBadQueries(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		seed(t, s)
		p, err := s.Search(ctx, catalog.Query{Limit: 1})
		if err != nil || p.NextCursor == "" {
			t.Fatalf("first page: %v %q", err, p.NextCursor)
		}
		tests := []struct {
			name string
			q    catalog.Query
			want error
		}{
			{"unknown filter", catalog.Query{Filters: map[string][]string{"colour": {"red"}}}, catalog.ErrInvalidQuery},
			{"negative limit", catalog.Query{Limit: -1}, catalog.ErrInvalidQuery},
			{"long text", catalog.Query{Text: strings.Repeat("a", catalog.MaxQueryTextLen+1)}, catalog.ErrInvalidQuery},
			{"invalid utf-8", catalog.Query{Text: "\xff\xfe"}, catalog.ErrInvalidQuery},
			{"garbage cursor", catalog.Query{Cursor: "!!!"}, catalog.ErrInvalidCursor},
			{"cursor of another query", catalog.Query{Cursor: p.NextCursor, Text: "weather"}, catalog.ErrInvalidCursor},
			{"cursor not json", catalog.Query{Cursor: "bm90IGpzb24"}, catalog.ErrInvalidCursor},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if _, err := s.Search(ctx, tc.q); !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
			})
		}
	})
}

func TestIndexFollowsUpdates(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		const url = "https://invoices.example.com/.well-known/agent-card.json"
		upsert(t, s, url, v03Card)
		if p, _ := s.Search(ctx, catalog.Query{Filters: map[string][]string{"tag": {"ocr"}}}); p.Total != 1 {
			t.Fatalf("before update: total %d", p.Total)
		}
		upsert(t, s, url, strings.ReplaceAll(v03Card, `"ocr"`, `"handwriting"`))
		for field, want := range map[string]int{"ocr": 0, "handwriting": 1} {
			p, err := s.Search(ctx, catalog.Query{Filters: map[string][]string{"tag": {field}}})
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != want {
				t.Errorf("tag %s: total %d, want %d", field, p.Total, want)
			}
		}
		p, err := s.Search(ctx, catalog.Query{Text: "ocr"})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 0 {
			t.Errorf("full-text still finds the old tag")
		}
	})
}

// Two stores on one database stand for two replicas: one sees the other's
// writes after Sync.
func TestSyncAcrossStores(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			a, b := catalogtest.Open(t, d), catalogtest.Open(t, d)
			ctx := context.Background()
			if err := b.WarmIndex(ctx); err != nil {
				t.Fatal(err)
			}
			upsert(t, a, "https://weather.example.com/.well-known/agent.json", v02Card)
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			p, err := b.Search(ctx, catalog.Query{Filters: map[string][]string{"tag": {"weather"}}})
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != 1 {
				t.Fatalf("replica sees %d agents after sync", p.Total)
			}
		})
	}
}

func TestUpsertRejectsIncompleteInput(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		c := mustParse(t, v02Card)
		for name, in := range map[string]catalog.UpsertInput{
			"no url":  {Card: c},
			"no card": {CardURL: "https://x.example/"},
		} {
			if _, err := s.Upsert(ctx, testActor, in); !errors.Is(err, catalog.ErrInvalidQuery) {
				t.Errorf("%s: err = %v", name, err)
			}
		}
		// A batch with one bad entry stores nothing.
		_, err := s.UpsertBatch(ctx, testActor, []catalog.UpsertInput{{CardURL: "https://a.example/", Card: c}, {Card: c}})
		if err == nil {
			t.Fatal("batch with an invalid entry succeeded")
		}
		if n, _ := s.Count(ctx); n != 0 {
			t.Fatalf("%d agents stored from a failed batch", n)
		}
	})
}

// Replicas registering the same new agent at once must end with one agent,
// not a failed request.
func TestConcurrentUpsertSameURL(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			stores := []*catalog.Store{catalogtest.Open(t, d), catalogtest.Open(t, d)}
			ctx := context.Background()
			const url = "https://race.example/.well-known/agent-card.json"
			errs := make(chan error, 8)
			for i := range 8 {
				go func() {
					c := mustParse(t, v03Card)
					_, err := stores[i%2].Upsert(ctx, testActor, catalog.UpsertInput{CardURL: url, Card: c})
					errs <- err
				}()
			}
			for range 8 {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			if n, err := stores[0].Count(ctx); err != nil || n != 1 {
				t.Fatalf("Count = %d, %v", n, err)
			}
			a, err := stores[0].AgentByURL(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			if a.CurrentVersion != 1 {
				t.Fatalf("identical cards made %d versions", a.CurrentVersion)
			}
		})
	}
}

// A batch mixes new, changed and unchanged cards, and may name one card
// URL twice: the result must equal upserting the inputs one by one.
func TestUpsertBatchMixed(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		const (
			inv = "https://invoices.example.com/.well-known/agent-card.json"
			wx  = "https://weather.example.com/.well-known/agent.json"
			tr  = "https://translate.example.org/.well-known/agent-card.json"
		)
		upsert(t, s, inv, v03Card)
		upsert(t, s, wx, v02Card)
		v03b := strings.Replace(v03Card, "2.1.0", "2.1.1", 1)
		res, err := s.UpsertBatch(ctx, testActor, []catalog.UpsertInput{
			{CardURL: inv, Card: mustParse(t, v03b)},    // changed
			{CardURL: wx, Card: mustParse(t, v02Card)},  // unchanged
			{CardURL: tr, Card: mustParse(t, v10Card)},  // new
			{CardURL: inv, Card: mustParse(t, v03Card)}, // changed back, same batch
			{CardURL: tr, Card: mustParse(t, v10Card)},  // repeat, unchanged
		})
		if err != nil {
			t.Fatal(err)
		}
		type outcome struct {
			created, newVersion bool
			version             int
		}
		want := []outcome{{false, true, 2}, {false, false, 1}, {true, true, 1}, {false, true, 3}, {false, false, 1}}
		for i, w := range want {
			got := outcome{res[i].Created, res[i].NewVersion, res[i].Agent.CurrentVersion}
			if got != w {
				t.Errorf("input %d: got %+v, want %+v", i, got, w)
			}
		}
		a, err := s.AgentByURL(ctx, inv)
		if err != nil {
			t.Fatal(err)
		}
		if a.Card.Version != "2.1.0" || a.CurrentVersion != 3 {
			t.Errorf("invoice agent: version %q, current %d", a.Card.Version, a.CurrentVersion)
		}
		p, err := s.Search(ctx, catalog.Query{Filters: map[string][]string{"tag": {"translation"}}})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 1 {
			t.Errorf("translator found %d times", p.Total)
		}
		if n, _ := s.Count(ctx); n != 3 {
			t.Errorf("Count = %d", n)
		}
	})
}

// Searches run while writes update the index; under -race this proves the
// index's locking.
func TestSearchDuringWrites(t *testing.T) {
	s := catalogtest.SQLite(t)
	ctx := context.Background()
	seed(t, s)
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 3 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := s.Search(ctx, catalog.Query{Text: "invoice", Filters: map[string][]string{"tag": {"finance"}}}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 40 {
		raw := strings.Replace(v03Card, "Invoice Extractor", fmt.Sprintf("Invoice Extractor %d", i), 1)
		upsert(t, s, fmt.Sprintf("https://w%d.example/", i%10), raw)
	}
	close(done)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.Search(ctx, catalog.Query{Filters: map[string][]string{"tag": {"finance"}}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 11 {
		t.Fatalf("total = %d, want 11", p.Total)
	}
}

// Writes that commit while the index is being built must not be lost: the
// build may have read the database before they committed.
func TestWritesDuringIndexBuild(t *testing.T) {
	dsn := catalogtest.SQLiteDSN(t)
	loader := catalogtest.Open(t, dsn)
	ctx := context.Background()
	gen := synth.New(3)
	var batch []catalog.UpsertInput
	for i := range 3000 {
		batch = append(batch, catalog.UpsertInput{CardURL: gen.CardURL(i), Card: mustParse(t, string(gen.Card(i)))})
	}
	if _, err := loader.UpsertBatch(ctx, testActor, batch); err != nil {
		t.Fatal(err)
	}
	s := catalogtest.OpenCold(t, dsn)
	built := make(chan error, 1)
	go func() { built <- s.WarmIndex(ctx) }()
	for i := 3000; i < 3100; i++ {
		if _, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: gen.CardURL(i), Card: mustParse(t, string(gen.Card(i)))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	p, err := s.Search(ctx, catalog.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 3100 {
		t.Fatalf("index holds %d of 3100 agents", p.Total)
	}
}

// A search on a store whose index is not built starts the build, and a
// build as short as a small catalog's is waited for rather than refused.
func TestSearchStartsIndexBuild(t *testing.T) {
	dsn := catalogtest.SQLiteDSN(t)
	seed(t, catalogtest.Open(t, dsn))
	s := catalogtest.OpenCold(t, dsn)
	ctx := context.Background()
	if st := s.IndexState(); st.Building || st.Ready {
		t.Fatalf("IndexState before any search = %+v, want neither building nor ready", st)
	}
	p, err := s.Search(ctx, catalog.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 3 {
		t.Fatalf("total = %d, want 3", p.Total)
	}
	if st := s.IndexState(); !st.Ready || st.Building || st.Agents != 3 || st.BuiltAt.IsZero() {
		t.Fatalf("IndexState after the build = %+v", st)
	}
}

// A removed agent leaves every replica's index, and a restored one comes
// back: the writing store's at once, the others' at their next Sync.
func TestRemoveAgentReachesReplicas(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			a, b := catalogtest.Open(t, d), catalogtest.Open(t, d)
			ctx := context.Background()
			weather := upsert(t, a, "https://weather.example.com/.well-known/agent.json", v02Card)
			invoices := upsert(t, a, "https://invoices.example.com/.well-known/agent-card.json", v03Card)
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			total := func(s *catalog.Store) int {
				t.Helper()
				p, err := s.Search(ctx, catalog.Query{})
				if err != nil {
					t.Fatal(err)
				}
				return p.Total
			}
			if got := total(b); got != 2 {
				t.Fatalf("replica sees %d agents before the delete, want 2", got)
			}
			// The agent with the highest pk: SQLite must not hand its pk
			// or seq to the next agent.
			if err := a.RemoveAgent(ctx, catalog.System("test"), invoices.Agent.ID); err != nil {
				t.Fatal(err)
			}
			if err := a.RemoveAgent(ctx, catalog.System("test"), invoices.Agent.ID); !errors.Is(err, catalog.ErrNotFound) {
				t.Fatalf("second delete: err = %v, want ErrNotFound", err)
			}
			if got := total(a); got != 1 {
				t.Fatalf("deleting store sees %d agents, want 1", got)
			}
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if got := total(b); got != 1 {
				t.Fatalf("replica sees %d agents after the delete and a sync, want 1", got)
			}
			upsert(t, a, "https://new.example.com/.well-known/agent-card.json", v03Card)
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			for _, s := range []*catalog.Store{a, b} {
				if got := total(s); got != 2 {
					t.Fatalf("after adding an agent: %d agents, want 2", got)
				}
			}
			if _, err := a.Agent(ctx, catalog.ScopeAll, weather.Agent.ID); err != nil {
				t.Fatalf("the other agent: %v", err)
			}
			// Registering the removed agent's URL again brings it back on
			// every replica, under its id.
			back := upsert(t, a, "https://invoices.example.com/.well-known/agent-card.json", v03Card)
			if back.Agent.ID != invoices.Agent.ID || !back.Restored {
				t.Fatalf("re-registering: id %s restored %v, want %s restored", back.Agent.ID, back.Restored, invoices.Agent.ID)
			}
			if err := b.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			for _, s := range []*catalog.Store{a, b} {
				p, err := s.Search(ctx, catalog.Query{})
				if err != nil {
					t.Fatal(err)
				}
				found := slices.ContainsFunc(p.Items, func(x catalog.Summary) bool { return x.ID == invoices.Agent.ID })
				if p.Total != 3 || !found {
					t.Fatalf("after the restore: search lists %v, want 3 with the restored agent", ids(p))
				}
			}
		})
	}
}

// TestSearchExplain: with Explain, each hit says which word it met and
// where; without, or without text, none does.
func TestSearchExplain(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		seed(t, s)
		p, err := s.Search(ctx, catalog.Query{Text: "translators", Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) == 0 {
			t.Fatal("no hits")
		}
		for _, it := range p.Items {
			e := it.Explanation
			if e == nil || len(e.Words) != 1 {
				t.Fatalf("%s: explanation = %+v", it.Name, e)
			}
			if w := e.Words[0]; w.Word == "" || w.Matched == "" || w.How == "" || len(w.Fields) == 0 {
				t.Errorf("%s: word match = %+v", it.Name, w)
			}
		}
		if w := p.Items[0].Explanation.Words[0]; p.Items[0].Name != "Polyglot Translator" || !slices.Contains(w.Fields, "name") {
			t.Errorf("top hit %s matched %+v, want the name", p.Items[0].Name, w)
		}
		for _, q := range []catalog.Query{{Text: "translators"}, {Explain: true}} {
			p, err := s.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range p.Items {
				if it.Explanation != nil {
					t.Errorf("%+v: %s explained unasked or without text", q, it.Name)
				}
			}
		}
	})
}
