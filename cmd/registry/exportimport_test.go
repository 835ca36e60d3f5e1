package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2aregistry/registry/examples"
	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/importer"
	"github.com/a2aregistry/registry/internal/synth"
	"github.com/a2aregistry/registry/internal/verify"
)

// pinnedKey is a fresh Ed25519 public key as an admin pins it.
func pinnedKey(t *testing.T, kid string, origins ...string) catalog.TrustedKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwk, err := json.Marshal(jose.JSONWebKey{Key: pub, KeyID: kid, Algorithm: string(jose.EdDSA), Use: "sig"})
	if err != nil {
		t.Fatal(err)
	}
	k, err := verify.NewTrustedKey(jwk, kid, origins, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestExportImport moves a catalog from SQLite to PostgreSQL (and back
// into SQLite) through `registry export` and `registry import
// --from-export`: every raw version comes back byte for byte, searches
// answer the same (for every kind of caller), crawl state, listing states,
// collections and trusted keys survive, and exporting the copy gives the
// same file.
func TestExportImport(t *testing.T) {
	ctx := context.Background()
	src := catalogtest.SQLite(t)
	cfg := config.Default()
	lim := cardLimits(cfg)

	// The shipped examples, synthetic agents with several versions, one of
	// them checked and down, and trusted keys (one revoked).
	im := &importer.Importer{Store: src, Limits: lim}
	if _, err := im.FS(ctx, examples.Cards, "cards/*.json"); err != nil {
		t.Fatal(err)
	}
	gen := synth.New(5)
	var ids []string
	for i := range 12 {
		url := fmt.Sprintf("https://agents%d.example.com/.well-known/agent-card.json", i)
		for v := range 1 + i%3 {
			raw := gen.Card(i)
			if v > 0 {
				raw = []byte(strings.Replace(string(raw), `"name":"`, fmt.Sprintf(`"name":"v%d `, v), 1))
			}
			c, err := card.Parse(raw, lim)
			if err != nil {
				t.Fatal(err)
			}
			res, err := src.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: url, Card: c, Source: catalog.SourceURL})
			if err != nil {
				t.Fatal(err)
			}
			if v == 0 {
				ids = append(ids, res.Agent.ID)
			}
		}
	}
	now := time.Now().UTC()
	if _, err := src.RecordFetches(ctx, catalog.System("test"), []catalog.FetchOutcome{
		{AgentID: ids[0], At: now, Status: 503, Class: "http_5xx", Message: "HTTP 503 from agents0.example.com",
			Health: catalog.HealthDown, ConsecutiveFailures: 3, NextCheckAt: now.Add(time.Hour)},
		{AgentID: ids[1], At: now, Status: 304, NotModified: true, ETag: `"abc"`, Health: catalog.HealthUp, NextCheckAt: now.Add(2 * time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	// An agent an admin removed: it travels removed, and stays restorable.
	if err := src.RemoveAgent(ctx, catalog.User("sub-root").For(catalog.Request{DisplayName: "Root"}), ids[2]); err != nil {
		t.Fatal(err)
	}
	key, err := src.AddTrustedKey(ctx, catalog.System("test"), pinnedKey(t, "k1", "https://agents1.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.RevokeTrustedKey(ctx, catalog.System("test"), key.ID, now); err != nil {
		t.Fatal(err)
	}
	if _, err := src.AddTrustedKey(ctx, catalog.System("test"), pinnedKey(t, "k2", "*")); err != nil {
		t.Fatal(err)
	}

	// Annotations on two agents, one of them with a newer card version.
	annotated := map[string]catalog.Annotations{}
	for i, a := range []catalog.Annotations{
		{OwnerTeam: "Payments", Contact: "pay@example.com", Classification: "confidential",
			Labels: map[string]string{"env": "prod", "tier": "1"}, Notes: "Internal: call Ed."},
		{Labels: map[string]string{"env": "dev"}},
	} {
		got, err := src.SetAnnotations(ctx, catalog.System("test"), catalog.ScopeAll, ids[i+1], a)
		if err != nil {
			t.Fatal(err)
		}
		annotated[ids[i+1]] = got
	}
	// And an agent removed after it was annotated: its annotations wait
	// for its card URL to be registered again.
	goneURL := "https://gone.example.com/.well-known/agent-card.json"
	goneCard, err := card.Parse(gen.Card(40), lim)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := src.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: goneURL, Card: goneCard})
	if err != nil {
		t.Fatal(err)
	}
	goneAnn, err := src.SetAnnotations(ctx, catalog.System("test"), catalog.ScopeAll, gone.Agent.ID, catalog.Annotations{OwnerTeam: "Legacy",
		Labels: map[string]string{"retired": "yes"}, Notes: "Removed in the 2026 clean-up."})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.RemoveAgent(ctx, catalog.System("test"), gone.Agent.ID); err != nil {
		t.Fatal(err)
	}

	// Listing states: pending, rejected, deprecated with a replacement,
	// and one sent back to review by a card change (approved version 3 of
	// 4); collections, one restricted, with a pending and a removed member.
	editor := catalog.User("sub-ed").For(catalog.Request{DisplayName: "Ed", Role: "editor"})
	for i, ch := range map[int]catalog.ListingChange{
		4: {State: catalog.ListingPending, Reason: "waiting for the owner"},
		5: {State: catalog.ListingRejected, Reason: "spam"},
		6: {State: catalog.ListingDeprecated, Reason: "superseded", Replacement: ids[7]},
	} {
		if _, err := src.SetListing(ctx, editor, catalog.ScopeAll, ids[i], ch); err != nil {
			t.Fatal(err)
		}
	}
	src.SetListingPolicy(catalog.ListingPolicy{ReapproveOnChange: true})
	changed, err := card.Parse([]byte(strings.Replace(string(gen.Card(8)), `"name":"`, `"name":"v3 `, 1)), lim)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := src.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: "https://agents8.example.com/.well-known/agent-card.json",
		Card: changed, Source: catalog.SourceCrawl}); err != nil || res.Agent.Listing.State != catalog.ListingPending || res.Agent.Listing.ApprovedVersion != 3 {
		t.Fatalf("card change under --reapprove-on-change: %+v, %v", res.Agent.Listing, err)
	}
	src.SetListingPolicy(catalog.ListingPolicy{})
	for _, c := range []struct {
		col     catalog.Collection
		members []string
	}{
		{catalog.Collection{Name: "Finance", Description: "Money matters.", Groups: []string{"finance", "Audit"}}, []string{ids[9], ids[4]}},
		{catalog.Collection{Name: "Partner-facing"}, []string{ids[9], ids[2], ids[10]}},
		{catalog.Collection{Name: "Empty", Groups: []string{"nobody"}}, nil},
	} {
		if _, _, err := src.SaveCollection(ctx, catalog.System("test"), c.col); err != nil {
			t.Fatal(err)
		}
		if err := src.AddToCollection(ctx, catalog.System("test"), c.col.Name, c.members...); err != nil {
			t.Fatal(err)
		}
	}

	var exported bytes.Buffer
	agents, keys, err := exportCatalog(ctx, src, &exported)
	if err != nil {
		t.Fatal(err)
	}
	if total, _ := src.Count(ctx); agents != total || keys != 2 {
		t.Fatalf("exported %d agents (catalog has %d) and %d keys", agents, total, keys)
	}

	for _, dst := range []struct {
		name  string
		store func(testing.TB) *catalog.Store
	}{
		{"postgres", catalogtest.Postgres},
		{"sqlite", catalogtest.SQLite},
	} {
		t.Run(dst.name, func(t *testing.T) {
			to := dst.store(t)
			gotAgents, gotKeys, err := importCatalog(ctx, to, bytes.NewReader(exported.Bytes()), cfg)
			if err != nil || gotAgents != agents || gotKeys != keys {
				t.Fatalf("import = %d agents, %d keys, %v; want %d, %d", gotAgents, gotKeys, err, agents, keys)
			}
			sameRawVersions(t, src, to)
			sameSearches(t, src, to)
			for id, want := range annotated {
				v, err := to.AgentView(ctx, catalog.ScopeAll, id, now)
				if err != nil {
					t.Fatal(err)
				}
				want.ChangedAt = want.ChangedAt.Truncate(time.Microsecond)
				if got := v.Annotations; !reflect.DeepEqual(got, want) {
					t.Errorf("annotations of %s after import: %+v, want %+v", id, got, want)
				}
			}
			sameCuration(t, src, to, ids)
			if r, err := to.AgentRemoval(ctx, ids[2]); err != nil || r == nil || r.By != "Root" {
				t.Errorf("removed agent after import: %+v (%v), want removed by Root", r, err)
			}
			if r, err := to.AgentRemoval(ctx, ids[3]); err != nil || r != nil {
				t.Errorf("listed agent after import: removal %+v (%v)", r, err)
			}
			srcKeys, _ := src.TrustedKeys(ctx)
			toKeys, _ := to.TrustedKeys(ctx)
			if !slices.EqualFunc(srcKeys, toKeys, sameKey) {
				t.Errorf("trusted keys differ:\n%+v\n%+v", srcKeys, toKeys)
			}
			// The copy exports as the original did, header aside.
			var again bytes.Buffer
			if _, _, err := exportCatalog(ctx, to, &again); err != nil {
				t.Fatal(err)
			}
			if a, b := withoutHeader(exported.String()), withoutHeader(again.String()); a != b {
				t.Errorf("export of the copy differs from the original export")
			}
			// A second import is refused: an export restores, it never merges.
			if _, _, err := importCatalog(ctx, to, bytes.NewReader(exported.Bytes()), cfg); !errors.Is(err, catalog.ErrNotEmpty) {
				t.Errorf("import into a full catalog: %v; want ErrNotEmpty", err)
			}
			// The removed agent, registered again in the copy, keeps its
			// annotations there.
			back, err := to.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: goneURL, Card: goneCard})
			if err != nil {
				t.Fatal(err)
			}
			v, err := to.AgentView(ctx, catalog.ScopeAll, back.Agent.ID, now)
			if err != nil {
				t.Fatal(err)
			}
			goneAnn.ChangedAt = goneAnn.ChangedAt.Truncate(time.Microsecond)
			if !reflect.DeepEqual(v.Annotations, goneAnn) {
				t.Errorf("annotations of the removed agent after import and registering again: %+v, want %+v", v.Annotations, goneAnn)
			}
		})
	}
}

// sameCuration compares the listing state and collections of every agent,
// and the collections as every kind of caller lists them.
func sameCuration(t *testing.T, a, b *catalog.Store, ids []string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids {
		x, err := a.Agent(ctx, catalog.ScopeAll, id)
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.Agent(ctx, catalog.ScopeAll, id)
		if err != nil {
			t.Fatal(err)
		}
		x.Listing.At, y.Listing.At = catalog.ExportTimePtr(x.Listing.At), catalog.ExportTimePtr(y.Listing.At)
		if !reflect.DeepEqual(x.Listing, y.Listing) || !slices.Equal(x.Collections, y.Collections) {
			t.Errorf("agent %s: listing %+v in %v, copy has %+v in %v", id, x.Listing, x.Collections, y.Listing, y.Collections)
		}
	}
	for _, sc := range []catalog.Scope{catalog.ScopeAll, {}, {Groups: []string{"audit"}}, {Review: true, Groups: []string{"finance"}}} {
		x, err := a.Collections(ctx, sc)
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.Collections(ctx, sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, cs := range [][]catalog.Collection{x, y} {
			for i := range cs {
				cs[i].CreatedAt = cs[i].CreatedAt.Truncate(time.Microsecond)
			}
		}
		if !reflect.DeepEqual(x, y) {
			t.Errorf("collections as %+v:\n%+v\ncopy:\n%+v", sc, x, y)
		}
	}
}

func withoutHeader(s string) string {
	_, rest, _ := strings.Cut(s, "\n")
	return rest
}

func sameKey(a, b catalog.TrustedKey) bool {
	// PostgreSQL keeps microseconds.
	us := func(x *time.Time) *time.Time { return catalog.ExportTimePtr(x) }
	eq := func(x, y *time.Time) bool {
		x, y = us(x), us(y)
		return x == nil && y == nil || x != nil && y != nil && x.Equal(*y)
	}
	return a.ID == b.ID && a.KID == b.KID && bytes.Equal(a.JWK, b.JWK) && a.Thumbprint == b.Thumbprint &&
		slices.Equal(a.Origins, b.Origins) && eq(a.NotAfter, b.NotAfter) && eq(a.RevokedAt, b.RevokedAt) && eq(&a.CreatedAt, &b.CreatedAt)
}

// sameRawVersions checks every version of every agent of a is in b under
// the same id, byte for byte.
func sameRawVersions(t *testing.T, a, b *catalog.Store) {
	t.Helper()
	ctx := context.Background()
	page, err := a.Search(ctx, catalog.Query{Limit: catalog.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range page.Items {
		va, err := a.Versions(ctx, catalog.ScopeAll, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		vb, err := b.Versions(ctx, catalog.ScopeAll, s.ID)
		if err != nil {
			t.Fatalf("agent %s missing from the copy: %v", s.ID, err)
		}
		if len(va) != len(vb) {
			t.Fatalf("agent %s: %d versions, copy has %d", s.ID, len(va), len(vb))
		}
		for _, v := range va {
			x, err := a.Version(ctx, catalog.ScopeAll, s.ID, v.Number)
			if err != nil {
				t.Fatal(err)
			}
			y, err := b.Version(ctx, catalog.ScopeAll, s.ID, v.Number)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(x.Raw, y.Raw) {
				t.Errorf("agent %s version %d: raw bytes differ", s.ID, v.Number)
			}
		}
	}
}

// sameSearches runs the same queries on both catalogs and compares the
// answers in full: items (ids, health, scores, timestamps), totals, facets.
func sameSearches(t *testing.T, a, b *catalog.Store) {
	t.Helper()
	ctx := context.Background()
	queries := []catalog.Query{
		{Limit: catalog.MaxLimit},
		{Text: "invoice"},
		{Text: "translate documents"},
		{Filters: map[string][]string{catalog.FieldHealth: {catalog.HealthDown}}},
		{Filters: map[string][]string{catalog.FieldInputMode: {"application/*"}}, Limit: 5},
		{Filters: map[string][]string{catalog.FieldLabel: {"env:prod"}}},
		{Filters: map[string][]string{catalog.FieldOwnerTeam: {"Payments"}, catalog.FieldLabel: {"tier"}}},
		{Limit: catalog.MaxLimit, Scope: catalog.ScopeAll},
		{Limit: catalog.MaxLimit, Scope: catalog.Scope{Review: true}},
		{Filters: map[string][]string{catalog.FieldListing: {catalog.ListingPending}}, Scope: catalog.Scope{Review: true, Groups: []string{"finance"}}},
		{Filters: map[string][]string{catalog.FieldListing: {catalog.ListingDeprecated}}},
		{Filters: map[string][]string{catalog.FieldCollection: {"finance"}}, Scope: catalog.Scope{Groups: []string{"Finance"}}},
		{Filters: map[string][]string{catalog.FieldCollection: {"partner-facing"}}},
	}
	for _, q := range queries {
		pa, err := a.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := b.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		// PostgreSQL keeps microseconds.
		for _, p := range []*catalog.Page{&pa, &pb} {
			p.Timing = catalog.SearchTiming{} // how long each took
			for i := range p.Items {
				p.Items[i].UpdatedAt = p.Items[i].UpdatedAt.Truncate(time.Microsecond).UTC()
			}
		}
		ja, _ := json.Marshal(pa)
		jb, _ := json.Marshal(pb)
		if !bytes.Equal(ja, jb) {
			t.Errorf("query %+v answers differently:\n%s\n%s", q, ja, jb)
		}
		if pa.Total == 0 {
			t.Errorf("query %+v finds nothing: a weak comparison", q)
		}
	}
}

func TestImportRefusesWhatIsNoExport(t *testing.T) {
	header := `{"type":"header","header":{"format":"a2a-registry-export","version":1}}` + "\n"
	tests := []struct{ name, file string }{
		{"empty", ""},
		{"no header", `{"type":"agent","agent":{"id":"x"}}` + "\n"},
		{"another format", `{"type":"header","header":{"format":"other","version":1}}` + "\n"},
		{"a later version", `{"type":"header","header":{"format":"a2a-registry-export","version":2}}` + "\n"},
		{"not JSON", header + "card.json\n"},
		{"unknown entry", header + `{"type":"session","session":{}}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := catalogtest.SQLite(t)
			if _, _, err := importCatalog(context.Background(), s, strings.NewReader(tt.file), config.Default()); !errors.Is(err, errBadExport) {
				t.Fatalf("import: %v; want errBadExport", err)
			}
		})
	}
}

// TestExportImportCommands runs the two commands as an operator would.
func TestExportImportCommands(t *testing.T) {
	dir := t.TempDir()
	from, to, file := "sqlite:"+dir+"/from.db", "sqlite:"+dir+"/to.db", dir+"/catalog.jsonl"
	ctx := context.Background()
	var out, errOut bytes.Buffer
	s := catalogtest.Open(t, from)
	im := &importer.Importer{Store: s, Limits: cardLimits(config.Default())}
	if _, err := im.FS(ctx, examples.Cards, "cards/*.json"); err != nil {
		t.Fatal(err)
	}
	want, _ := s.Count(ctx)
	if code := run(ctx, []string{"export", "--db", from, "--out", file}, &out, &errOut, func(string) string { return "" }); code != exitOK {
		t.Fatalf("export: exit %d: %s", code, errOut.String())
	}
	if code := run(ctx, []string{"import", "--db", to, "--from-export", file}, &out, &errOut, func(string) string { return "" }); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, errOut.String())
	}
	if got, _ := catalogtest.Open(t, to).Count(ctx); got != want || want == 0 {
		t.Fatalf("%d agents after import, want %d", got, want)
	}
	// --from-export restores a whole catalog: no card files beside it.
	if code := run(ctx, []string{"import", "--db", to, "--from-export", file, "card.json"}, &out, &errOut, func(string) string { return "" }); code != exitUsage {
		t.Fatalf("import --from-export with a card file: exit %d, want %d", code, exitUsage)
	}
}

// TestImportCurationEdges: an agent from an export made before the listing
// lifecycle imports approved at its last version, whatever the listing
// policy of the target (and its versions are not sent back to review); a collection naming an agent the export does not
// hold is refused; a listing state the release does not know is refused.
func TestImportCurationEdges(t *testing.T) {
	ctx := context.Background()
	cfg := config.Default()
	src := catalogtest.SQLite(t)
	url := "https://old.example.com/.well-known/agent-card.json"
	for v := range 2 {
		raw := strings.Replace(string(synth.New(1).Card(0)), `"name":"`, fmt.Sprintf(`"name":"v%d `, v), 1)
		c, err := card.Parse([]byte(raw), cardLimits(cfg))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: url, Card: c, Source: catalog.SourceURL}); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, _, err := exportCatalog(ctx, src, &buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var agent exportLine
	if err := json.Unmarshal([]byte(lines[1]), &agent); err != nil || agent.Agent == nil || agent.Agent.Listing == nil {
		t.Fatalf("agent line %s: %v", lines[1], err)
	}
	edit := func(f func(*exportLine)) string {
		l := agent
		a := *agent.Agent
		l.Agent = &a
		f(&l)
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	older := edit(func(l *exportLine) { l.Agent.Listing = nil })
	for _, policy := range []catalog.ListingPolicy{{RequireApproval: true}, {ReapproveOnChange: true}} {
		to := catalogtest.SQLite(t)
		to.SetListingPolicy(policy)
		if _, _, err := importCatalog(ctx, to, strings.NewReader(lines[0]+"\n"+older+"\n"), cfg); err != nil {
			t.Fatal(err)
		}
		a, err := to.Agent(ctx, catalog.ScopeAll, agent.Agent.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Listing.State != catalog.ListingApproved || a.Listing.ApprovedVersion != 2 {
			t.Errorf("%+v: agent of an older export: listing %+v, want approved at version 2", policy, a.Listing)
		}
		// Restoring the second version is no card change to review.
		if page, err := to.AuditLog(ctx, "", 10); err != nil || len(page.Entries) != 0 {
			t.Errorf("%+v: the import left audit rows: %+v, %v", policy, page.Entries, err)
		}
	}

	bad := map[string]string{
		"unknown listing state": edit(func(l *exportLine) { l.Agent.Listing = &exportListing{State: "archived"} }),
		"approved version beyond the last": edit(func(l *exportLine) {
			l.Agent.Listing = &exportListing{State: catalog.ListingApproved, ApprovedVersion: 3}
		}),
		"collection of an agent not exported": lines[1] + "\n" + `{"type":"collection","collection":{"name":"X","groups":[],` +
			`"created_at":"2026-01-01T00:00:00Z","members":[{"agent_id":"nobody","added_at":"2026-01-01T00:00:00Z"}]}}`,
	}
	for name, body := range bad {
		t.Run(name, func(t *testing.T) {
			if _, _, err := importCatalog(ctx, catalogtest.SQLite(t), strings.NewReader(lines[0]+"\n"+body+"\n"), cfg); err == nil {
				t.Error("import succeeded")
			}
		})
	}
}

// TestImportRefusesAlteredExport: an import checks every line as a live
// write would before it writes anything, so an export altered by hand (a
// non-UUID id, a card URL not in canonical form, an unknown health or
// source, a trusted key with private parameters, a wrong thumbprint or an
// origin that is no origin) is refused with the bad line named, and the
// catalog stays empty even when the bad line comes after good ones.
func TestImportRefusesAlteredExport(t *testing.T) {
	ctx := context.Background()
	cfg := config.Default()
	src := catalogtest.SQLite(t)
	c, err := card.Parse(synth.New(3).Card(0), cardLimits(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Upsert(ctx, catalog.System("test"), catalog.UpsertInput{CardURL: "https://a.example.com/.well-known/agent-card.json",
		Card: c, Source: catalog.SourceURL}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.AddTrustedKey(ctx, catalog.System("test"), pinnedKey(t, "k1", "https://a.example.com")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, _, err := exportCatalog(ctx, src, &buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("export has %d lines, want header, agent, key:\n%s", len(lines), buf.String())
	}
	var agentLine, keyLine exportLine
	if err := json.Unmarshal([]byte(lines[1]), &agentLine); err != nil || agentLine.Agent == nil {
		t.Fatalf("agent line %s: %v", lines[1], err)
	}
	if err := json.Unmarshal([]byte(lines[2]), &keyLine); err != nil || keyLine.TrustedKey == nil {
		t.Fatalf("key line %s: %v", lines[2], err)
	}
	agent := func(f func(*exportAgent)) string {
		a := *agentLine.Agent
		f(&a)
		return marshalLine(t, exportLine{Type: "agent", Agent: &a})
	}
	key := func(f func(*exportTrustKey)) string {
		k := *keyLine.TrustedKey
		f(&k)
		return marshalLine(t, exportLine{Type: "trusted_key", TrustedKey: &k})
	}
	var private map[string]any
	if err := json.Unmarshal(keyLine.TrustedKey.JWK, &private); err != nil {
		t.Fatal(err)
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	private["d"] = base64URL(priv.Seed())
	privateJWK, _ := json.Marshal(private)

	for _, tt := range []struct {
		name string
		body []string // the lines after the header
		want string   // in the error, with the line number
	}{
		{"agent id not a UUID", []string{agent(func(a *exportAgent) { a.ID = "agent-1" }), lines[2]}, "line 2"},
		{"agent id in upper case", []string{agent(func(a *exportAgent) { a.ID = strings.ToUpper(a.ID) }), lines[2]}, "line 2"},
		{"card URL not canonical", []string{agent(func(a *exportAgent) { a.CardURL = "https://A.EXAMPLE.COM:443/.well-known/agent-card.json" }), lines[2]}, "line 2"},
		{"unknown health", []string{agent(func(a *exportAgent) { a.Health = "sideways" }), lines[2]}, "line 2"},
		{"unknown version source", []string{agent(func(a *exportAgent) {
			a.Versions = slices.Clone(a.Versions)
			a.Versions[0].Source = "ftp"
		}), lines[2]}, "line 2"},
		{"key with private parameters", []string{lines[1], key(func(k *exportTrustKey) { k.JWK = privateJWK })}, "line 3"},
		{"wrong thumbprint", []string{lines[1], key(func(k *exportTrustKey) { k.Thumbprint = "AAAA" })}, "line 3"},
		{"origin with a path", []string{lines[1], key(func(k *exportTrustKey) { k.Origins = []string{"https://a.example.com/x"} })}, "line 3"},
		{"key id not a UUID", []string{lines[1], key(func(k *exportTrustKey) { k.ID = "k" })}, "line 3"},
		{"the same agent twice", []string{lines[1], lines[1]}, "line 3"},
		{"collection member not a UUID", []string{lines[1], `{"type":"collection","collection":{"name":"X","groups":[],` +
			`"created_at":"2026-01-01T00:00:00Z","members":[{"agent_id":"nobody","added_at":"2026-01-01T00:00:00Z"}]}}`}, "line 3"},
		{"unknown provenance kind", []string{agent(func(a *exportAgent) {
			a.Provenance = []exportProvenance{{Kind: "stolen", FirstAt: time.Now(), LastAt: time.Now()}}
		}), lines[2]}, "line 2"},
		{"provenance of a source that is no id", []string{agent(func(a *exportAgent) {
			a.Provenance = []exportProvenance{{Kind: "source", SourceID: "x", Relation: "publishedFrom", FirstAt: time.Now(), LastAt: time.Now()}}
		}), lines[2]}, "line 2"},
		{"source with an unknown status", []string{`{"type":"source","source":{"id":"01a21bd8-2b71-7536-8d6f-bb2a148ffbc8",` +
			`"url":"https://pub.example/ard.json","created_at":"2026-01-01T00:00:00Z","status":"sideways","next_check_at":"2026-01-01T00:00:00Z",` +
			`"entry_count":0,"entries":[]}}`, lines[1], lines[2]}, "line 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			to := catalogtest.SQLite(t)
			file := lines[0] + "\n" + strings.Join(tt.body, "\n") + "\n"
			_, _, err := importCatalog(ctx, to, strings.NewReader(file), cfg)
			if !errors.Is(err, errBadExport) || !strings.Contains(err.Error(), tt.want+":") {
				t.Fatalf("import = %v, want %v naming %s", err, errBadExport, tt.want)
			}
			if err := to.CheckEmpty(ctx); err != nil {
				t.Errorf("the refused import wrote to the catalog: %v", err)
			}
		})
	}

	// Every bad line is named, not only the first.
	file := lines[0] + "\n" + agent(func(a *exportAgent) { a.Health = "?" }) + "\n" + key(func(k *exportTrustKey) { k.Thumbprint = "x" }) + "\n"
	_, _, err = importCatalog(ctx, catalogtest.SQLite(t), strings.NewReader(file), cfg)
	if err == nil || !strings.Contains(err.Error(), "line 2:") || !strings.Contains(err.Error(), "line 3:") {
		t.Errorf("import of two bad lines = %v, want both named", err)
	}
}

func marshalLine(t *testing.T, l exportLine) string {
	t.Helper()
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func base64URL(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
