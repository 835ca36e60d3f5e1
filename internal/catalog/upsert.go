package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"

	"github.com/a2aregistry/registry/internal/card"
)

// Upsert stores a freshly received card. A new agent is created for an
// unknown card URL; a new version is recorded only when the raw bytes differ
// from the current version. Everything happens in one transaction: a failure
// leaves the catalog as it was.
func (s *Store) Upsert(ctx context.Context, actor Actor, in UpsertInput) (UpsertResult, error) {
	res, err := s.UpsertBatch(ctx, actor, []UpsertInput{in})
	if err != nil {
		return UpsertResult{}, err
	}
	return res[0], nil
}

// UpsertBatch stores several cards in one transaction, for imports, bulk
// loads and crawler write batches. Either every card is stored or none is.
// Work is done per batch, not per card: one lookup, and one multi-row
// statement per table for all new and changed cards.
func (s *Store) UpsertBatch(ctx context.Context, actor Actor, ins []UpsertInput) ([]UpsertResult, error) {
	return s.upsertBatch(ctx, actor, ins, s.ListingPolicy())
}

// upsertBatch is UpsertBatch under the given listing policy.
func (s *Store) upsertBatch(ctx context.Context, actor Actor, ins []UpsertInput, policy ListingPolicy) ([]UpsertResult, error) {
	if err := actor.validate(); err != nil {
		return nil, err
	}
	for i := range ins {
		if err := validateInput(&ins[i]); err != nil {
			return nil, err
		}
	}
	results := make([]UpsertResult, len(ins))
	var changed []indexedDoc
	var ups []fieldUpdate
	var fields []fieldUpdate
	store := func(tx *txn) error {
		clear(results) // run again after a conflict: from scratch
		tx.listing = policy
		var err error
		changed, fields, err = storeCards(tx, actor, ins, nil, results)
		if err != nil {
			return err
		}
		if ups, err = recordProvenance(tx, actor, ins, results, changed); err != nil {
			return err
		}
		return writeAudit(tx.DB, actor, registerAudits(results)...)
	}
	err := s.transactRetrying(ctx, store)
	if errors.Is(err, gorm.ErrDuplicatedKey) || isUniqueViolation(err) {
		// Another writer (a replica, a concurrent registration) created the
		// same card URL between our lookup and our insert. Once more sees
		// its row and turns the insert into an update or a no-op.
		err = s.transactRetrying(ctx, store)
	}
	if err != nil {
		return nil, err
	}
	s.publish(changed)
	s.afterProvenance(ctx, ups)
	if err := s.publishFields(ctx, fields); err != nil {
		s.log.Warn("refreshing search index after a refused card", "err", err)
	}
	return results, nil
}

// registerAudits are the audit rows of stored cards, one per input.
func registerAudits(results []UpsertResult) []audit {
	rows := make([]audit, len(results))
	for i, r := range results {
		detail := map[string]any{"card_url": r.Agent.CardURL, "created": r.Created, "new_version": r.NewVersion,
			"version": r.Agent.CurrentVersion}
		if r.Restored {
			detail["restored"] = true
		}
		rows[i] = audit{action: ActionRegister, targetKind: TargetAgent, targetID: r.Agent.ID, detail: detail}
	}
	return rows
}

func validateInput(in *UpsertInput) error {
	switch {
	case strings.TrimSpace(in.CardURL) == "":
		return fmt.Errorf("%w: empty card URL", ErrInvalidQuery)
	case in.Card == nil || len(in.Card.Raw) == 0:
		return fmt.Errorf("%w: no card for %s", ErrInvalidQuery, in.CardURL)
	}
	if in.Source == "" {
		in.Source = SourceURL
	}
	if in.ReceivedAt.IsZero() {
		in.ReceivedAt = time.Now()
	}
	in.ReceivedAt = in.ReceivedAt.UTC()
	return nil
}

// storeCards stores inputs inside tx, filling results, and returns the
// index documents to publish after commit; hints is nil or one per input
// (a crawl's, see recordOutcomes). A card URL given twice is stored
// in order: the inputs are cut into runs without repeats, each stored by
// storeRun. The caller records the audit rows: a card stored by a check is
// audited as the check.
func storeCards(tx *txn, actor Actor, ins []UpsertInput, hints []crawlHint, results []UpsertResult) ([]indexedDoc, []fieldUpdate, error) {
	var (
		docs   []indexedDoc
		fields []fieldUpdate
	)
	err := runsWithoutRepeats(ins, func(in UpsertInput) string { return in.CardURL }, func(from, to int) error {
		var h []crawlHint
		if hints != nil {
			h = hints[from:to]
		}
		p, err := storeRun(tx, actor, ins[from:to], h, results[from:to])
		if p != nil {
			docs, fields = append(docs, p.docs...), append(fields, p.fields...)
		}
		return err
	})
	return docs, fields, err
}

// runsWithoutRepeats cuts items into consecutive runs in which no key
// repeats and calls fn on each, in order.
func runsWithoutRepeats[T any, K comparable](items []T, key func(T) K, fn func(from, to int) error) error {
	start := 0
	seen := make(map[K]bool, len(items))
	for i := 0; i <= len(items); i++ {
		if i < len(items) && !seen[key(items[i])] {
			seen[key(items[i])] = true
			continue
		}
		if i > start {
			if err := fn(start, i); err != nil {
				return err
			}
		}
		if i < len(items) {
			clear(seen)
			seen[key(items[i])] = true
			start = i
		}
	}
	return nil
}

// rawDigest is the hex SHA-256 of a card's bytes, as stored.
func rawDigest(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// storeRun stores inputs with distinct card URLs inside tx, filling
// results, and returns the index documents to publish after commit. A
// card for an agent an admin removed restores it (same id and history),
// unless the crawler brought it: a check under way when the agent was
// removed must not undo the removal. hints is nil or one per input.
//
// It is lookup (the agents rows, locked), a plan made without I/O
// (decideRun, judgeRun, planRun; see plan.go) and applyRun.
func storeRun(tx *txn, actor Actor, ins []UpsertInput, hints []crawlHint, results []UpsertResult) (*runPlan, error) {
	found, err := lookupRun(tx, ins)
	if err != nil {
		return nil, err
	}
	steps := decideRun(ins, hints, found)
	if err := judgeRun(tx.admission, ins, hints, steps); err != nil {
		return nil, err
	}
	fresh, err := allocateFresh(tx, steps)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	p, err := planRun(ins, hints, steps, fresh, tx.listing, tx.admission, now, results)
	if err != nil {
		return nil, err
	}
	if err := applyRun(tx, actor, p, now); err != nil {
		return nil, err
	}
	return p, nil
}

// lookupRun reads, and on PostgreSQL locks, the agents rows the inputs
// name, by card URL as stored.
func lookupRun(tx *txn, ins []UpsertInput) (map[string]*agentRecord, error) {
	urls := make([]string, len(ins))
	for i, in := range ins {
		urls[i] = cleanText(in.CardURL)
	}
	found := make(map[string]*agentRecord, len(ins))
	if err := lockAcross(tx, "card_url", urls); err != nil {
		return nil, err
	}
	for chunk := range slices.Chunk(urls, lockChunk) {
		var recs []agentRecord
		if err := tx.locked().Where("card_url IN ?", chunk).Order(lockOrder).Find(&recs).Error; err != nil {
			return nil, fmt.Errorf("looking up agents: %w", err)
		}
		for i := range recs {
			found[recs[i].CardURL] = &recs[i]
		}
	}
	return found, nil
}

// allocateFresh takes from the database the identities steps need.
func allocateFresh(tx *txn, steps []cardStep) (freshIDs, error) {
	nseq, npk := needs(steps)
	var f freshIDs
	var err error
	if f.seqs, err = allocate(tx, "seq", nseq); err != nil {
		return f, err
	}
	if f.pks, err = allocate(tx, "pk", npk); err != nil {
		return f, err
	}
	f.ids = make([]string, npk)
	for i := range f.ids {
		id, err := uuid.NewV7()
		if err != nil {
			return f, err
		}
		f.ids[i] = id.String()
	}
	return f, nil
}

// applyRun makes the writes of p inside tx, in an order that matters in
// two places: the agents rows are written before their annotations are
// read, and the change feed comes last (appendChanges).
func applyRun(tx *txn, actor Actor, p *runPlan, now time.Time) error {
	for _, r := range p.touched {
		if err := tx.Exec("UPDATE agents SET fetched_at = ?, policy_refused = '' WHERE pk = ?", r.at, r.pk).Error; err != nil {
			return fmt.Errorf("storing card %s: %w", r.cardURL, err)
		}
	}
	for _, r := range p.resumed {
		if err := tx.Exec("UPDATE crawl_state SET paused = ? WHERE agent_pk = ?", false, r.pk).Error; err != nil {
			return fmt.Errorf("resuming crawl of %s: %w", r.cardURL, err)
		}
	}
	if err := restoreRemoved(tx, actor, p.restored, now); err != nil {
		return err
	}
	for _, rec := range p.revived {
		if err := tx.Exec("UPDATE agents SET seq = ?, updated_at = ? WHERE pk = ?", rec.Seq, rec.UpdatedAt, rec.PK).Error; err != nil {
			return fmt.Errorf("restoring agent %s: %w", rec.ID, err)
		}
	}
	if err := deleteDerived(tx, p.rederived); err != nil {
		return err
	}
	if err := updateRows(tx, agentCardUpdate, p.changed); err != nil {
		return err
	}
	if err := insertRows(tx, agentsTable, p.created); err != nil {
		return err
	}
	if err := sendBackToReview(tx, actor, p.reapprove); err != nil {
		return err
	}
	if err := p.policy.apply(tx, actor); err != nil {
		return err
	}
	if err := refuseCrawled(tx, p.refused); err != nil {
		return err
	}
	// Read once the agents rows are written: on PostgreSQL the update
	// waited for a concurrent SetAnnotations holding the row, and this
	// read sees what it committed.
	if err := addAnnotationFacets(tx, p.docs, p.recs); err != nil {
		return err
	}
	addProvenanceFacets(p.docs, p.recs)
	if err := addSourceQueries(tx, p.docs, p.recs); err != nil {
		return err
	}
	if err := insertRows(tx, cardVersionsTable, p.versions); err != nil {
		return err
	}
	if err := p.derived.write(tx); err != nil {
		return err
	}
	if err := insertRows(tx, crawlStateTable, p.crawlRows); err != nil {
		return err
	}
	return appendChanges(tx, p.changes)
}

// isUniqueViolation tells a unique-constraint failure of a statement run
// outside gorm (the cached bulk statements), which gorm cannot translate.
func isUniqueViolation(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" // unique_violation
}

// appendChanges adds entries to the change feed. On PostgreSQL a
// transaction-scoped advisory lock makes entries commit in seq order, so a
// reader paging by seq never skips one that commits late (SQLite writers
// are serialized anyway).
func appendChanges(tx *txn, rows []changeRow) error {
	if len(rows) == 0 {
		return nil
	}
	if tx.d == dialectPostgres {
		if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", changeFeedLock).Error; err != nil {
			return fmt.Errorf("locking change feed: %w", err)
		}
	}
	return insertRows(tx, changesTable, rows)
}

// changeFeedLock is the advisory lock key of the change feed ("a2a-chg").
const changeFeedLock int64 = 0x61326163686700

// allocate reserves n values of agents.pk or agents.seq. On SQLite the
// write transaction holds the database lock (_txlock=immediate), so MAX()+1
// cannot race; on PostgreSQL both come from sequences.
func allocate(tx *txn, column string, n int) ([]int64, error) {
	if n == 0 {
		return nil, nil
	}
	out := make([]int64, 0, n)
	if tx.d == dialectPostgres {
		seq := "agent_seq"
		if column == "pk" {
			seq = "agents_pk_seq"
		}
		if err := tx.Raw("SELECT nextval(?::regclass) FROM generate_series(1, ?)", seq, n).Scan(&out).Error; err != nil {
			return nil, fmt.Errorf("allocating agents.%s: %w", column, err)
		}
		return out, nil
	}
	var last int64
	// Tombstones keep a deleted agent's pk and seq from being reused.
	if err := tx.Raw("SELECT MAX(COALESCE((SELECT MAX(" + column + ") FROM agents), 0), " +
		"COALESCE((SELECT MAX(" + column + ") FROM agent_tombstones), 0))").Scan(&last).Error; err != nil {
		return nil, fmt.Errorf("allocating agents.%s: %w", column, err)
	}
	for i := range n {
		out = append(out, last+1+int64(i))
	}
	return out, nil
}

var derivedTables = []string{"skills", "interfaces", "security_schemes", "lint_findings"}

func deleteDerived(tx *txn, pks []int64) error {
	for chunk := range slices.Chunk(pks, 500) {
		for _, t := range derivedTables {
			if err := tx.Exec("DELETE FROM "+t+" WHERE agent_pk IN ?", chunk).Error; err != nil {
				return fmt.Errorf("clearing %s: %w", t, err)
			}
		}
	}
	return nil
}

// derivedRows collects the relational view of several cards (skills,
// interfaces, schemes, findings) to write them with one multi-row INSERT
// per table.
type derivedRows struct {
	skills   []skillRow
	ifaces   []interfaceRow
	schemes  []schemeRow
	findings []findingRow
}

func (d *derivedRows) add(pk int64, c *card.Card) error {
	for i, sk := range c.Skills {
		d.skills = append(d.skills, skillRow{AgentPK: pk, Ordinal: i, SkillID: sk.ID, Name: sk.Name,
			Description: sk.Description, Examples: jsonArray(sk.Examples), Tags: jsonArray(sk.Tags),
			InputModes: jsonArray(sk.InputModes), OutputModes: jsonArray(sk.OutputModes),
			InputModesInherited: sk.InheritsInputModes, OutputModesInherited: sk.InheritsOutputModes})
	}
	for i, it := range c.Interfaces {
		d.ifaces = append(d.ifaces, interfaceRow{AgentPK: pk, Ordinal: i, URL: it.URL, Binding: it.Binding,
			ProtocolVersion: it.ProtocolVersion, Tenant: it.Tenant})
	}
	for _, sc := range c.SecuritySchemes {
		details, err := json.Marshal(sc)
		if err != nil {
			return err
		}
		d.schemes = append(d.schemes, schemeRow{AgentPK: pk, Name: sc.Name, Type: sc.Type, Details: string(details)})
	}
	for i, f := range c.Findings {
		d.findings = append(d.findings, findingRow{AgentPK: pk, Ordinal: i, Code: f.Code, Severity: string(f.Severity),
			Path: f.Path, Message: f.Message})
	}
	return nil
}

// derivedMark is a position in derivedRows: the rows added after it are
// one card's.
type derivedMark [4]int

func (d *derivedRows) mark() derivedMark {
	return derivedMark{len(d.skills), len(d.ifaces), len(d.schemes), len(d.findings)}
}

// truncate drops the rows added after m.
func (d *derivedRows) truncate(m derivedMark) {
	d.skills, d.ifaces, d.schemes, d.findings = d.skills[:m[0]], d.ifaces[:m[1]], d.schemes[:m[2]], d.findings[:m[3]]
}

// digestSince is the SHA-256 of the rows added after m, as the column
// values insertRows writes for them (cleanText aside, which is a function
// of them): equal digests mean equal rows.
func (d *derivedRows) digestSince(m derivedMark) string {
	h := sha256.New()
	var buf []any
	buf = digestRows(h, buf, skillsTable, d.skills[m[0]:])
	buf = digestRows(h, buf, interfacesTable, d.ifaces[m[1]:])
	buf = digestRows(h, buf, schemesTable, d.schemes[m[2]:])
	digestRows(h, buf, findingsTable, d.findings[m[3]:])
	return hex.EncodeToString(h.Sum(nil))
}

// digestRows writes the table's name, its row count and every column value
// of rows to h, each with its length or type, so that no two row sets
// write the same bytes.
func digestRows[R any](h hash.Hash, buf []any, t bulkTable[R], rows []R) []any {
	var num [8]byte
	putInt := func(tag byte, v uint64) {
		binary.LittleEndian.PutUint64(num[:], v)
		h.Write([]byte{tag})
		h.Write(num[:])
	}
	io.WriteString(h, t.name)
	putInt('n', uint64(len(rows)))
	for _, r := range rows {
		buf = t.args(buf[:0], r)
		for _, v := range buf {
			switch v := v.(type) {
			case string:
				putInt('s', uint64(len(v)))
				io.WriteString(h, v)
			case int:
				putInt('i', uint64(v))
			case int64:
				putInt('i', uint64(v))
			case bool:
				b := uint64(0)
				if v {
					b = 1
				}
				putInt('b', b)
			default:
				fmt.Fprintf(h, "%T:%v;", v, v)
			}
		}
	}
	return buf
}

func (d *derivedRows) write(tx *txn) error {
	if err := insertRows(tx, skillsTable, d.skills); err != nil {
		return err
	}
	if err := insertRows(tx, interfacesTable, d.ifaces); err != nil {
		return err
	}
	if err := insertRows(tx, schemesTable, d.schemes); err != nil {
		return err
	}
	return insertRows(tx, findingsTable, d.findings)
}

// textOf is the searchable text of a card (see textOfParts).
func textOf(c *card.Card) searchText {
	return textOfParts(c.Name, c.Description, providerOf(c), skillsOf(c))
}

func skillsOf(c *card.Card) []indexedSkill {
	skills := make([]indexedSkill, len(c.Skills))
	for i, sk := range c.Skills {
		skills[i] = indexedSkill{id: sk.ID, name: sk.Name, description: sk.Description, tags: sk.Tags, examples: sk.Examples,
			inputModes: sk.InputModes, outputModes: sk.OutputModes}
	}
	return skills
}

func providerOf(c *card.Card) string {
	if c.Provider == nil {
		return ""
	}
	return strings.TrimSpace(c.Provider.Organization)
}

// cleanText replaces NUL characters, which JSON allows in strings ("\u0000")
// but PostgreSQL text cannot hold. Raw card bytes are stored as bytes and
// keep them.
func cleanText(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

func normalizeTag(t string) string { return strings.ToLower(strings.TrimSpace(t)) }

// dedupe normalizes values and drops empty and repeated ones, keeping order.
func dedupe(vals []string, norm func(string) string) []string {
	out := make([]string, 0, len(vals))
	seen := make(map[string]struct{}, len(vals))
	for _, v := range vals {
		v = norm(v)
		if v == "" {
			continue
		}
		if _, ok := seen[v]; ok {
			continue
		}
		seen[v] = struct{}{}
		out = append(out, v)
	}
	return out
}

// jsonArray encodes strings as a JSON array ("[]" for none).
func jsonArray(s []string) string {
	b, _ := json.Marshal(nonNil(s)) // a []string always marshals
	return string(b)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// refuseCrawled writes the refusals of crawled cards: the agent stays at
// its version, stale, the rule named. Its crawl validators are cleared,
// so the next check fetches the card whole and judges it again, under
// whatever policy is then in force.
func refuseCrawled(tx *txn, recs []agentRecord) error {
	for _, r := range recs {
		if err := tx.Exec("UPDATE agents SET health = ?, policy_refused = ?, seq = ?, updated_at = ? WHERE pk = ?",
			r.Health, r.PolicyRefused, r.Seq, r.UpdatedAt, r.PK).Error; err != nil {
			return fmt.Errorf("refusing the card of agent %s: %w", r.ID, err)
		}
		if err := tx.Exec("UPDATE crawl_state SET etag = '', last_modified = '' WHERE agent_pk = ?", r.PK).Error; err != nil {
			return fmt.Errorf("refusing the card of agent %s: %w", r.ID, err)
		}
	}
	return nil
}
