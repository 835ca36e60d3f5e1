package catalog

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aregistry/registry/internal/card"
)

// The write path of cards is three steps (see storeRun): lookup reads the
// agents rows a run of inputs names; the plan, below, decides from them
// and the inputs every row to write, without I/O; apply writes them.
// The plan is two pure functions because a write needs fresh identities
// (seq, pk, id) that only the database hands out: decideRun says what
// each input does, and so how many identities it needs; planRun turns the
// decisions and the identities into rows.

// crawlHint is what a check tells the write path beyond its card
// (recordOutcomes); registrations and imports give none.
type crawlHint struct {
	// digest is the hex SHA-256 of the card's bytes when the check
	// computed it already; empty to compute it here.
	digest string
	// health is the health the check found, written with the card when
	// it is a new version rather than by a statement of its own; empty
	// keeps the stored one.
	health string
}

// hintAt is the hint of input i; hints is nil or one per input.
func hintAt(hints []crawlHint, i int) crawlHint {
	if hints == nil {
		return crawlHint{}
	}
	return hints[i]
}

// cardAction is what storing one input does to its agent.
type cardAction uint8

const (
	// actionSkip: a crawler's card for an agent an admin removed. A check
	// under way when the agent was removed must not undo the removal.
	actionSkip cardAction = iota
	// actionTouch: the bytes are those stored; only fetched_at moves.
	actionTouch
	// actionRevive: a removed agent registered again with the bytes it
	// had. It is restored and, like a touch, fetched; a new seq makes
	// every replica's index take it back (see Sync).
	actionRevive
	// actionCreate: a card URL new to the catalog.
	actionCreate
	// actionUpdate: new bytes for a known agent, restoring it when it was
	// removed.
	actionUpdate
	// actionRefuse: a crawl brought new bytes the admission policy
	// refuses. They are not stored: the agent keeps its current (last
	// compliant) version and goes stale, the rule named, until a card
	// that complies comes.
	actionRefuse
)

// cardStep is the decision on one input.
type cardStep struct {
	action cardAction
	// url is the input's card URL as stored.
	url string
	// rec is the agents row as found (removal included); nil when action
	// is actionCreate.
	rec *agentRecord
	// digest is the hex SHA-256 of the input's card bytes.
	digest string
	// restore: the agent was removed and a person or an import registers
	// it again.
	restore bool
	// resume: registering by URL an agent known from an import starts
	// crawling it.
	resume bool
	// verdict is the admission policy's judgement of a new version
	// (actionCreate, actionUpdate); nil without a policy. refusal is the
	// rule of actionRefuse.
	verdict *Judgement
	refusal PolicyResult
}

// decideRun decides what each input of a run (distinct card URLs) does,
// given the agents rows found by card URL.
func decideRun(ins []UpsertInput, hints []crawlHint, found map[string]*agentRecord) []cardStep {
	steps := make([]cardStep, len(ins))
	for i, in := range ins {
		st := &steps[i]
		st.url = cleanText(in.CardURL)
		if st.digest = hintAt(hints, i).digest; st.digest == "" {
			st.digest = rawDigest(in.Card.Raw)
		}
		rec := found[st.url]
		st.rec = rec
		switch {
		case rec == nil:
			st.action = actionCreate
			continue
		case rec.RemovedAt != nil && in.Source == SourceCrawl:
			st.action = actionSkip
			continue
		}
		st.restore = rec.RemovedAt != nil
		st.resume = in.Source == SourceURL && !in.Paused
		switch {
		case rec.RawSHA256 != st.digest:
			st.action = actionUpdate
		case st.restore:
			st.action = actionRevive
		default:
			st.action = actionTouch
		}
	}
	return steps
}

// judgeRun judges the new versions of steps against the admission
// policy (none: nothing to do). A version the policy refuses fails the
// whole write when a person or an import brought it, with a
// *RefusedError naming the rule; a crawl's is not stored (actionRefuse).
// A new version has no verification report yet: the policy judges the
// input's Precheck (its signatures, publisher and content, checked before
// the write), or an unchecked signature without one, and judges the
// version again when the verifier reports (recordReports).
func judgeRun(adm Admission, ins []UpsertInput, hints []crawlHint, steps []cardStep) error {
	if adm == nil {
		return nil
	}
	for i := range steps {
		st := &steps[i]
		if st.action != actionCreate && st.action != actionUpdate {
			continue
		}
		in := AdmissionInput{CardURL: st.url, Card: ins[i].Card, Source: ins[i].Source,
			SignatureStatus: SignatureUnchecked, Health: hintAt(hints, i).health}
		if pc := ins[i].Precheck; pc != nil {
			in.SignatureStatus, in.Report = pc.SignatureStatus, pc.Report
		}
		if st.rec != nil {
			in.AgentID = st.rec.ID
			if in.Health == "" {
				in.Health = st.rec.Health
			}
			in.Provenance = strings.Fields(st.rec.Provenance)
		}
		if ins[i].Source != SourceCrawl {
			// The write records how the card came (recordProvenance):
			// the policy judges the agent as it leaves it.
			in.Provenance = append(in.Provenance, provenanceOf(Actor{}, ins[i], 0, time.Time{}).token())
			slices.Sort(in.Provenance)
			in.Provenance = slices.Compact(in.Provenance)
		}
		if in.Health == "" {
			in.Health = HealthUnknown
		}
		j := adm.Judge(in)
		if r, ok := j.First(PolicyReject); ok {
			if ins[i].Source != SourceCrawl || st.rec == nil {
				return &RefusedError{CardURL: ins[i].CardURL, RuleID: r.RuleID, Message: r.Message}
			}
			st.action, st.refusal = actionRefuse, r
			continue
		}
		st.verdict = &j
	}
	return nil
}

// freshIDs are the identities a plan hands out, in input order: seqs for
// the revived agents first, then for the written ones; pks and ids for
// the created ones.
type freshIDs struct {
	seqs []int64
	pks  []int64
	ids  []string
}

// needs counts the seqs and pks the steps take.
func needs(steps []cardStep) (seqs, pks int) {
	for _, st := range steps {
		switch st.action {
		case actionRevive, actionUpdate, actionRefuse:
			seqs++
		case actionCreate:
			seqs++
			pks++
		}
	}
	return seqs, pks
}

// runPlan is every write a run of inputs makes, for applyRun, and what it
// answers.
type runPlan struct {
	// results are the answers, one per input.
	results []UpsertResult
	// recs are the agents rows as the run leaves them, one per input
	// (zero for a skipped one): annotations are found by their card URL.
	recs []agentRecord
	// touched are the agents whose stored bytes came again: fetched_at.
	touched []fetchedRow
	// resumed are the agents whose crawl a registration un-pauses.
	resumed []fetchedRow
	// restored are the removed agents brought back, as found.
	restored []agentRecord
	// revived are the restored agents with unchanged bytes: a new seq
	// and updated_at.
	revived []agentRecord
	// created and changed are the agents rows of new card versions;
	// reapprove those of them an approval policy sends back to review.
	created, changed, reapprove []agentRecord
	// rederived are the changed agents whose derived rows are replaced by
	// those in derived.
	rederived []int64
	derived   derivedRows
	versions  []cardVersionRecord
	crawlRows []crawlStateRow
	changes   []changeRow
	// docs are the index documents to publish after commit, revived
	// agents first.
	docs []indexedDoc
	// policy is what the admission policy's judgements write; refused
	// are the agents whose crawled card it refused, as they are left,
	// and fields their index changes.
	policy  policyPlan
	refused []agentRecord
	fields  []fieldUpdate
}

// fetchedRow names one agent a statement of its own changes.
type fetchedRow struct {
	pk      int64
	at      time.Time
	cardURL string // as the input gave it, for errors
}

// planRun turns the decisions on a run of inputs into the rows to write,
// and fills results, one per input. fresh holds the identities needs
// counted; now is the catalog's clock (updated_at: replicas sync their
// search index by it, see Sync).
func planRun(ins []UpsertInput, hints []crawlHint, steps []cardStep, fresh freshIDs, policy ListingPolicy, adm Admission,
	now time.Time, results []UpsertResult) (*runPlan, error) {
	// Sized once: a run is up to a few hundred cards, and growing these
	// by appends showed in the write path's allocations.
	nseq, ncreate := needs(steps)
	nseq -= countAction(steps, actionRefuse)
	p := &runPlan{results: results, recs: make([]agentRecord, len(ins)), docs: make([]indexedDoc, 0, nseq)}
	if nwrite := nseq - countAction(steps, actionRevive); nwrite > 0 {
		p.versions = make([]cardVersionRecord, 0, nwrite)
		p.changes = make([]changeRow, 0, nwrite)
		p.created = make([]agentRecord, 0, ncreate)
		p.changed = make([]agentRecord, 0, nwrite-ncreate)
	}
	for i, st := range steps {
		if st.action == actionCreate {
			continue
		}
		in, rec := ins[i], *st.rec
		if st.action == actionSkip {
			p.results[i] = UpsertResult{Agent: agentOf(rec, in.Card)}
			continue
		}
		if st.restore {
			p.restored = append(p.restored, rec)
			rec.RemovedAt, rec.RemovedBy = nil, ""
		}
		if st.resume {
			p.resumed = append(p.resumed, fetchedRow{pk: rec.PK, cardURL: in.CardURL})
		}
		if st.action == actionTouch || st.action == actionRevive {
			rec.FetchedAt = in.ReceivedAt
			p.touched = append(p.touched, fetchedRow{pk: rec.PK, at: in.ReceivedAt, cardURL: in.CardURL})
			p.results[i] = UpsertResult{Agent: agentOf(rec, in.Card)}
		}
		p.recs[i] = rec
	}
	seqs := fresh.seqs
	for i, st := range steps {
		switch st.action {
		case actionRevive:
			if err := p.revive(i, ins[i], seqs[0], now); err != nil {
				return nil, err
			}
		case actionRefuse:
			p.refuse(i, st, seqs[0], now)
		default:
			continue
		}
		seqs = seqs[1:]
	}
	pks, ids := fresh.pks, fresh.ids
	for i, st := range steps {
		switch st.action {
		case actionCreate:
			p.recs[i] = agentRecord{PK: pks[0], ID: ids[0], CardURL: st.url, SignatureStatus: SignatureUnchecked,
				Health: HealthUnknown, Works: WorksUnchecked, CreatedAt: now, Listing: policy.initial(),
				Visibility: `["public"]`, Collections: "[]", PolicyFailing: "[]"}
			pks, ids = pks[1:], ids[1:]
		case actionUpdate:
		default:
			continue
		}
		w := cardWrite{in: ins[i], health: hintAt(hints, i).health, digest: st.digest, seq: seqs[0],
			created: st.action == actionCreate, restored: st.restore, verdict: st.verdict, digestOfPolicy: digestOf(adm)}
		if err := p.write(i, w, policy, now); err != nil {
			return nil, err
		}
		seqs = seqs[1:]
	}
	return p, nil
}

// countAction counts the steps that take action a.
func countAction(steps []cardStep, a cardAction) int {
	n := 0
	for _, st := range steps {
		if st.action == a {
			n++
		}
	}
	return n
}

// revive gives input i's restored agent, whose bytes did not change, a
// new seq and its index document from the stored row.
func (p *runPlan) revive(i int, in UpsertInput, seq int64, now time.Time) error {
	rec := &p.recs[i]
	rec.Seq, rec.UpdatedAt = seq, now
	pl, err := storedPlacement(rec.Listing, rec.Collections, rec.Visibility)
	if err != nil {
		return fmt.Errorf("restoring agent %s: %w", rec.ID, err)
	}
	skills := skillsOf(in.Card)
	// The plan does not read when the version came, so a revived agent
	// whose card changed key is off the key-change days (FilterKeyChangedDay)
	// until the index is next built from the database.
	fs, parts, err := storedDocFacets(rec.Summary, rec.SignatureStatus, rec.SignatureTrust, rec.PublisherVerified, rec.Health, rec.Works, rec.AuditCodes, rec.FindingSeverities, time.Time{}, pl, skills)
	if err != nil {
		return fmt.Errorf("restoring agent %s: %w", rec.ID, err)
	}
	fs = append(fs, identityFacets(rec.CardURL)...)
	pf, err := policyFacets(rec.PolicyFailing)
	if err != nil {
		return fmt.Errorf("restoring agent %s: %w", rec.ID, err)
	}
	fs = append(fs, pf...)
	p.revived = append(p.revived, *rec)
	p.docs = append(p.docs, indexedDoc{pk: rec.PK, seq: rec.Seq, sortKey: sortKeyOf(rec.Name), facets: fs, parts: parts,
		text: textOfParts(in.Card.Name, in.Card.Description, providerOf(in.Card), skills)})
	p.results[i] = UpsertResult{Agent: agentOf(*rec, in.Card), Restored: true}
	return nil
}

// refuse plans the refusal of input i's crawled card (actionRefuse): the
// agent keeps its version, goes stale with the rule named, and takes a
// new seq for the index change.
func (p *runPlan) refuse(i int, st cardStep, seq int64, now time.Time) {
	rec := &p.recs[i]
	prev := rec.Seq
	rec.Seq, rec.UpdatedAt = seq, now
	rec.Health, rec.PolicyRefused = HealthStale, cleanText(st.refusal.RuleID)
	p.refused = append(p.refused, *rec)
	p.fields = append(p.fields, fieldUpdate{pk: rec.PK, prev: prev, seq: seq, values: map[string][]string{FieldHealth: {HealthStale}}})
	r := st.refusal
	p.results[i] = UpsertResult{Agent: agentOf(*rec, nil), Refused: &r}
	p.changes = append(p.changes, policyEvent(*rec, now, rec.PolicyRefused))
}

// digestOf is the digest of adm; "" when there is no policy.
func digestOf(adm Admission) string {
	if adm == nil {
		return ""
	}
	return adm.Digest()
}

// cardWrite is one new card version to plan.
type cardWrite struct {
	in       UpsertInput
	health   string // crawlHint.health
	digest   string
	seq      int64
	created  bool
	restored bool
	// verdict is the admission policy's, nil without one; digestOfPolicy
	// names the policy.
	verdict        *Judgement
	digestOfPolicy string
}

// write plans input i's new card version onto p.recs[i]: the agents row,
// the version, derived rows when they differ from the stored ones, the
// crawl state of a new agent, the change feed entry and the index
// document.
func (p *runPlan) write(i int, w cardWrite, policy ListingPolicy, now time.Time) error {
	in, c, rec := w.in, w.in.Card, &p.recs[i]
	sum := recordOfSummary(summaryOf(c))
	summary, err := encodeSummaryRecord(sum)
	if err != nil {
		return err
	}
	rec.Name, rec.Description, rec.Provider = cleanText(c.Name), cleanText(c.Description), cleanText(providerOf(c))
	rec.AgentVersion, rec.Shape, rec.ProtocolVersions = cleanText(c.Version), string(c.Shape), strings.Join(c.ProtocolVersions, ",")
	rec.Summary, rec.RawSHA256, rec.Seq = summary, w.digest, w.seq
	rec.UpdatedAt, rec.FetchedAt = now, in.ReceivedAt
	if w.health != "" {
		rec.Health = w.health
	}
	rec.CurrentVersion++
	// A verdict belongs to the bytes it was made on: a new version is
	// unchecked, without audit findings, until the verification runner
	// reports on it.
	rec.SignatureStatus, rec.AuditCodes, rec.SignatureTrust = SignatureUnchecked, "[]", ""
	rec.FindingSeverities = "[]"
	rec.PublisherVerified = publisherVerifiedFalse
	p.planListing(rec, w.created, policy, now)
	rec.PolicyRefused = ""
	policyChanged := false
	if w.verdict != nil {
		policyChanged = p.policy.judge(rec, *w.verdict, w.digestOfPolicy, policy, true, now)
	} else {
		rec.PolicyFailing, rec.PolicyDigest = "[]", ""
	}
	pl, err := storedPlacement(rec.Listing, rec.Collections, rec.Visibility)
	if err != nil {
		return fmt.Errorf("agent %s: %w", rec.ID, err)
	}
	if err := p.planDerived(rec, c, w.created); err != nil {
		return err
	}
	kind := ChangeUpdated
	if w.created {
		kind = ChangeCreated
		p.created = append(p.created, *rec)
		next := in.NextCheckAt
		if next.IsZero() {
			next = now
		}
		p.crawlRows = append(p.crawlRows, crawlStateRow{AgentPK: rec.PK, NextCheckAt: next.UTC(), Paused: in.Paused})
	} else {
		p.changed = append(p.changed, *rec)
	}
	p.versions = append(p.versions, cardVersionRecord{AgentPK: rec.PK, Number: rec.CurrentVersion, SHA256: w.digest,
		Size: len(c.Raw), Source: in.Source, ReceivedAt: in.ReceivedAt, Raw: c.Raw})
	p.changes = append(p.changes, changeRow{AgentPK: rec.PK, AgentID: rec.ID, CardURL: rec.CardURL, Kind: kind,
		Version: rec.CurrentVersion, At: now})
	if policyChanged {
		p.changes = append(p.changes, policyEvent(*rec, now, ""))
	}
	skills := skillsOf(c)
	pf, err := policyFacets(rec.PolicyFailing)
	if err != nil {
		return fmt.Errorf("agent %s: %w", rec.ID, err)
	}
	fs := append(docFacets(sum, rec.SignatureStatus, rec.SignatureTrust, rec.PublisherVerified, rec.Health, rec.Works, nil, nil, "", pl),
		identityFacets(rec.CardURL)...)
	p.docs = append(p.docs, indexedDoc{pk: rec.PK, seq: rec.Seq, sortKey: sortKeyOf(c.Name), facets: append(fs, pf...),
		parts: skillParts(skills, sum), text: textOfParts(c.Name, c.Description, providerOf(c), skills)})
	p.results[i] = UpsertResult{Agent: agentOf(*rec, c), Created: w.created, NewVersion: true, Restored: w.restored}
	return nil
}

// planListing moves rec's listing for its new version. Without
// re-approval an approved agent's new version is accepted as it comes: it
// is the approved one. With it, a changed approved agent goes back to
// review, keeping its approved version so the review shows the diff.
func (p *runPlan) planListing(rec *agentRecord, created bool, policy ListingPolicy, now time.Time) {
	if rec.Listing != ListingApproved {
		return
	}
	if created || !policy.ReapproveOnChange {
		rec.ApprovedVersion = rec.CurrentVersion
		return
	}
	at := now
	rec.Listing, rec.ListingReason, rec.ListingBy = ListingPending, reapproveReason(rec.CurrentVersion), reapproveActor.String()
	rec.ListingAt = &at
	p.reapprove = append(p.reapprove, *rec)
}

// planDerived adds the derived rows of rec's new card c and sets its
// derived digest. Most new versions change a description or a version
// string: when the derived rows are those stored, they stay (no delete,
// no insert, no index maintenance in the database).
func (p *runPlan) planDerived(rec *agentRecord, c *card.Card, created bool) error {
	mark := p.derived.mark()
	if err := p.derived.add(rec.PK, c); err != nil {
		return err
	}
	digest := p.derived.digestSince(mark)
	switch {
	case created:
	case rec.DerivedSHA256 == digest:
		p.derived.truncate(mark)
	default:
		p.rederived = append(p.rederived, rec.PK)
	}
	rec.DerivedSHA256 = digest
	return nil
}
