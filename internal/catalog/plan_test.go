package catalog

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aregistry/registry/internal/card"
)

// planCard is a card whose description and skill the cases vary: a new
// description is a new version with the same derived rows, a new skill
// one with other derived rows.
func planCard(t *testing.T, description, skill string) *card.Card {
	t.Helper()
	raw := fmt.Sprintf(`{"protocolVersion":"0.3.0","name":"Invoice Extractor","description":%q,
		"url":"https://invoices.example/a2a","preferredTransport":"JSONRPC","version":"1.0.0",
		"capabilities":{},"defaultInputModes":["application/pdf"],"defaultOutputModes":["application/json"],
		"skills":[{"id":%q,"name":"Extract","description":"Pulls totals.","tags":["finance"]}]}`, description, skill)
	c, err := card.Parse([]byte(raw), card.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const planURL = "https://invoices.example/.well-known/agent-card.json"

var (
	planNow      = time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	planReceived = time.Date(2026, 11, 27, 0, 59, 0, 0, time.UTC)
	planRemoved  = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
)

// storedAgent is the agents row of c stored as version 3, approved,
// checked and verified, with the derived digest its rows have.
func storedAgent(t *testing.T, c *card.Card, mod func(*agentRecord)) agentRecord {
	t.Helper()
	summary, err := encodeSummaryRecord(recordOfSummary(summaryOf(c)))
	if err != nil {
		t.Fatal(err)
	}
	rec := agentRecord{PK: 7, ID: "agent-7", CardURL: planURL, Name: c.Name, Summary: summary,
		SignatureStatus: SignatureVerified, SignatureTrust: "pinned", AuditCodes: `["weak_scheme"]`, Health: HealthUp,
		CurrentVersion: 3, RawSHA256: rawDigest(c.Raw), Seq: 40, Works: WorksAll, Listing: ListingApproved,
		ApprovedVersion: 3, Visibility: `["public"]`, Collections: "[]", DerivedSHA256: derivedDigestOf(t, 7, c)}
	if mod != nil {
		mod(&rec)
	}
	return rec
}

func derivedDigestOf(t *testing.T, pk int64, c *card.Card) string {
	t.Helper()
	var d derivedRows
	if err := d.add(pk, c); err != nil {
		t.Fatal(err)
	}
	return d.digestSince(derivedMark{})
}

func removed(r *agentRecord) { r.RemovedAt, r.RemovedBy = &planRemoved, "user:admin" }

// planned runs the plan step as storeRun does, with fresh identities
// counted by needs: seqs from 101, pks from 201.
func planned(t *testing.T, ins []UpsertInput, hints []crawlHint, found []agentRecord, policy ListingPolicy) ([]cardStep, freshIDs, *runPlan) {
	t.Helper()
	byURL := make(map[string]*agentRecord)
	for i := range found {
		byURL[found[i].CardURL] = &found[i]
	}
	for i := range ins {
		if err := validateInput(&ins[i]); err != nil {
			t.Fatal(err)
		}
	}
	steps := decideRun(ins, hints, byURL)
	nseq, npk := needs(steps)
	var fresh freshIDs
	for i := range nseq {
		fresh.seqs = append(fresh.seqs, int64(101+i))
	}
	for i := range npk {
		fresh.pks = append(fresh.pks, int64(201+i))
		fresh.ids = append(fresh.ids, fmt.Sprintf("new-%d", i))
	}
	p, err := planRun(ins, hints, steps, fresh, policy, nil, planNow, make([]UpsertResult, len(ins)))
	if err != nil {
		t.Fatal(err)
	}
	return steps, fresh, p
}

// derived says what happens to an agent's derived rows.
const (
	derivedNone    = "none"    // not written: no new version
	derivedKept    = "kept"    // new version, rows equal to the stored ones: no delete, no insert
	derivedReplace = "replace" // stored rows deleted, new ones inserted
	derivedNew     = "new"     // a new agent's rows inserted
)

// planWant is what a plan does to its one input's agent.
type planWant struct {
	action  cardAction
	written bool // a new version: agents row, version, change, document
	// seqMoved: the agents row gets a fresh seq (every write does).
	seqMoved                      bool
	created, newVersion, restored bool
	removed                       bool // the answer still shows the agent removed
	version                       int
	derived                       string
	listing                       string
	approved                      int
	// reapprove: sent back to review by the catalog.
	reapprove bool
	resumed   bool
	touched   bool
	health    string
	crawl     *crawlStateRow // a new agent's crawl state
}

// planCase is one input stored over what found holds.
type planCase struct {
	name   string
	in     UpsertInput
	hint   *crawlHint
	found  []agentRecord
	policy ListingPolicy
	want   planWant
}

// planCases are TestPlanRun's cases, one per invariant of the write path.
func planCases(t *testing.T) []planCase {
	base := planCard(t, "Reads invoices.", "extract")
	described := planCard(t, "Reads invoices and receipts.", "extract") // same derived rows
	reskilled := planCard(t, "Reads invoices.", "extract-v2")           // other derived rows
	stored := func(mod func(*agentRecord)) []agentRecord { return []agentRecord{storedAgent(t, base, mod)} }
	pending := func(r *agentRecord) { r.Listing, r.ApprovedVersion = ListingPending, 2 }
	return []planCase{
		{name: "new card URL is created approved, due now",
			in: UpsertInput{CardURL: planURL, Card: base, ReceivedAt: planReceived},
			want: planWant{action: actionCreate, written: true, seqMoved: true, created: true, newVersion: true, version: 1,
				derived: derivedNew, listing: ListingApproved, approved: 1, health: HealthUnknown,
				crawl: &crawlStateRow{AgentPK: 201, NextCheckAt: planNow}}},
		{name: "new card URL under required approval starts pending",
			in: UpsertInput{CardURL: planURL, Card: base, ReceivedAt: planReceived}, policy: ListingPolicy{RequireApproval: true},
			want: planWant{action: actionCreate, written: true, seqMoved: true, created: true, newVersion: true, version: 1,
				derived: derivedNew, listing: ListingPending, approved: 0, health: HealthUnknown,
				crawl: &crawlStateRow{AgentPK: 201, NextCheckAt: planNow}}},
		{name: "new card URL under re-approval is approved at once",
			in: UpsertInput{CardURL: planURL, Card: base, ReceivedAt: planReceived}, policy: ListingPolicy{ReapproveOnChange: true},
			want: planWant{action: actionCreate, written: true, seqMoved: true, created: true, newVersion: true, version: 1,
				derived: derivedNew, listing: ListingApproved, approved: 1, health: HealthUnknown,
				crawl: &crawlStateRow{AgentPK: 201, NextCheckAt: planNow}}},
		{name: "imported paused agent keeps its schedule and stays paused",
			in: UpsertInput{CardURL: planURL, Card: base, Source: SourceImport, ReceivedAt: planReceived,
				NextCheckAt: planNow.Add(time.Hour), Paused: true},
			want: planWant{action: actionCreate, written: true, seqMoved: true, created: true, newVersion: true, version: 1,
				derived: derivedNew, listing: ListingApproved, approved: 1, health: HealthUnknown,
				crawl: &crawlStateRow{AgentPK: 201, NextCheckAt: planNow.Add(time.Hour), Paused: true}}},
		{name: "same bytes from the crawler only touch fetched_at",
			in: UpsertInput{CardURL: planURL, Card: base, Source: SourceCrawl, ReceivedAt: planReceived}, found: stored(nil),
			want: planWant{action: actionTouch, version: 3, derived: derivedNone, listing: ListingApproved, approved: 3,
				touched: true, health: HealthUp}},
		{name: "same bytes registered by URL resume the crawl",
			in: UpsertInput{CardURL: planURL, Card: base, Source: SourceURL, ReceivedAt: planReceived}, found: stored(nil),
			want: planWant{action: actionTouch, version: 3, derived: derivedNone, listing: ListingApproved, approved: 3,
				touched: true, resumed: true, health: HealthUp}},
		{name: "same bytes imported do not resume the crawl",
			in: UpsertInput{CardURL: planURL, Card: base, Source: SourceImport, ReceivedAt: planReceived}, found: stored(nil),
			want: planWant{action: actionTouch, version: 3, derived: derivedNone, listing: ListingApproved, approved: 3,
				touched: true, health: HealthUp}},
		{name: "registering by URL a paused copy does not resume the crawl",
			in:    UpsertInput{CardURL: planURL, Card: described, Source: SourceURL, ReceivedAt: planReceived, Paused: true},
			found: stored(nil),
			want: planWant{action: actionUpdate, written: true, seqMoved: true, newVersion: true, version: 4, derived: derivedKept,
				listing: ListingApproved, approved: 4, health: HealthUp}},
		{name: "new description keeps the derived rows and their digest",
			in: UpsertInput{CardURL: planURL, Card: described, Source: SourceCrawl, ReceivedAt: planReceived}, found: stored(nil),
			want: planWant{action: actionUpdate, written: true, seqMoved: true, newVersion: true, version: 4, derived: derivedKept,
				listing: ListingApproved, approved: 4, health: HealthUp}},
		{name: "new skill replaces the derived rows and sets the digest",
			in: UpsertInput{CardURL: planURL, Card: reskilled, Source: SourceCrawl, ReceivedAt: planReceived}, found: stored(nil),
			want: planWant{action: actionUpdate, written: true, seqMoved: true, newVersion: true, version: 4, derived: derivedReplace,
				listing: ListingApproved, approved: 4, health: HealthUp}},
		{name: "a row stored before digests gets its derived rows rewritten",
			in:    UpsertInput{CardURL: planURL, Card: described, Source: SourceCrawl, ReceivedAt: planReceived},
			found: stored(func(r *agentRecord) { r.DerivedSHA256 = "" }),
			want: planWant{action: actionUpdate, written: true, seqMoved: true, newVersion: true, version: 4, derived: derivedReplace,
				listing: ListingApproved, approved: 4, health: HealthUp}},
		{name: "crawler's new bytes never restore a removed agent",
			in: UpsertInput{CardURL: planURL, Card: reskilled, Source: SourceCrawl, ReceivedAt: planReceived}, found: stored(removed),
			want: planWant{action: actionSkip, removed: true, version: 3, derived: derivedNone, listing: ListingApproved, approved: 3,
				health: HealthUp}},
		{name: "crawler's same bytes never restore a removed agent",
			in: UpsertInput{CardURL: planURL, Card: base, Source: SourceCrawl, ReceivedAt: planReceived}, found: stored(removed),
			want: planWant{action: actionSkip, removed: true, version: 3, derived: derivedNone, listing: ListingApproved, approved: 3,
				health: HealthUp}},
		{name: "registering a removed agent's bytes again revives it with a new seq",
			in: UpsertInput{CardURL: planURL, Card: base, Source: SourceURL, ReceivedAt: planReceived}, found: stored(removed),
			want: planWant{action: actionRevive, seqMoved: true, restored: true, version: 3, derived: derivedNone,
				listing: ListingApproved, approved: 3, touched: true, resumed: true, health: HealthUp}},
		{name: "importing new bytes for a removed agent restores it with a new version",
			in: UpsertInput{CardURL: planURL, Card: reskilled, Source: SourceImport, ReceivedAt: planReceived}, found: stored(removed),
			want: planWant{action: actionUpdate, written: true, seqMoved: true, newVersion: true, restored: true, version: 4,
				derived: derivedReplace, listing: ListingApproved, approved: 4, health: HealthUp}},
		{name: "re-approval sends a changed approved agent back to review",
			in: UpsertInput{CardURL: planURL, Card: described, Source: SourceCrawl, ReceivedAt: planReceived}, found: stored(nil),
			policy: ListingPolicy{ReapproveOnChange: true},
			want: planWant{action: actionUpdate, written: true, seqMoved: true, newVersion: true, version: 4, derived: derivedKept,
				listing: ListingPending, approved: 3, reapprove: true, health: HealthUp}},
		{name: "re-approval leaves an unchanged approved agent approved",
			in: UpsertInput{CardURL: planURL, Card: base, Source: SourceCrawl, ReceivedAt: planReceived}, found: stored(nil),
			policy: ListingPolicy{ReapproveOnChange: true},
			want: planWant{action: actionTouch, version: 3, derived: derivedNone, listing: ListingApproved, approved: 3,
				touched: true, health: HealthUp}},
		{name: "re-approval leaves a pending agent's approved version alone",
			in: UpsertInput{CardURL: planURL, Card: described, Source: SourceCrawl, ReceivedAt: planReceived}, found: stored(pending),
			policy: ListingPolicy{ReapproveOnChange: true},
			want: planWant{action: actionUpdate, written: true, seqMoved: true, newVersion: true, version: 4, derived: derivedKept,
				listing: ListingPending, approved: 2, health: HealthUp}},
		{name: "a pending agent's new version is not approved without re-approval either",
			in: UpsertInput{CardURL: planURL, Card: described, Source: SourceCrawl, ReceivedAt: planReceived}, found: stored(pending),
			want: planWant{action: actionUpdate, written: true, seqMoved: true, newVersion: true, version: 4, derived: derivedKept,
				listing: ListingPending, approved: 2, health: HealthUp}},
		{name: "a check's health is written with its new version",
			in: UpsertInput{CardURL: planURL, Card: described, Source: SourceCrawl, ReceivedAt: planReceived}, found: stored(nil),
			hint: &crawlHint{health: HealthDown},
			want: planWant{action: actionUpdate, written: true, seqMoved: true, newVersion: true, version: 4, derived: derivedKept,
				listing: ListingApproved, approved: 4, health: HealthDown}},
		{name: "a check's digest is taken as the bytes' digest",
			in: UpsertInput{CardURL: planURL, Card: described, Source: SourceCrawl, ReceivedAt: planReceived}, found: stored(nil),
			hint: &crawlHint{digest: rawDigest(base.Raw), health: HealthDown},
			want: planWant{action: actionTouch, version: 3, derived: derivedNone, listing: ListingApproved, approved: 3,
				touched: true, health: HealthUp}},
	}
}

// TestPlanRun holds the write path's invariants, one case each, on a
// single input: whether it is written and what its agents row becomes.
func TestPlanRun(t *testing.T) {
	for _, tt := range planCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			var hints []crawlHint
			if tt.hint != nil {
				hints = []crawlHint{*tt.hint}
			}
			steps, fresh, p := planned(t, []UpsertInput{tt.in}, hints, tt.found, tt.policy)
			if got := steps[0].action; got != tt.want.action {
				t.Fatalf("action = %d, want %d", got, tt.want.action)
			}
			checkPlanInvariants(t, p, fresh, tt.found)
			checkPlanCase(t, tt, fresh, p)
		})
	}
}

// checkPlanCase checks what tt.want says of p, the plan of tt's one input.
func checkPlanCase(t *testing.T, tt planCase, fresh freshIDs, p *runPlan) {
	t.Helper()
	w := tt.want
	res := p.results[0]
	if res.Created != w.created || res.NewVersion != w.newVersion || res.Restored != w.restored || (res.Agent.Removed != nil) != w.removed {
		t.Errorf("result created/new/restored/removed = %v/%v/%v/%v, want %v/%v/%v/%v", res.Created, res.NewVersion,
			res.Restored, res.Agent.Removed != nil, w.created, w.newVersion, w.restored, w.removed)
	}
	a := res.Agent
	if a.CurrentVersion != w.version || a.Listing.State != w.listing || a.Listing.ApprovedVersion != w.approved || a.Health != w.health {
		t.Errorf("agent version/listing/approved/health = %d/%s/%d/%s, want %d/%s/%d/%s", a.CurrentVersion, a.Listing.State,
			a.Listing.ApprovedVersion, a.Health, w.version, w.listing, w.approved, w.health)
	}
	if got := len(p.versions) == 1; got != w.written {
		t.Errorf("new version written = %v, want %v", got, w.written)
	}
	wantSeq := int64(0)
	if w.seqMoved {
		wantSeq = fresh.seqs[0]
	} else if len(tt.found) > 0 {
		wantSeq = tt.found[0].Seq
	}
	if got := p.recs[0].Seq; w.action != actionSkip && got != wantSeq {
		t.Errorf("seq = %d, want %d", got, wantSeq)
	}
	if got := len(p.restored) == 1; got != w.restored {
		t.Errorf("restored = %v, want %v", got, w.restored)
	}
	if got := len(p.resumed) == 1; got != w.resumed {
		t.Errorf("crawl resumed = %v, want %v", got, w.resumed)
	}
	if got := len(p.touched) == 1; got != w.touched {
		t.Errorf("fetched_at touched = %v, want %v", got, w.touched)
	} else if got && (p.touched[0].at != planReceived || p.recs[0].FetchedAt != planReceived) {
		t.Errorf("fetched_at = %v / %v, want %v", p.touched[0].at, p.recs[0].FetchedAt, planReceived)
	}
	checkReapproval(t, p, w.reapprove)
	checkDerived(t, p, tt.found, tt.in.Card, w.derived)
	var crawl *crawlStateRow
	if len(p.crawlRows) > 0 {
		crawl = &p.crawlRows[0]
	}
	if (crawl == nil) != (w.crawl == nil) || crawl != nil && *crawl != *w.crawl {
		t.Errorf("crawl state = %+v, want %+v", crawl, w.crawl)
	}
}

// checkPlanInvariants checks what holds for every plan: every fresh
// identity is used once; every agents row written (created, changed,
// revived) moves to a fresh seq greater than its stored one, and has an
// index document at that seq; every new version has its version row, its
// change feed entry, and a verdict reset until it is verified.
func checkPlanInvariants(t *testing.T, p *runPlan, fresh freshIDs, found []agentRecord) {
	t.Helper()
	storedSeq := make(map[int64]int64)
	for _, r := range found {
		storedSeq[r.PK] = r.Seq
	}
	written := slices.Concat(p.revived, p.created, p.changed)
	var seqs []int64
	for _, r := range written {
		seqs = append(seqs, r.Seq)
		if r.Seq <= storedSeq[r.PK] {
			t.Errorf("agent %d written at seq %d, not after its stored seq %d", r.PK, r.Seq, storedSeq[r.PK])
		}
		if r.UpdatedAt != planNow {
			t.Errorf("agent %d written with updated_at %v, want the catalog's clock %v", r.PK, r.UpdatedAt, planNow)
		}
		if i := slices.IndexFunc(p.docs, func(d indexedDoc) bool { return d.pk == r.PK }); i < 0 || p.docs[i].seq != r.Seq {
			t.Errorf("agent %d written at seq %d without an index document at that seq", r.PK, r.Seq)
		}
	}
	slices.Sort(seqs)
	if !slices.Equal(seqs, fresh.seqs) {
		t.Errorf("written seqs %v, want each fresh seq %v once", seqs, fresh.seqs)
	}
	if len(p.docs) != len(written) {
		t.Errorf("%d index documents for %d written agents", len(p.docs), len(written))
	}
	if len(p.created) != len(fresh.pks) {
		t.Errorf("%d agents created with %d fresh pks", len(p.created), len(fresh.pks))
	}
	newVersions := slices.Concat(p.created, p.changed)
	if len(p.versions) != len(newVersions) || len(p.changes) != len(newVersions) {
		t.Fatalf("%d version rows and %d changes for %d new versions", len(p.versions), len(p.changes), len(newVersions))
	}
	for i, r := range newVersions {
		v := slices.IndexFunc(p.versions, func(v cardVersionRecord) bool { return v.AgentPK == r.PK })
		c := slices.IndexFunc(p.changes, func(c changeRow) bool { return c.AgentPK == r.PK })
		if v < 0 || p.versions[v].Number != r.CurrentVersion || p.versions[v].SHA256 != r.RawSHA256 {
			t.Errorf("new version %d of agent %d has no matching version row", r.CurrentVersion, r.PK)
		}
		wantKind := ChangeUpdated
		if i < len(p.created) {
			wantKind = ChangeCreated
		}
		if c < 0 || p.changes[c].Version != r.CurrentVersion || p.changes[c].Kind != wantKind {
			t.Errorf("new version %d of agent %d has no %s change", r.CurrentVersion, r.PK, wantKind)
		}
		if r.SignatureStatus != SignatureUnchecked || r.AuditCodes != "[]" || r.SignatureTrust != "" {
			t.Errorf("agent %d's new version keeps the old verdict %s/%s/%s", r.PK, r.SignatureStatus, r.AuditCodes, r.SignatureTrust)
		}
	}
}

func checkReapproval(t *testing.T, p *runPlan, want bool) {
	t.Helper()
	if got := len(p.reapprove) == 1; got != want {
		t.Fatalf("sent back to review = %v, want %v", got, want)
	}
	if !want {
		return
	}
	r := p.reapprove[0]
	if r.ListingBy != reapproveActor.String() || r.ListingAt == nil || !r.ListingAt.Equal(planNow) ||
		!strings.Contains(r.ListingReason, fmt.Sprint(r.CurrentVersion)) {
		t.Errorf("send-back by %q at %v for %q, want by the catalog now, naming version %d", r.ListingBy, r.ListingAt,
			r.ListingReason, r.CurrentVersion)
	}
}

// checkDerived checks the derived rows and digest of the plan's one agent
// against what want says happens to them.
func checkDerived(t *testing.T, p *runPlan, found []agentRecord, c *card.Card, want string) {
	t.Helper()
	rows := len(p.derived.skills) + len(p.derived.ifaces) + len(p.derived.schemes) + len(p.derived.findings)
	rec := p.recs[0]
	var stored string
	if len(found) > 0 {
		stored = found[0].DerivedSHA256
	}
	newDigest := derivedDigestOf(t, rec.PK, c)
	var wantRows, wantDeleted bool
	wantDigest := stored
	switch want {
	case derivedKept:
		if newDigest != stored {
			t.Fatalf("case error: digest %s differs from the stored %s", newDigest, stored)
		}
	case derivedReplace:
		wantRows, wantDeleted, wantDigest = true, true, newDigest
	case derivedNew:
		wantRows, wantDigest = true, newDigest
	}
	if got := rows > 0; got != wantRows {
		t.Errorf("derived rows inserted = %v, want %v", got, wantRows)
	}
	if got := slices.Contains(p.rederived, rec.PK); got != wantDeleted {
		t.Errorf("stored derived rows deleted = %v, want %v", got, wantDeleted)
	}
	// A skipped input leaves no row in the plan to look at.
	if skipped := rec.PK == 0; !skipped && rec.DerivedSHA256 != wantDigest {
		t.Errorf("derived digest = %q, want %q", rec.DerivedSHA256, wantDigest)
	}
}

// TestPlanRunHandsOutIdentitiesInOrder: a run mixing every action takes
// its seqs revived agents first, then written ones in input order, and its
// pks and ids in the order of the agents it creates.
func TestPlanRunHandsOutIdentitiesInOrder(t *testing.T) {
	base := planCard(t, "Reads invoices.", "extract")
	changed := planCard(t, "Reads invoices and receipts.", "extract")
	at := func(pk int64, url string, mod func(*agentRecord)) agentRecord {
		return storedAgent(t, base, func(r *agentRecord) {
			r.PK, r.ID, r.CardURL, r.DerivedSHA256 = pk, fmt.Sprint("agent-", pk), url, derivedDigestOf(t, pk, base)
			if mod != nil {
				mod(r)
			}
		})
	}
	found := []agentRecord{at(1, "https://a.example/", nil), at(2, "https://b.example/", removed), at(3, "https://c.example/", nil)}
	ins := []UpsertInput{
		{CardURL: "https://a.example/", Card: changed}, // update
		{CardURL: "https://new1.example/", Card: base}, // create
		{CardURL: "https://b.example/", Card: base},    // revive
		{CardURL: "https://c.example/", Card: base},    // touch
		{CardURL: "https://new2.example/", Card: base}, // create
	}
	_, fresh, p := planned(t, ins, nil, found, ListingPolicy{})
	checkPlanInvariants(t, p, fresh, found)
	wantSeq := []int64{102, 103, 101, 40, 104}
	wantPK := []int64{1, 201, 2, 3, 202}
	wantID := []string{"agent-1", "new-0", "agent-2", "agent-3", "new-1"}
	for i, r := range p.recs {
		if r.Seq != wantSeq[i] || r.PK != wantPK[i] || r.ID != wantID[i] {
			t.Errorf("input %d: pk/id/seq = %d/%s/%d, want %d/%s/%d", i, r.PK, r.ID, r.Seq, wantPK[i], wantID[i], wantSeq[i])
		}
	}
	if got := []int64{p.docs[0].pk, p.docs[1].pk, p.docs[2].pk, p.docs[3].pk}; !slices.Equal(got, []int64{2, 1, 201, 202}) {
		t.Errorf("index documents of agents %v, want the revived one first, then the written ones in order", got)
	}
	if len(p.touched) != 2 || p.touched[0].pk != 2 || p.touched[1].pk != 3 {
		t.Errorf("touched %+v, want agents 2 and 3", p.touched)
	}
}
