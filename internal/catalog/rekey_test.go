package catalog_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

// rekeyCard is a small valid card whose name and version tell the copies
// apart.
func rekeyCard(name, version string) string {
	return fmt.Sprintf(`{"name":%q,"description":"d","version":%q,"protocolVersion":"0.3.0",
		"url":"https://a2a.example/rpc","preferredTransport":"JSONRPC","capabilities":{},
		"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
		"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`, name, version)
}

// TestMigrationRekey builds a catalog of the shape before migration 00004,
// keyed by the card URLs older releases wrote, migrates it, and checks that
// each agent is one row under its canonical card URL with every version.
func TestMigrationRekey(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testMigrationRekey(t, catalogtest.SQLiteDSN(t)) })
	t.Run("postgres", func(t *testing.T) { testMigrationRekey(t, catalogtest.PostgresDSN(t)) })
}

func testMigrationRekey(t *testing.T, dsn string) {
	ctx := context.Background()
	s, err := catalog.Open(ctx, catalog.Config{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The old-shape catalog is written with this release's code on the
	// newest schema and then rolled back to schema 3 (each migration's
	// Down keeps the rows), where the agents sit under the card URLs older
	// releases wrote.
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ids, lastSeq := writeOldShapeCatalog(t, s)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrating: %v", err)
	}
	if n, _ := s.Count(ctx); n != 4 {
		t.Errorf("%d agents after migration, want 4", n)
	}

	checkRekeyedAgents(t, s, ids)
	checkRekeyFeed(t, s, ids, lastSeq)
	checkRekeyedCrawlAndSearch(t, s)
}

// writeOldShapeCatalog writes the agents of several spellings of a few
// card URLs, a check and a trusted key, and rolls the schema back to 3.
// It returns the agents' ids by "url version" and the last seq of the
// change feed.
func writeOldShapeCatalog(t *testing.T, s *catalog.Store) (map[string]string, int64) {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	type step struct {
		url, name, version string
		received           time.Time
		source             string
	}
	steps := []step{
		// One bookshop agent: imported with a Unicode host, registered
		// percent-encoded (twice: two versions), and once more with a
		// trailing dot. The newest card is the registered 3.
		{"https://bücher.example/.well-known/agent-card.json", "Books", "1", at(1), catalog.SourceImport},
		{"https://b%C3%BCcher.example/.well-known/agent-card.json", "Books", "2", at(2), catalog.SourceURL},
		{"https://b%C3%BCcher.example/.well-known/agent-card.json", "Books", "3", at(5), catalog.SourceURL},
		{"https://bücher.example./.well-known/agent-card.json", "Books", "2b", at(3), catalog.SourceURL},
		// Hub agent a under several spellings; the later registration
		// holds the older card, so the first row's card stays current.
		{"https://hub.example/agents/a/card.json", "Hub A", "2", at(4), catalog.SourceURL},
		{"https://HUB.example:443/agents/x/../a//card.json?", "Hub A", "1", at(1), catalog.SourceURL},
		// Hub agent b: alone, only rekeyed. Another path, another agent.
		{"https://hub.example/agents/b/%63ard.json", "Hub B", "1", at(1), catalog.SourceURL},
		// Named by content hash: left alone.
		{"urn:a2a-registry:import:00ff", "Offline", "1", at(1), catalog.SourceImport},
	}
	ids := map[string]string{}
	for _, st := range steps {
		res, err := s.Upsert(ctx, testActor, catalog.UpsertInput{CardURL: st.url, Card: mustParse(t, rekeyCard(st.name, st.version)),
			Source: st.source, ReceivedAt: st.received, Paused: st.source == catalog.SourceImport})
		if err != nil {
			t.Fatalf("upsert %s: %v", st.url, err)
		}
		ids[st.url+" "+st.version] = res.Agent.ID
	}
	if n, _ := s.Count(ctx); n != 7 {
		t.Fatalf("old-shape catalog has %d agents, want 7", n)
	}
	// A check of a row that will be merged away, and a key pinned for the
	// bookshop's origin spelled in Unicode.
	checked := time.Now().Add(-time.Hour)
	if _, err := s.RecordFetches(ctx, testActor, []catalog.FetchOutcome{{AgentID: ids["https://HUB.example:443/agents/x/../a//card.json? 1"],
		At: checked, Status: 304, NotModified: true, Health: catalog.HealthUp, NextCheckAt: checked.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddTrustedKey(ctx, testActor, catalog.TrustedKey{KID: "k1", JWK: []byte(`{"kty":"OKP"}`), Thumbprint: "tp1",
		Origins: []string{"https://Bücher.example:443", "https://xn--bcher-kva.example"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.MigrateDownTo(ctx, 3); err != nil {
		t.Fatalf("rolling back to schema 3: %v", err)
	}
	// Hub B as an older parser indexed it: a guessed protocol version, its
	// skill dropped.
	if err := s.ExecForTest(ctx, `UPDATE agents SET summary = REPLACE(summary, '"0.3"', '"0.2"'),
		protocol_versions = '0.2' WHERE name = 'Hub B'`); err != nil {
		t.Fatal(err)
	}
	if err := s.ExecForTest(ctx, "DELETE FROM skills WHERE agent_pk = (SELECT pk FROM agents WHERE name = 'Hub B')"); err != nil {
		t.Fatal(err)
	}
	// Read raw: Changes reads columns of later schemas (agents.provenance).
	last, err := s.RawStrings(ctx, "SELECT CAST(MAX(seq) AS TEXT) FROM changes")
	if err != nil || len(last) != 1 {
		t.Fatal(last, err)
	}
	lastSeq, err := strconv.ParseInt(last[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}

	return ids, lastSeq
}

// checkRekeyedAgents: each agent is one row under its canonical card URL
// with every version, and keeps its check history and trusted key.
func checkRekeyedAgents(t *testing.T, s *catalog.Store, ids map[string]string) {
	t.Helper()
	ctx := context.Background()
	tests := []struct {
		cardURL     string
		survivor    string // steps key of the row that survives
		versions    []string
		wantCurrent string
	}{
		{"https://xn--bcher-kva.example/.well-known/agent-card.json",
			"https://b%C3%BCcher.example/.well-known/agent-card.json 2", []string{"1", "2", "2b", "3"}, "3"},
		{"https://hub.example/agents/a/card.json", "https://hub.example/agents/a/card.json 2", []string{"1", "2"}, "2"},
		{"https://hub.example/agents/b/card.json", "https://hub.example/agents/b/%63ard.json 1", []string{"1"}, "1"},
		{"urn:a2a-registry:import:00ff", "urn:a2a-registry:import:00ff 1", []string{"1"}, "1"},
	}
	for _, tt := range tests {
		a, err := s.AgentByURL(ctx, tt.cardURL)
		if err != nil {
			t.Errorf("AgentByURL(%s): %v", tt.cardURL, err)
			continue
		}
		if a.ID != ids[tt.survivor] {
			t.Errorf("%s: survivor %s, want the row of %s (%s)", tt.cardURL, a.ID, tt.survivor, ids[tt.survivor])
		}
		if a.Card == nil || a.Card.Version != tt.wantCurrent || a.CurrentVersion != len(tt.versions) {
			t.Errorf("%s: current card %+v (number %d), want version %s as number %d", tt.cardURL, a.Card, a.CurrentVersion, tt.wantCurrent, len(tt.versions))
		}
		vs, err := s.Versions(ctx, catalog.ScopeAll, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for n := 1; n <= len(vs); n++ {
			v, err := s.Version(ctx, catalog.ScopeAll, a.ID, n)
			if err != nil {
				t.Fatalf("%s version %d: %v", tt.cardURL, n, err)
			}
			c := mustParse(t, string(v.Raw))
			got = append(got, c.Version)
		}
		if !slices.Equal(got, tt.versions) {
			t.Errorf("%s: versions %q, want %q (every one kept, oldest first)", tt.cardURL, got, tt.versions)
		}
	}

	hub, err := s.AgentByURL(ctx, "https://hub.example/agents/a/card.json")
	if err != nil {
		t.Fatal(err)
	}
	if h, err := s.AgentHealth(ctx, hub.ID, time.Now()); err != nil || h.Uptime24h == nil {
		t.Errorf("hub a health %+v, %v: the merged row's check history is lost", h, err)
	}
	keys, err := s.TrustedKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !slices.Equal(keys[0].Origins, []string{"https://xn--bcher-kva.example"}) {
		t.Errorf("trusted key origins %+v, want the one canonical origin", keys)
	}
}

// checkRekeyFeed: the feed says which ids are gone and which agent took
// their versions.
func checkRekeyFeed(t *testing.T, s *catalog.Store, ids map[string]string, lastSeq int64) {
	t.Helper()
	ctx := context.Background()
	feed, err := s.Changes(ctx, catalog.ScopeAll, lastSeq, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var removed, updated []string
	for _, c := range feed {
		switch c.Kind {
		case catalog.ChangeRemoved:
			removed = append(removed, c.AgentID)
		case catalog.ChangeUpdated:
			updated = append(updated, c.CardURL)
		}
	}
	slices.Sort(removed)
	wantRemoved := []string{
		ids["https://bücher.example/.well-known/agent-card.json 1"],
		ids["https://bücher.example./.well-known/agent-card.json 2b"],
		ids["https://HUB.example:443/agents/x/../a//card.json? 1"],
	}
	slices.Sort(wantRemoved)
	if !slices.Equal(removed, wantRemoved) {
		t.Errorf("removed ids %q, want %q", removed, wantRemoved)
	}
	if len(updated) != 2 {
		t.Errorf("updated entries for %q, want the two survivors", updated)
	}
}

// checkRekeyedCrawlAndSearch: merged agents are crawled unless only
// imported, and searched once each under the view this release derives.
func checkRekeyedCrawlAndSearch(t *testing.T, s *catalog.Store) {
	t.Helper()
	ctx := context.Background()
	// A merged agent someone registered by URL is crawled.
	due, err := s.ClaimDue(ctx, time.Now().Add(48*time.Hour), 100, "test", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var dueURLs []string
	for _, d := range due {
		dueURLs = append(dueURLs, d.CardURL)
	}
	slices.Sort(dueURLs)
	wantDue := []string{"https://hub.example/agents/a/card.json", "https://hub.example/agents/b/card.json",
		"https://xn--bcher-kva.example/.well-known/agent-card.json"}
	if !slices.Equal(dueURLs, wantDue) {
		t.Errorf("crawled agents %q, want %q (the import-only one stays paused)", dueURLs, wantDue)
	}
	// The indexed view is re-derived with this release's parser.
	for _, q := range []struct {
		filters map[string][]string
		text    string
		want    bool
	}{
		{map[string][]string{"protocol_version": {"0.3"}}, "Hub B", true},
		{map[string][]string{"protocol_version": {"0.2"}}, "", false},
		{nil, "S", true},
	} {
		page, err := s.Search(ctx, catalog.Query{Text: q.text, Filters: q.filters, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		got := slices.ContainsFunc(page.Items, func(it catalog.Summary) bool { return it.Name == "Hub B" })
		if got != q.want {
			t.Errorf("search %q %v finds Hub B: %v, want %v", q.text, q.filters, got, q.want)
		}
	}
	// Search finds each agent once.
	for _, name := range []string{"Books", "Hub A"} {
		page, err := s.Search(ctx, catalog.Query{Text: name})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, h := range page.Items {
			if h.Name == name {
				n++
			}
		}
		if n != 1 {
			t.Errorf("search %q: %d hits named so, want 1", name, n)
		}
	}
}
