package sources_test

import (
	"testing"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
	"github.com/a2aregistry/registry/internal/sources"
)

// TestNestedCatalogsRecheckedOn304: a manifest that answers 304 does not
// hide a change in a catalog it nests. Unchanged, each document costs one
// conditional request and nothing is rewritten; a nested catalog that
// changed brings its new entries in (its body fetched once), and one that
// is gone takes its entries out.
func TestNestedCatalogsRecheckedOn304(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := t.Context()
		f := newFleet(t)
		f.set("/n2.json", manifest(a2a(f, "b")))
		f.set("/n1.json", manifest(a2a(f, "a"), entry{Identifier: "urn:air:127.0.0.1:test:n2", Type: sources.TypeCatalog, URL: f.srv.URL + "/n2.json"}))
		f.set("/top.json", manifest(a2a(f, "t"), entry{Identifier: "urn:air:127.0.0.1:test:n1", Type: sources.TypeCatalog, URL: f.srv.URL + "/n1.json"}))
		svc := newService(t, s, sources.Config{})
		src, err := svc.Add(ctx, person, sources.Request{URL: f.srv.URL + "/top.json"})
		if err != nil {
			t.Fatal(err)
		}
		hits := func() [3]int { return [3]int{f.hitsOf("/top.json"), f.hitsOf("/n1.json"), f.hitsOf("/n2.json")} }
		check := func(what string, wantHits [3]int) catalog.Source {
			t.Helper()
			before := hits()
			got, err := svc.Refresh(ctx, src.ID)
			if err != nil {
				t.Fatal(err)
			}
			after := hits()
			if d := [3]int{after[0] - before[0], after[1] - before[1], after[2] - before[2]}; d != wantHits {
				t.Errorf("%s: requests to top, n1, n2 = %v, want %v", what, d, wantHits)
			}
			if got.Status != catalog.SourceOK {
				t.Fatalf("%s: %+v", what, got)
			}
			return got
		}
		outcomes := func() map[string]string {
			_, entries, err := svc.Get(ctx, src.ID)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, e := range entries {
				out[e.Identifier] = e.Outcome
			}
			return out
		}

		first := check("first check", [3]int{1, 1, 1})
		if first.EntryCount != 5 {
			t.Fatalf("first check read %d entries, want 5", first.EntryCount)
		}
		same := check("nothing changed", [3]int{1, 1, 1})
		if same.ChangedAt == nil || !same.ChangedAt.Equal(*first.ChangedAt) || same.Message != "unchanged since the last check (304), and its 2 nested catalogs too" {
			t.Errorf("an unchanged source was rewritten: changed_at %v → %v, %q", first.ChangedAt, same.ChangedAt, same.Message)
		}

		// n2 (two levels down) gains an agent; the top and n1 answer 304.
		f.set("/n2.json", manifest(a2a(f, "b"), a2a(f, "c")))
		// top: the 304, then its body; n1: the 304, then read whole; n2: once.
		changed := check("a nested catalog changed", [3]int{2, 2, 1})
		if changed.ChangedAt.Equal(*first.ChangedAt) || changed.EntryCount != 6 {
			t.Errorf("the change was not read: %+v", changed)
		}
		o := outcomes()
		if o["urn:air:127.0.0.1:test:c"] != catalog.EntryCatalogued || o["urn:air:127.0.0.1:test:b"] != catalog.EntryUnchanged ||
			o["urn:air:127.0.0.1:test:n2"] != sources.EntryFollowed {
			t.Errorf("after n2 changed: %v", o)
		}
		if n := searchProvenance(t, s, catalog.RelationPublishedFrom); n != 4 {
			t.Errorf("%d agents from the source, want 4", n)
		}
		check("nothing changed again", [3]int{1, 1, 1})

		// n2 is gone: its agents leave with it.
		f.mu.Lock()
		delete(f.manifests, "/n2.json")
		f.mu.Unlock()
		check("a nested catalog gone", [3]int{2, 2, 2})
		if o := outcomes(); o["urn:air:127.0.0.1:test:n2"] != catalog.EntrySkipped || o["urn:air:127.0.0.1:test:a"] != catalog.EntryUnchanged {
			t.Errorf("after n2 went: %v", o)
		}
		if n := searchProvenance(t, s, catalog.RelationPublishedFrom); n != 2 {
			t.Errorf("%d agents from the source after n2 went, want 2", n)
		}
		// Still gone: asked again, and nothing changes.
		gone := check("a nested catalog still gone", [3]int{1, 1, 1})
		if gone.Message != "unchanged since the last check (304), and its 2 nested catalogs too" {
			t.Errorf("still gone: %q", gone.Message)
		}
		// Back: its agents come back.
		f.set("/n2.json", manifest(a2a(f, "b")))
		check("a nested catalog back", [3]int{2, 2, 1})
		if n := searchProvenance(t, s, catalog.RelationPublishedFrom); n != 3 {
			t.Errorf("%d agents from the source after n2 came back, want 3", n)
		}
	})
}
