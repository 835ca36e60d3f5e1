package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/a2aregistry/registry/internal/card"
)

// Upsert stores a freshly received card. A new agent is created for an
// unknown card URL; a new version is recorded only when the raw bytes differ
// from the current version. Everything happens in one transaction: a failure
// leaves the catalog as it was.
func (s *Store) Upsert(ctx context.Context, in UpsertInput) (UpsertResult, error) {
	res, err := s.UpsertBatch(ctx, []UpsertInput{in})
	if err != nil {
		return UpsertResult{}, err
	}
	return res[0], nil
}

// UpsertBatch stores several cards in one transaction, for imports, bulk
// loads and crawler write batches. Either every card is stored or none is.
// Work is done per batch, not per card: one lookup, and one multi-row
// INSERT per table for all new and changed cards.
func (s *Store) UpsertBatch(ctx context.Context, ins []UpsertInput) ([]UpsertResult, error) {
	for i := range ins {
		if err := validateInput(&ins[i]); err != nil {
			return nil, err
		}
	}
	results := make([]UpsertResult, len(ins))
	var changed []indexedDoc
	store := func(tx *gorm.DB) error {
		var err error
		changed, err = s.upsertAll(tx, ins, results)
		return err
	}
	err := s.db.WithContext(ctx).Transaction(store)
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		// Another writer (a replica, a concurrent registration) created the
		// same card URL between our lookup and our insert. Once more sees
		// its row and turns the insert into an update or a no-op.
		err = s.db.WithContext(ctx).Transaction(store)
	}
	if err != nil {
		return nil, err
	}
	s.publish(changed)
	return results, nil
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

// upsertAll stores inputs inside tx, filling results, and returns the
// index documents to publish after commit. A card URL given twice is stored
// in order: the inputs are cut into runs without repeats, each stored by
// upsertRun.
func (s *Store) upsertAll(tx *gorm.DB, ins []UpsertInput, results []UpsertResult) ([]indexedDoc, error) {
	var docs []indexedDoc
	start := 0
	seen := make(map[string]bool, len(ins))
	for i := 0; i <= len(ins); i++ {
		if i < len(ins) && !seen[ins[i].CardURL] {
			seen[ins[i].CardURL] = true
			continue
		}
		d, err := s.upsertRun(tx, ins[start:i], results[start:i])
		if err != nil {
			return nil, err
		}
		docs = append(docs, d...)
		if i < len(ins) {
			clear(seen)
			seen[ins[i].CardURL] = true
			start = i
		}
	}
	return docs, nil
}

// upsertRun stores inputs with distinct card URLs inside tx, filling
// results, and returns the index documents to publish after commit.
func (s *Store) upsertRun(tx *gorm.DB, ins []UpsertInput, results []UpsertResult) ([]indexedDoc, error) {
	urls := make([]string, len(ins))
	for i, in := range ins {
		urls[i] = cleanText(in.CardURL)
	}
	existing := make(map[string]agentRecord, len(ins))
	for chunk := range slices.Chunk(urls, 500) {
		var recs []agentRecord
		if err := tx.Where("card_url IN ?", chunk).Find(&recs).Error; err != nil {
			return nil, fmt.Errorf("looking up agents: %w", err)
		}
		for _, r := range recs {
			existing[r.CardURL] = r
		}
	}

	// updated_at is the catalog's clock, not the fetch time a caller
	// reports: replicas sync their search index by it (see Sync).
	now := time.Now().UTC()
	var (
		writes  []int // inputs whose card is new or changed
		created []int
		digests = make([]string, len(ins))
		recs    = make([]agentRecord, len(ins))
	)
	for i, in := range ins {
		sum := sha256.Sum256(in.Card.Raw)
		digests[i] = hex.EncodeToString(sum[:])
		rec, ok := existing[urls[i]]
		switch {
		case !ok:
			created = append(created, i)
			writes = append(writes, i)
		case rec.RawSHA256 == digests[i]:
			if err := tx.Exec("UPDATE agents SET fetched_at = ? WHERE pk = ?", in.ReceivedAt, rec.PK).Error; err != nil {
				return nil, fmt.Errorf("storing card %s: %w", in.CardURL, err)
			}
			rec.FetchedAt = in.ReceivedAt
			results[i] = UpsertResult{Agent: s.agentFromRecord(rec, in.Card)}
		default:
			writes = append(writes, i)
		}
		recs[i] = rec
	}
	// Registering by URL an agent known from an import starts crawling it.
	for i, in := range ins {
		if rec, ok := existing[urls[i]]; ok && in.Source == SourceURL && !in.Paused {
			if err := tx.Exec("UPDATE crawl_state SET paused = ? WHERE agent_pk = ?", false, rec.PK).Error; err != nil {
				return nil, fmt.Errorf("resuming crawl of %s: %w", in.CardURL, err)
			}
		}
	}
	if len(writes) == 0 {
		return nil, nil
	}
	seqs, err := s.allocate(tx, "seq", len(writes))
	if err != nil {
		return nil, err
	}
	pks, err := s.allocate(tx, "pk", len(created))
	if err != nil {
		return nil, err
	}
	isCreated := make(map[int]bool, len(created))
	for j, i := range created {
		id, err := uuid.NewV7()
		if err != nil {
			return nil, err
		}
		recs[i] = agentRecord{PK: pks[j], ID: id.String(), CardURL: urls[i], SignatureStatus: SignatureUnchecked,
			Health: HealthUnknown, CreatedAt: now}
		isCreated[i] = true
	}

	var (
		agentRows, versionRows [][]any
		changedPKs             []int64
		derived                derivedRows
		docs                   = make([]indexedDoc, 0, len(writes))
	)
	for j, i := range writes {
		in, c, rec := ins[i], ins[i].Card, &recs[i]
		summary, err := json.Marshal(summaryOf(c))
		if err != nil {
			return nil, err
		}
		rec.Name, rec.Description, rec.Provider = cleanText(c.Name), cleanText(c.Description), cleanText(providerOf(c))
		rec.AgentVersion, rec.Shape, rec.ProtocolVersions = cleanText(c.Version), string(c.Shape), strings.Join(c.ProtocolVersions, ",")
		rec.Summary, rec.RawSHA256, rec.Seq = string(summary), digests[i], seqs[j]
		rec.UpdatedAt, rec.FetchedAt = now, in.ReceivedAt
		rec.CurrentVersion++
		// A verdict belongs to the bytes it was made on: a new version is
		// unchecked until the verification runner reports on it.
		rec.SignatureStatus = SignatureUnchecked
		if isCreated[i] {
			agentRows = append(agentRows, []any{rec.PK, rec.ID, rec.CardURL, rec.Name, rec.Description, rec.Provider,
				rec.AgentVersion, rec.Shape, rec.ProtocolVersions, rec.Summary, rec.SignatureStatus, rec.Health,
				rec.CurrentVersion, rec.RawSHA256, rec.Seq, rec.CreatedAt, rec.UpdatedAt, rec.FetchedAt})
		} else {
			changedPKs = append(changedPKs, rec.PK)
			if err := tx.Exec(`UPDATE agents SET name = ?, description = ?, provider = ?, agent_version = ?, shape = ?,
				protocol_versions = ?, summary = ?, raw_sha256 = ?, seq = ?, current_version = ?, updated_at = ?, fetched_at = ?,
				signature_status = ? WHERE pk = ?`, rec.Name, rec.Description, rec.Provider, rec.AgentVersion, rec.Shape, rec.ProtocolVersions,
				rec.Summary, rec.RawSHA256, rec.Seq, rec.CurrentVersion, rec.UpdatedAt, rec.FetchedAt, rec.SignatureStatus, rec.PK).Error; err != nil {
				return nil, fmt.Errorf("storing card %s: %w", in.CardURL, err)
			}
		}
		versionRows = append(versionRows, []any{rec.PK, rec.CurrentVersion, digests[i], len(c.Raw), in.Source, in.ReceivedAt, c.Raw})
		facets := facetsOf(c, rec.SignatureStatus, rec.Health)
		if err := derived.add(rec.PK, c, facets); err != nil {
			return nil, err
		}
		docs = append(docs, indexedDoc{pk: rec.PK, seq: rec.Seq, sortKey: sortKeyOf(c.Name), facets: facets, text: textOf(c)})
		results[i] = UpsertResult{Agent: s.agentFromRecord(*rec, c), Created: isCreated[i], NewVersion: true}
	}
	if err := deleteDerived(tx, changedPKs); err != nil {
		return nil, err
	}
	if err := insertRows(tx, "agents", agentColumns, agentRows); err != nil {
		return nil, fmt.Errorf("writing agents: %w", err)
	}
	if err := insertRows(tx, "card_versions", "agent_pk, number, sha256, size, source, received_at, raw", versionRows); err != nil {
		return nil, fmt.Errorf("writing card_versions: %w", err)
	}
	if err := derived.write(tx); err != nil {
		return nil, err
	}
	var crawlRows, changeRows [][]any
	for _, i := range writes {
		rec := recs[i]
		kind := ChangeUpdated
		if isCreated[i] {
			kind = ChangeCreated
			next := ins[i].NextCheckAt
			if next.IsZero() {
				next = now
			}
			crawlRows = append(crawlRows, []any{rec.PK, next.UTC(), ins[i].Paused})
		}
		changeRows = append(changeRows, []any{rec.PK, rec.ID, rec.CardURL, kind, rec.CurrentVersion, now})
	}
	if err := insertRows(tx, "crawl_state", "agent_pk, next_check_at, paused", crawlRows); err != nil {
		return nil, fmt.Errorf("writing crawl_state: %w", err)
	}
	if err := s.appendChanges(tx, changeRows); err != nil {
		return nil, err
	}
	return docs, nil
}

// appendChanges adds entries to the change feed. On PostgreSQL a
// transaction-scoped advisory lock makes entries commit in seq order, so a
// reader paging by seq never skips one that commits late (SQLite writers
// are serialized anyway).
func (s *Store) appendChanges(tx *gorm.DB, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if s.dialect == dialectPostgres {
		if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", changeFeedLock).Error; err != nil {
			return fmt.Errorf("locking change feed: %w", err)
		}
	}
	if err := insertRows(tx, "changes", "agent_pk, agent_id, card_url, kind, version, at", rows); err != nil {
		return fmt.Errorf("writing changes: %w", err)
	}
	return nil
}

// changeFeedLock is the advisory lock key of the change feed ("a2a-chg").
const changeFeedLock int64 = 0x61326163686700

const agentColumns = "pk, id, card_url, name, description, provider, agent_version, shape, protocol_versions, summary, " +
	"signature_status, health, current_version, raw_sha256, seq, created_at, updated_at, fetched_at"

// allocate reserves n values of agents.pk or agents.seq. On SQLite the
// write transaction holds the database lock (_txlock=immediate), so MAX()+1
// cannot race; on PostgreSQL both come from sequences.
func (s *Store) allocate(tx *gorm.DB, column string, n int) ([]int64, error) {
	if n == 0 {
		return nil, nil
	}
	out := make([]int64, 0, n)
	if s.dialect == dialectPostgres {
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

var derivedTables = []string{"skills", "interfaces", "security_schemes", "lint_findings", "agent_facets"}

func deleteDerived(tx *gorm.DB, pks []int64) error {
	for chunk := range slices.Chunk(pks, 500) {
		for _, t := range derivedTables {
			if err := tx.Exec("DELETE FROM "+t+" WHERE agent_pk IN ?", chunk).Error; err != nil {
				return fmt.Errorf("clearing %s: %w", t, err)
			}
		}
	}
	return nil
}

// derivedRows collects the indexed view of several cards (skills,
// interfaces, schemes, findings, facets) to write them with one multi-row
// INSERT per table.
type derivedRows struct {
	skills, ifaces, schemes, findings, facets [][]any
}

func (d *derivedRows) add(pk int64, c *card.Card, facets []facetRecord) error {
	for i, sk := range c.Skills {
		d.skills = append(d.skills, []any{pk, i, sk.ID, sk.Name, sk.Description,
			jsonArray(sk.Examples), jsonArray(sk.Tags), jsonArray(sk.InputModes), jsonArray(sk.OutputModes),
			sk.InheritsInputModes, sk.InheritsOutputModes})
	}
	for i, it := range c.Interfaces {
		d.ifaces = append(d.ifaces, []any{pk, i, it.URL, it.Binding, it.ProtocolVersion, it.Tenant})
	}
	for _, sc := range c.SecuritySchemes {
		details, err := json.Marshal(sc)
		if err != nil {
			return err
		}
		d.schemes = append(d.schemes, []any{pk, sc.Name, sc.Type, string(details)})
	}
	for i, f := range c.Findings {
		d.findings = append(d.findings, []any{pk, i, f.Code, string(f.Severity), f.Path, f.Message})
	}
	for _, f := range facets {
		d.facets = append(d.facets, []any{pk, f.Field, f.Value})
	}
	return nil
}

func (d *derivedRows) write(tx *gorm.DB) error {
	for _, ins := range []struct {
		table, cols string
		rows        [][]any
	}{
		{"skills", "agent_pk, ordinal, skill_id, name, description, examples, tags, input_modes, output_modes, input_modes_inherited, output_modes_inherited", d.skills},
		{"interfaces", "agent_pk, ordinal, url, binding, protocol_version, tenant", d.ifaces},
		{"security_schemes", "agent_pk, name, type, details", d.schemes},
		{"lint_findings", "agent_pk, ordinal, code, severity, path, message", d.findings},
		{"agent_facets", "agent_pk, field, value", d.facets},
	} {
		if err := insertRows(tx, ins.table, ins.cols, ins.rows); err != nil {
			return fmt.Errorf("writing %s: %w", ins.table, err)
		}
	}
	return nil
}

// insertRows writes rows with multi-row INSERTs: one statement per table
// and card rather than one per row, which is most of the cost of an upsert.
func insertRows(tx *gorm.DB, table, cols string, rows [][]any) error {
	const maxRows = 200
	for len(rows) > 0 {
		n := min(len(rows), maxRows)
		var b strings.Builder
		b.WriteString("INSERT INTO ")
		b.WriteString(table)
		b.WriteString(" (")
		b.WriteString(cols)
		b.WriteString(") VALUES ")
		args := make([]any, 0, n*len(rows[0]))
		for i, r := range rows[:n] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('(')
			for j := range r {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteByte('?')
			}
			b.WriteByte(')')
			for _, v := range r {
				if str, ok := v.(string); ok {
					v = cleanText(str)
				}
				args = append(args, v)
			}
		}
		if err := tx.Exec(b.String(), args...).Error; err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// textOf is the searchable text of a card (see textOfParts).
func textOf(c *card.Card) searchText {
	skills := make([]skillText, len(c.Skills))
	for i, sk := range c.Skills {
		skills[i] = skillText{id: sk.ID, name: sk.Name, description: sk.Description, tags: sk.Tags, examples: sk.Examples}
	}
	return textOfParts(c.Name, c.Description, providerOf(c), skills)
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
