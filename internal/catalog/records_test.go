package catalog

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/synth"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

func parseFile(t *testing.T, path string) *card.Card {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Parse(raw, card.DefaultLimits())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

// TestStoredSummaryGolden pins the agents.summary column: what a store
// writes for the example cards is compared with testdata. The column is a
// storage format that older rows keep; a change here needs a migration,
// never only a rename in the domain or API types.
func TestStoredSummaryGolden(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Config{DSN: "sqlite:" + filepath.Join(t.TempDir(), "golden.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../../examples/cards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example cards: %v", err)
	}
	slices.Sort(files)
	var got strings.Builder
	for _, f := range files {
		res, err := s.Upsert(ctx, System("test"), UpsertInput{CardURL: "https://" + filepath.Base(f) + "/", Card: parseFile(t, f)})
		if err != nil {
			t.Fatal(err)
		}
		var stored string
		if err := s.db.Raw("SELECT summary FROM agents WHERE id = ?", res.Agent.ID).Row().Scan(&stored); err != nil {
			t.Fatal(err)
		}
		got.WriteString(filepath.Base(f) + "\t" + stored + "\n")
	}
	golden := filepath.Join("testdata", "stored_summary.golden")
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestStoredSummaryGolden -update to create it)", err)
	}
	if got.String() != string(want) {
		t.Errorf("stored summaries changed:\n got: %s\nwant: %s", got.String(), want)
	}
}

// TestDecodeLegacySummary reads a summary as the first schema stored it
// (the domain Summary's JSON, with empty id, card_url, signature, health
// and updated_at): the extra keys are ignored and the rest survives.
func TestDecodeLegacySummary(t *testing.T) {
	legacy := `{"id":"","card_url":"","name":"Invoice Extractor","description":"Reads invoices","version":"1.2.0",` +
		`"provider":"Acme","protocol_versions":["0.3"],"bindings":["JSONRPC"],"security_schemes":["http"],` +
		`"input_modes":["application/pdf"],"output_modes":["application/json"],` +
		`"skills":[{"id":"extract","name":"Extract","tags":["invoice","pdf"]},{"id":"x","name":"X"}],` +
		`"signature":"","health":"","updated_at":"0001-01-01T00:00:00Z"}`
	got, err := decodeSummary(legacy)
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{Name: "Invoice Extractor", Description: "Reads invoices", Version: "1.2.0", Provider: "Acme",
		ProtocolVersions: []string{"0.3"}, Bindings: []string{"JSONRPC"}, SecuritySchemes: []string{"http"},
		InputModes: []string{"application/pdf"}, OutputModes: []string{"application/json"},
		Skills: []SkillSummary{{ID: "extract", Name: "Extract", Tags: []string{"invoice", "pdf"}}, {ID: "x", Name: "X"}}}
	gj, _ := json.Marshal(summaryJSONForTest(got))
	wj, _ := json.Marshal(summaryJSONForTest(want))
	if string(gj) != string(wj) {
		t.Errorf("decoded %s, want %s", gj, wj)
	}
	if _, err := decodeSummary(`{"name":`); err == nil {
		t.Error("a truncated summary decoded")
	}
}

// summaryJSONForTest compares Summaries without reflect.DeepEqual's
// nil-versus-empty distinction.
func summaryJSONForTest(s Summary) summaryRecord { return recordOfSummary(s) }

// TestDocFacetsMatchCard holds the facets the index derives from a stored
// summary and the skills (its parts) to those facetsOf derives from the
// card itself, for the example cards and a few hundred synthetic ones.
func TestDocFacetsMatchCard(t *testing.T) {
	var cards []*card.Card
	files, _ := filepath.Glob("../../examples/cards/*.json")
	for _, f := range files {
		cards = append(cards, parseFile(t, f))
	}
	gen := synth.New(7)
	for i := range 300 {
		c, err := card.Parse(gen.Card(i), card.DefaultLimits())
		if err != nil {
			t.Fatalf("synthetic card %d: %v", i, err)
		}
		cards = append(cards, c)
	}
	if len(cards) < 300 {
		t.Fatalf("only %d cards", len(cards))
	}
	keys := func(fs []facetRecord) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = f.Field + "\x00" + strings.ToLower(f.Value)
		}
		slices.Sort(out)
		return out
	}
	for i, c := range cards {
		want := facetsOf(c, SignatureVerified, HealthUp, WorksSome)
		stored, err := encodeSummaryRecord(recordOfSummary(summaryOf(c)))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := decodeSummaryRecord(stored)
		if err != nil {
			t.Fatal(err)
		}
		got := docFacets(sum, SignatureVerified, "", "", HealthUp, WorksSome, []string{"no_tls"}, nil, "", placement{})
		for _, p := range skillParts(skillsOf(c), sum) {
			got = append(got, p...)
		}
		wantKeys := keys(append(want, facetRecord{FieldAudit, "no_tls"}))
		gotKeys := slices.Compact(keys(got))
		if !slices.Equal(gotKeys, wantKeys) {
			t.Fatalf("card %d (%s): facets from the summary\n%q\nfrom the card\n%q", i, c.Name, gotKeys, wantKeys)
		}
	}
}

// The bulk statements of a write are prepared after the first transaction
// that needs them, outside it, and reused by the next ones.
func TestBulkStatementsPreparedOnce(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Config{DSN: "sqlite:" + filepath.Join(t.TempDir(), "stmts.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c := parseFile(t, "../../examples/cards/translator.json")
	key := stmtKey{"i:card_versions", 1}
	for i, want := range []struct{ prepared, wanted bool }{
		{prepared: false, wanted: true}, // the first write runs the SQL as it is
		{prepared: true, wanted: false}, // the next begins by preparing it
		{prepared: true, wanted: false},
	} {
		if _, err := s.Upsert(ctx, System("test"), UpsertInput{CardURL: "https://t.example/" + strconv.Itoa(i), Card: c}); err != nil {
			t.Fatal(err)
		}
		s.stmts.mu.Lock()
		_, prepared := s.stmts.m[key]
		_, wanted := s.stmts.wanted[key]
		s.stmts.mu.Unlock()
		if prepared != want.prepared || wanted != want.wanted {
			t.Errorf("after write %d: prepared %v, wanted %v; want %+v", i+1, prepared, wanted, want)
		}
	}
}
