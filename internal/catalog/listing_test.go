package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/catalog"
	"github.com/a2aregistry/registry/internal/catalog/catalogtest"
)

var editor = catalog.User("editor-1").For(catalog.Request{Role: "editor", ID: "req-1"})

func namedCard(name, version string) string {
	return fmt.Sprintf(`{"name": %q, "description": "d", "url": "https://x.example/a2a", "version": %q,
		"protocolVersion": "0.3.0", "capabilities": {}, "defaultInputModes": ["text/plain"],
		"defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["life"]}]}`, name, version)
}

func store(t *testing.T, s *catalog.Store, url, raw, source string) catalog.UpsertResult {
	t.Helper()
	res, err := s.Upsert(context.Background(), testActor, catalog.UpsertInput{CardURL: url, Card: mustParse(t, raw),
		Source: source, ReceivedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// scopedIDs returns the ids a scope finds with the "life" tag.
func scopedIDs(t *testing.T, s *catalog.Store, sc catalog.Scope) map[string]bool {
	t.Helper()
	p, err := s.Search(context.Background(), catalog.Query{Filters: map[string][]string{"tag": {"life"}}, Scope: sc})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, it := range p.Items {
		out[it.ID] = true
	}
	return out
}

// TestRequireApproval: with the policy on, agents registered, imported or
// found through seeds (crawl) start pending, hidden from browsing scopes;
// without it they start approved.
func TestRequireApproval(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		for _, require := range []bool{false, true} {
			s.SetListingPolicy(catalog.ListingPolicy{RequireApproval: require})
			for _, source := range []string{catalog.SourceURL, catalog.SourceImport, catalog.SourceCrawl} {
				url := fmt.Sprintf("https://%s-%t.example/card.json", source, require)
				a := store(t, s, url, namedCard("A "+source, "1"), source).Agent
				want, wantApproved := catalog.ListingApproved, 1
				if require {
					want, wantApproved = catalog.ListingPending, 0
				}
				if a.Listing.State != want || a.Listing.ApprovedVersion != wantApproved {
					t.Errorf("require=%t %s: listing %+v, want %s (approved version %d)", require, source, a.Listing, want, wantApproved)
				}
				if got := scopedIDs(t, s, catalog.Scope{})[a.ID]; got != !require {
					t.Errorf("require=%t %s: a viewer finds it = %v", require, source, got)
				}
				if !scopedIDs(t, s, catalog.Scope{Review: true})[a.ID] {
					t.Errorf("require=%t %s: an editor does not find it", require, source)
				}
			}
		}
	})
}

// TestListingTransitions walks an agent through the lifecycle: each
// accepted transition is stored, indexed and audited in its transaction;
// each refused one changes nothing.
func TestListingTransitions(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		s.SetListingPolicy(catalog.ListingPolicy{RequireApproval: true})
		a := store(t, s, "https://a.example/card.json", namedCard("A", "1"), catalog.SourceURL).Agent
		b := store(t, s, "https://b.example/card.json", namedCard("B", "1"), catalog.SourceURL).Agent
		if _, _, err := s.SaveCollection(ctx, testActor, catalog.Collection{Name: "Secret", Groups: []string{"sec"}}); err != nil {
			t.Fatal(err)
		}
		hidden := store(t, s, "https://h.example/card.json", namedCard("H", "1"), catalog.SourceURL).Agent
		if err := s.AddToCollection(ctx, testActor, "secret", hidden.ID); err != nil {
			t.Fatal(err)
		}
		review := catalog.Scope{Review: true}
		tests := []struct {
			name    string
			id      string
			sc      catalog.Scope
			ch      catalog.ListingChange
			wantErr error
			// want is the state afterwards; viewers see it when browsable.
			want     string
			browsed  bool
			approved int
		}{
			{"approve", a.ID, review, catalog.ListingChange{State: "approved"}, nil, "approved", true, 1},
			{"unknown state", a.ID, review, catalog.ListingChange{State: "listed"}, catalog.ErrInvalidListing, "approved", true, 1},
			{"reject without reason", a.ID, review, catalog.ListingChange{State: "rejected", Reason: "  "}, catalog.ErrInvalidListing, "approved", true, 1},
			{"deprecate without reason", a.ID, review, catalog.ListingChange{State: "deprecated"}, catalog.ErrInvalidListing, "approved", true, 1},
			{"replacement that does not exist", a.ID, review, catalog.ListingChange{State: "deprecated", Reason: "old", Replacement: "nope"}, catalog.ErrInvalidListing, "approved", true, 1},
			{"replacement the caller cannot see", a.ID, review, catalog.ListingChange{State: "deprecated", Reason: "old", Replacement: hidden.ID}, catalog.ErrInvalidListing, "approved", true, 1},
			{"replaced by itself", a.ID, review, catalog.ListingChange{State: "deprecated", Reason: "old", Replacement: a.ID}, catalog.ErrInvalidListing, "approved", true, 1},
			{"replacement when not deprecating", a.ID, review, catalog.ListingChange{State: "rejected", Reason: "x", Replacement: b.ID}, catalog.ErrInvalidListing, "approved", true, 1},
			{"deprecate with replacement", a.ID, review, catalog.ListingChange{State: "deprecated", Reason: "use B", Replacement: b.ID}, nil, "deprecated", true, 1},
			{"back to review", a.ID, review, catalog.ListingChange{State: "pending"}, nil, "pending", false, 1},
			{"reject", a.ID, review, catalog.ListingChange{State: "rejected", Reason: "spam"}, nil, "rejected", false, 1},
			{"an agent outside the editor's groups", hidden.ID, review, catalog.ListingChange{State: "approved"}, catalog.ErrNotFound, "pending", false, 0},
			{"an agent inside the editor's groups", hidden.ID, catalog.Scope{Review: true, Groups: []string{"SEC"}}, catalog.ListingChange{State: "approved"}, nil, "approved", false, 1},
		}
		audited := 0
		for _, tc := range tests {
			_, err := s.SetListing(ctx, editor, tc.sc, tc.id, tc.ch)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
			}
			if err == nil {
				audited++
			}
			got, err := s.Agent(ctx, catalog.ScopeAll, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Listing.State != tc.want || got.Listing.ApprovedVersion != tc.approved {
				t.Errorf("%s: listing %+v, want %s (approved version %d)", tc.name, got.Listing, tc.want, tc.approved)
			}
			if tc.wantErr == nil && (got.Listing.By != editor.String() || got.Listing.At == nil || got.Listing.Reason != tc.ch.Reason) {
				t.Errorf("%s: transition recorded as %+v", tc.name, got.Listing)
			}
			if tc.id == a.ID {
				if seen := scopedIDs(t, s, catalog.Scope{})[tc.id]; seen != tc.browsed {
					t.Errorf("%s: a viewer finds it = %v, want %v", tc.name, seen, tc.browsed)
				}
				if _, err := s.Agent(ctx, catalog.Scope{}, tc.id); errors.Is(err, catalog.ErrNotFound) == tc.browsed {
					t.Errorf("%s: a viewer reads it: %v", tc.name, err)
				}
			}
		}
		// A replacement the reader cannot see is not named to them.
		if _, err := s.SetListing(ctx, editor, catalog.ScopeAll, b.ID,
			catalog.ListingChange{State: "deprecated", Reason: "moved", Replacement: hidden.ID}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			sc   catalog.Scope
			want string
		}{{catalog.Scope{}, ""}, {catalog.Scope{Groups: []string{"sec"}}, hidden.ID}, {catalog.ScopeAll, hidden.ID}} {
			got, err := s.Agent(ctx, c.sc, b.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Listing.Replacement != c.want {
				t.Errorf("scope %+v reads replacement %q, want %q", c.sc, got.Listing.Replacement, c.want)
			}
		}
		audited++
		page, err := s.AuditLog(ctx, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		var rows []catalog.AuditEntry
		for _, e := range page.Entries {
			if e.Action == catalog.ActionListing {
				rows = append(rows, e)
			}
		}
		if len(rows) != audited {
			t.Fatalf("%d listing audit rows, want %d", len(rows), audited)
		}
		// Newest first: b's deprecation, hidden's approval, then a's
		// rejection.
		var detail map[string]any
		if err := json.Unmarshal(rows[2].Detail, &detail); err != nil {
			t.Fatal(err)
		}
		if rows[2].TargetID != a.ID || rows[2].Subject != "editor-1" || rows[2].RequestID != "req-1" ||
			detail["from"] != "pending" || detail["to"] != "rejected" || detail["reason"] != "spam" {
			t.Errorf("audit row %+v detail %v", rows[2], detail)
		}
	})
}

// TestReapproveOnChange: a new card version sends an approved agent back
// to review, keeping the approved version for the diff, and the audit log
// records the transition as the catalog's, whoever stored the card;
// without the policy it stays approved and nothing is recorded.
func TestReapproveOnChange(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		listingRows := func(id string) []catalog.AuditEntry {
			t.Helper()
			es, err := s.AgentAudit(context.Background(), id, 100)
			if err != nil {
				t.Fatal(err)
			}
			var out []catalog.AuditEntry
			for _, e := range es {
				if e.Action == catalog.ActionListing {
					out = append(out, e)
				}
			}
			return out
		}
		for _, reapprove := range []bool{false, true} {
			s.SetListingPolicy(catalog.ListingPolicy{ReapproveOnChange: reapprove})
			url := fmt.Sprintf("https://r-%t.example/card.json", reapprove)
			first := store(t, s, url, namedCard("R", "1"), catalog.SourceURL).Agent
			a := store(t, s, url, namedCard("R", "2"), catalog.SourceCrawl).Agent
			// Without re-approval the new version is accepted as it comes.
			want, wantApproved := catalog.ListingApproved, 2
			if reapprove {
				want, wantApproved = catalog.ListingPending, 1
			}
			if a.Listing.State != want || a.Listing.ApprovedVersion != wantApproved || a.CurrentVersion != 2 {
				t.Errorf("reapprove=%t: listing %+v at version %d, want %s with version %d approved", reapprove, a.Listing, a.CurrentVersion, want, wantApproved)
			}
			if seen := scopedIDs(t, s, catalog.Scope{})[first.ID]; seen != !reapprove {
				t.Errorf("reapprove=%t: a viewer finds the changed agent = %v", reapprove, seen)
			}
			// Unchanged bytes are no change.
			if again := store(t, s, url, namedCard("R", "2"), catalog.SourceCrawl).Agent; again.Listing.State != want {
				t.Errorf("reapprove=%t: unchanged card moved the agent to %s", reapprove, again.Listing.State)
			}
			rows := listingRows(first.ID)
			if !reapprove {
				if len(rows) != 0 {
					t.Errorf("reapprove=false: %d listing audit rows, want none", len(rows))
				}
				continue
			}
			// The crawler's write carries no request, and is not audited
			// itself: the transition is, once.
			if len(rows) != 1 {
				t.Fatalf("%d listing audit rows after a card change, want 1", len(rows))
			}
			var detail map[string]any
			if err := json.Unmarshal(rows[0].Detail, &detail); err != nil {
				t.Fatal(err)
			}
			if r := rows[0]; r.ActorKind != catalog.ActorSystem || r.Subject != "catalog" || r.TargetKind != catalog.TargetAgent ||
				detail["from"] != "approved" || detail["to"] != "pending" || detail["version"] != 2.0 ||
				detail["approved_version"] != 1.0 || detail["cause"] != "system:test" || detail["reason"] == "" {
				t.Errorf("send-back audit row %+v detail %v", r, detail)
			}
			// Approved again, then changed by a person registering the URL:
			// the row carries that request.
			if _, err := s.SetListing(context.Background(), editor, catalog.ScopeAll, first.ID, catalog.ListingChange{State: "approved"}); err != nil {
				t.Fatal(err)
			}
			registrar := catalog.User("sub-reg").For(catalog.Request{ID: "req-reg", Role: "editor", DisplayName: "Reg"})
			if _, err := s.Upsert(context.Background(), registrar, catalog.UpsertInput{CardURL: url, Card: mustParse(t, namedCard("R", "3")),
				Source: catalog.SourceURL}); err != nil {
				t.Fatal(err)
			}
			rows = listingRows(first.ID)
			if len(rows) != 3 {
				t.Fatalf("%d listing audit rows, want send-back, approval, send-back", len(rows))
			}
			if err := json.Unmarshal(rows[0].Detail, &detail); err != nil {
				t.Fatal(err)
			}
			if r := rows[0]; r.ActorKind != catalog.ActorSystem || r.Subject != "catalog" || r.RequestID != "req-reg" ||
				detail["cause"] != "user:sub-reg" || detail["version"] != 3.0 || detail["approved_version"] != 2.0 {
				t.Errorf("send-back on registration: audit row %+v detail %v", r, detail)
			}
		}
	})
}

// TestPlacementReachesReplicas: a listing or membership change on one
// Store shows in another Store's index after its Sync.
func TestPlacementReachesReplicas(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": catalogtest.SQLiteDSN, "postgres": catalogtest.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			a, b := catalogtest.Open(t, d), catalogtest.Open(t, d)
			ctx := context.Background()
			for _, s := range []*catalog.Store{a, b} {
				if err := s.WarmIndex(ctx); err != nil {
					t.Fatal(err)
				}
			}
			a.SetListingPolicy(catalog.ListingPolicy{RequireApproval: true})
			ag := store(t, a, "https://rep.example/card.json", namedCard("Rep", "1"), catalog.SourceURL).Agent
			// A viewer following the feed learns of the agent once it is
			// approved, not before.
			feed := func() int {
				t.Helper()
				ch, err := b.Changes(ctx, catalog.Scope{}, 0, 100)
				if err != nil {
					t.Fatal(err)
				}
				return len(ch)
			}
			if n := feed(); n != 0 {
				t.Fatalf("a viewer's feed has %d entries of a pending agent", n)
			}
			if _, err := a.SetListing(ctx, editor, catalog.ScopeAll, ag.ID, catalog.ListingChange{State: "approved"}); err != nil {
				t.Fatal(err)
			}
			if n := feed(); n != 2 {
				t.Fatalf("a viewer's feed has %d entries after approval, want created and updated", n)
			}
			sync := func() {
				t.Helper()
				if err := b.Sync(ctx); err != nil {
					t.Fatal(err)
				}
			}
			sync()
			if !scopedIDs(t, b, catalog.Scope{})[ag.ID] {
				t.Fatal("replica does not find the new agent")
			}
			if _, err := a.SetListing(ctx, editor, catalog.ScopeAll, ag.ID, catalog.ListingChange{State: "rejected", Reason: "no"}); err != nil {
				t.Fatal(err)
			}
			sync()
			if scopedIDs(t, b, catalog.Scope{})[ag.ID] || !scopedIDs(t, b, catalog.Scope{Review: true})[ag.ID] {
				t.Error("replica did not pick up the rejection")
			}
			if _, err := a.SetListing(ctx, editor, catalog.ScopeAll, ag.ID, catalog.ListingChange{State: "approved"}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := a.SaveCollection(ctx, testActor, catalog.Collection{Name: "Ops", Groups: []string{"ops"}}); err != nil {
				t.Fatal(err)
			}
			if err := a.AddToCollection(ctx, testActor, "Ops", ag.ID); err != nil {
				t.Fatal(err)
			}
			sync()
			if scopedIDs(t, b, catalog.Scope{})[ag.ID] || !scopedIDs(t, b, catalog.Scope{Groups: []string{"ops"}})[ag.ID] {
				t.Error("replica did not pick up the restricted membership")
			}
			// Opening the collection to everyone re-marks its members.
			if _, _, err := a.SaveCollection(ctx, testActor, catalog.Collection{Name: "OPS"}); err != nil {
				t.Fatal(err)
			}
			sync()
			if !scopedIDs(t, b, catalog.Scope{})[ag.ID] || !scopedIDs(t, a, catalog.Scope{})[ag.ID] {
				t.Error("opening the collection did not reach both indexes")
			}
		})
	}
}

// TestPendingCount: the count a viewer who finds nothing is told covers
// the pending agents it would see once approved: not approved or rejected
// ones, not removed ones, and none in a collection whose groups it lacks,
// so the number says nothing of collections hidden from it.
func TestPendingCount(t *testing.T) {
	catalogtest.ForEach(t, func(t *testing.T, s *catalog.Store) {
		ctx := context.Background()
		s.SetListingPolicy(catalog.ListingPolicy{RequireApproval: true})
		pending := func(name string) string {
			return store(t, s, "https://"+name+".example/card.json", namedCard(name, "1"), catalog.SourceURL).Agent.ID
		}
		pending("open")
		secret, gone, approved, rejected := pending("secret"), pending("gone"), pending("approved"), pending("rejected")
		if _, _, err := s.SaveCollection(ctx, testActor, catalog.Collection{Name: "Secret", Groups: []string{"sec"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddToCollection(ctx, testActor, "secret", secret); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveAgent(ctx, testActor, gone); err != nil {
			t.Fatal(err)
		}
		for id, st := range map[string]string{approved: catalog.ListingApproved, rejected: catalog.ListingRejected} {
			if _, err := s.SetListing(ctx, editor, catalog.ScopeAll, id, catalog.ListingChange{State: st, Reason: "r"}); err != nil {
				t.Fatal(err)
			}
		}
		for _, tt := range []struct {
			name string
			sc   catalog.Scope
			want int
		}{
			{"viewer", catalog.Scope{}, 1},
			{"viewer of another group", catalog.Scope{Groups: []string{"other"}}, 1},
			{"viewer of the secret group", catalog.Scope{Groups: []string{"SEC"}}, 2},
			{"editor", catalog.Scope{Review: true}, 1},
			{"all", catalog.ScopeAll, 2},
		} {
			got, err := s.PendingCount(ctx, tt.sc)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("%s: PendingCount = %d, want %d", tt.name, got, tt.want)
			}
		}
	})
}
