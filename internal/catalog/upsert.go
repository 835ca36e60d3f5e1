package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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

// UpsertBatch stores several cards in one transaction, for imports and bulk
// loads. Either every card is stored or none is.
func (s *Store) UpsertBatch(ctx context.Context, ins []UpsertInput) ([]UpsertResult, error) {
	for i := range ins {
		if err := validateInput(&ins[i]); err != nil {
			return nil, err
		}
	}
	results := make([]UpsertResult, len(ins))
	changed := make([]indexedDoc, 0, len(ins))
	store := func(tx *gorm.DB) error {
		changed = changed[:0]
		for i, in := range ins {
			res, doc, err := s.upsertTx(tx, in)
			if err != nil {
				return fmt.Errorf("storing card %s: %w", in.CardURL, err)
			}
			results[i] = res
			if doc != nil {
				changed = append(changed, *doc)
			}
		}
		return nil
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
	if idx := s.loadedIndex(); idx != nil {
		for _, d := range changed {
			idx.set(d)
		}
	}
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

// upsertTx does one card's work inside tx. It returns the index document to
// publish after commit, or nil when nothing searchable changed.
func (s *Store) upsertTx(tx *gorm.DB, in UpsertInput) (UpsertResult, *indexedDoc, error) {
	c := in.Card
	sum := sha256.Sum256(c.Raw)
	digest := hex.EncodeToString(sum[:])

	var rec agentRecord
	err := tx.Where("card_url = ?", in.CardURL).Take(&rec).Error
	created := errors.Is(err, gorm.ErrRecordNotFound)
	if err != nil && !created {
		return UpsertResult{}, nil, err
	}
	if !created && rec.RawSHA256 == digest {
		if err := tx.Model(&agentRecord{}).Where("pk = ?", rec.PK).
			Update("fetched_at", in.ReceivedAt).Error; err != nil {
			return UpsertResult{}, nil, err
		}
		rec.FetchedAt = in.ReceivedAt
		return UpsertResult{Agent: s.agentFromRecord(rec, c)}, nil, nil
	}

	// updated_at is the catalog's clock, not the fetch time a caller
	// reports: replicas sync their search index by it (see Sync).
	now := time.Now().UTC()
	seq, err := s.nextSeq(tx)
	if err != nil {
		return UpsertResult{}, nil, err
	}
	summary, err := json.Marshal(summaryOf(c))
	if err != nil {
		return UpsertResult{}, nil, err
	}
	fields := map[string]any{
		"name":              cleanText(c.Name),
		"description":       cleanText(c.Description),
		"provider":          cleanText(providerOf(c)),
		"agent_version":     cleanText(c.Version),
		"shape":             string(c.Shape),
		"protocol_versions": strings.Join(c.ProtocolVersions, ","),
		"summary":           string(summary),
		"raw_sha256":        digest,
		"seq":               seq,
		"updated_at":        now,
		"fetched_at":        in.ReceivedAt,
	}
	if created {
		id, err := uuid.NewV7()
		if err != nil {
			return UpsertResult{}, nil, err
		}
		rec = agentRecord{
			ID: id.String(), CardURL: cleanText(in.CardURL), Name: cleanText(c.Name), Description: cleanText(c.Description),
			Provider: cleanText(providerOf(c)), AgentVersion: cleanText(c.Version), Shape: string(c.Shape),
			ProtocolVersions: strings.Join(c.ProtocolVersions, ","), Summary: string(summary),
			SignatureStatus: SignatureUnchecked, Health: HealthUnknown, CurrentVersion: 1,
			RawSHA256: digest, Seq: seq, CreatedAt: now, UpdatedAt: now,
			FetchedAt: in.ReceivedAt,
		}
		if err := tx.Create(&rec).Error; err != nil {
			return UpsertResult{}, nil, err
		}
	} else {
		rec.CurrentVersion++
		fields["current_version"] = rec.CurrentVersion
		if err := tx.Model(&agentRecord{}).Where("pk = ?", rec.PK).Updates(fields).Error; err != nil {
			return UpsertResult{}, nil, err
		}
		if err := deleteDerived(tx, rec.PK); err != nil {
			return UpsertResult{}, nil, err
		}
		rec.Name, rec.Description, rec.Provider = c.Name, c.Description, providerOf(c)
		rec.RawSHA256, rec.Seq, rec.UpdatedAt, rec.FetchedAt = digest, seq, now, in.ReceivedAt
	}
	version := cardVersionRecord{
		AgentPK: rec.PK, Number: rec.CurrentVersion, SHA256: digest, Size: len(c.Raw),
		Source: in.Source, ReceivedAt: in.ReceivedAt, Raw: c.Raw,
	}
	if err := tx.Create(&version).Error; err != nil {
		return UpsertResult{}, nil, err
	}
	facets := facetsOf(c, rec.SignatureStatus, rec.Health)
	if err := s.writeDerived(tx, rec.PK, c, facets); err != nil {
		return UpsertResult{}, nil, err
	}
	doc := &indexedDoc{pk: rec.PK, sortKey: sortKeyOf(c.Name), facets: facets, text: textOf(c)}
	return UpsertResult{Agent: s.agentFromRecord(rec, c), Created: created, NewVersion: true}, doc, nil
}

func (s *Store) nextSeq(tx *gorm.DB) (int64, error) {
	var seq int64
	q := "SELECT COALESCE(MAX(seq), 0) + 1 FROM agents"
	if s.dialect == dialectPostgres {
		q = "SELECT nextval('agent_seq')"
	}
	if err := tx.Raw(q).Scan(&seq).Error; err != nil {
		return 0, fmt.Errorf("allocating change sequence: %w", err)
	}
	return seq, nil
}

var derivedTables = []string{"skills", "interfaces", "security_schemes", "lint_findings", "agent_facets"}

func deleteDerived(tx *gorm.DB, pk int64) error {
	for _, t := range derivedTables {
		if err := tx.Exec("DELETE FROM "+t+" WHERE agent_pk = ?", pk).Error; err != nil {
			return fmt.Errorf("clearing %s: %w", t, err)
		}
	}
	return nil
}

// writeDerived writes the indexed view of a card: the rows every filter,
// facet and text match is computed from.
func (s *Store) writeDerived(tx *gorm.DB, pk int64, c *card.Card, facets []facetRecord) error {
	skills := make([][]any, 0, len(c.Skills))
	for i, sk := range c.Skills {
		skills = append(skills, []any{pk, i, sk.ID, sk.Name, sk.Description,
			jsonArray(sk.Examples), jsonArray(sk.Tags), jsonArray(sk.InputModes), jsonArray(sk.OutputModes),
			sk.InheritsInputModes, sk.InheritsOutputModes})
	}
	ifaces := make([][]any, 0, len(c.Interfaces))
	for i, it := range c.Interfaces {
		ifaces = append(ifaces, []any{pk, i, it.URL, it.Binding, it.ProtocolVersion, it.Tenant})
	}
	schemes := make([][]any, 0, len(c.SecuritySchemes))
	for _, sc := range c.SecuritySchemes {
		details, err := json.Marshal(sc)
		if err != nil {
			return err
		}
		schemes = append(schemes, []any{pk, sc.Name, sc.Type, string(details)})
	}
	findings := make([][]any, 0, len(c.Findings))
	for i, f := range c.Findings {
		findings = append(findings, []any{pk, i, f.Code, string(f.Severity), f.Path, f.Message})
	}
	facetRows := make([][]any, len(facets))
	for i, f := range facets {
		facetRows[i] = []any{pk, f.Field, f.Value}
	}
	for _, ins := range []struct {
		table string
		cols  string
		rows  [][]any
	}{
		{"skills", "agent_pk, ordinal, skill_id, name, description, examples, tags, input_modes, output_modes, input_modes_inherited, output_modes_inherited", skills},
		{"interfaces", "agent_pk, ordinal, url, binding, protocol_version, tenant", ifaces},
		{"security_schemes", "agent_pk, name, type, details", schemes},
		{"lint_findings", "agent_pk, ordinal, code, severity, path, message", findings},
		{"agent_facets", "agent_pk, field, value", facetRows},
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
