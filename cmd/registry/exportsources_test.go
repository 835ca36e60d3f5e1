package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/config"
	"github.com/a2aregistry/registry/internal/crawler"
	"github.com/a2aregistry/registry/internal/safehttp"
	"github.com/a2aregistry/registry/internal/sources"
)

// TestExportImportSources: sources and provenance survive export and
// import into either database: the source with the entries of its last
// check, every agent's provenance (a source's entry, a person's
// registration, an ended row of an agent withdrawn with its reason), the
// provenance facet and the representative queries searched, and the
// copy exports as the original did.
func TestExportImportSources(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var manifestBody string
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ard.json":
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprint(w, manifestBody)
		default:
			fmt.Fprintf(w, `{"name":"%s","description":"an agent","version":"1",
"supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`, r.URL.Path[1:])
		}
	}))
	defer srv.Close()
	entry := func(name, query string) string {
		return fmt.Sprintf(`{"identifier":"urn:air:127.0.0.1:t:%s","type":"application/a2a-agent-card+json","url":"%s/%s",
			"tags":["t"],"representativeQueries":[%q]}`, name, srv.URL, name, query)
	}
	setManifest := func(entries ...string) {
		mu.Lock()
		defer mu.Unlock()
		manifestBody = `{"entries":[`
		for i, e := range entries {
			if i > 0 {
				manifestBody += ","
			}
			manifestBody += e
		}
		manifestBody += `]}`
	}
	src := catalogtest.SQLite(t)
	client := safehttp.New(safehttp.Config{AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	defer client.CloseIdleConnections()
	reg := crawler.NewRegistrar(crawler.NewFetcher(client, 0), src, card.Limits{}, nil)
	svc := sources.New(src, reg, crawler.NewFetcher(client, 1<<20), client, sources.Config{}, nil)
	source, err := svc.Add(ctx, catalog.User("sub-ed"), sources.Request{URL: srv.URL + "/ard.json?token=s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	setManifest(entry("payroll", "run payroll for my team"), entry("leaving", "say goodbye"), entry("shared", "shared work"))
	if _, err := svc.Refresh(ctx, source.ID); err != nil {
		t.Fatal(err)
	}
	_, first, err := svc.Get(ctx, source.ID)
	if err != nil || len(first) != 3 || first[1].AgentID == "" {
		t.Fatalf("first check: %+v, %v", first, err)
	}
	// A person registers one of them too; another leaves the manifest
	// and is withdrawn.
	if _, err := reg.Register(ctx, catalog.User("sub-ann").For(catalog.Request{DisplayName: "Ann"}), catalog.ScopeAll, srv.URL+"/shared"); err != nil {
		t.Fatal(err)
	}
	setManifest(entry("payroll", "run payroll for my team"), entry("shared", "shared work"))
	if got, err := svc.Refresh(ctx, source.ID); err != nil || got.Status != catalog.SourceOK {
		t.Fatalf("second check: %+v, %v", got, err)
	}
	_, entries, err := svc.Get(ctx, source.ID)
	if err != nil || len(entries) != 2 {
		t.Fatalf("entries %+v, %v", entries, err)
	}
	page, err := src.Search(ctx, catalog.Query{Limit: catalog.MaxLimit, Scope: catalog.ScopeAll})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, it := range page.Items {
		ids = append(ids, it.ID)
	}
	if r, err := src.AgentRemoval(ctx, first[1].AgentID); err != nil || r == nil || r.Withdrawn == "" {
		t.Fatalf("the agent that left: %+v, %v", r, err)
	}
	ids = append(ids, first[1].AgentID)

	var exported bytes.Buffer
	if _, _, err := exportCatalog(ctx, src, &exported); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(exported.Bytes(), []byte("lease")) {
		t.Error("the export carries a lease")
	}
	for _, dst := range []struct {
		name  string
		store func(testing.TB) *catalog.Store
	}{{"postgres", catalogtest.Postgres}, {"sqlite", catalogtest.SQLite}} {
		t.Run(dst.name, func(t *testing.T) {
			to := dst.store(t)
			if _, _, err := importCatalog(ctx, to, bytes.NewReader(exported.Bytes()), config.Default()); err != nil {
				t.Fatal(err)
			}
			sameSources(t, src, to)
			for _, id := range ids {
				pa, err := src.AgentProvenance(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				pb, err := to.AgentProvenance(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				for _, ps := range [][]catalog.Provenance{pa, pb} {
					for i := range ps {
						ps[i].FirstAt, ps[i].LastAt, ps[i].EndedAt = ps[i].FirstAt.Truncate(time.Microsecond), ps[i].LastAt.Truncate(time.Microsecond), catalog.ExportTimePtr(ps[i].EndedAt)
					}
				}
				if !reflect.DeepEqual(pa, pb) {
					t.Errorf("provenance of %s:\n%+v\ncopy:\n%+v", id, pa, pb)
				}
				ra, _ := src.AgentRemoval(ctx, id)
				rb, _ := to.AgentRemoval(ctx, id)
				if (ra == nil) != (rb == nil) || ra != nil && ra.Withdrawn != rb.Withdrawn {
					t.Errorf("removal of %s: %+v, copy %+v", id, ra, rb)
				}
			}
			for _, q := range []catalog.Query{
				{Filters: map[string][]string{catalog.FieldProvenance: {catalog.RelationPublishedFrom}}},
				{Filters: map[string][]string{catalog.FieldProvenance: {catalog.ProvenanceRegistered}}},
				{Text: "payroll"},
			} {
				a, err := src.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				b, err := to.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if a.Total == 0 || a.Total != b.Total || a.Items[0].ID != b.Items[0].ID {
					t.Errorf("query %+v: %d agents, copy %d", q, a.Total, b.Total)
				}
			}
			var again bytes.Buffer
			if _, _, err := exportCatalog(ctx, to, &again); err != nil {
				t.Fatal(err)
			}
			if a, b := withoutHeader(exported.String()), withoutHeader(again.String()); a != b {
				t.Errorf("export of the copy differs from the original export:\n%s\n%s", a, b)
			}
		})
	}
}

func sameSources(t *testing.T, a, b *catalog.Store) {
	t.Helper()
	ctx := context.Background()
	sa, err := a.Sources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Sources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sa) != 1 || len(sb) != 1 {
		t.Fatalf("sources: %d, copy %d", len(sa), len(sb))
	}
	x, y := sa[0], sb[0]
	for _, s := range []*catalog.Source{&x, &y} {
		s.CreatedAt, s.NextCheckAt = s.CreatedAt.Truncate(time.Microsecond), s.NextCheckAt.Truncate(time.Microsecond)
		s.CheckedAt, s.ChangedAt = catalog.ExportTimePtr(s.CheckedAt), catalog.ExportTimePtr(s.ChangedAt)
	}
	if !reflect.DeepEqual(x, y) {
		t.Errorf("source:\n%+v\ncopy:\n%+v", x, y)
	}
	ea, _ := a.SourceEntries(ctx, x.ID)
	eb, _ := b.SourceEntries(ctx, x.ID)
	if !reflect.DeepEqual(ea, eb) {
		t.Errorf("entries:\n%+v\ncopy:\n%+v", ea, eb)
	}
}
