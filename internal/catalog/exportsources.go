package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Exports carry sources and provenance so that a restore keeps how every
// agent came and what each source last read: without them a restored
// catalog would credit every agent to the import, and the first check of
// a source added again would find nothing it vouched for.

// ExportedProvenance is one provenance row as an export carries it.
type ExportedProvenance struct {
	Provenance
	// OriginKey tells the rows of one agent apart (who registered it, a
	// source's entry): a registration or an entry naming the agent again
	// renews its row rather than adding one.
	OriginKey string
}

// ExportedSource is a source as an export carries it: what it is and
// what its last check read. Its lease is not exported (it belongs to the
// old catalog's replicas), nor a peer registry's token (HasToken is
// ignored): add the peer again with its token after a restore.
type ExportedSource struct {
	Source
	Entries []SourceEntry
}

// exportProvenance reads the provenance rows of agents pks, by pk.
func exportProvenance(db *gorm.DB, pks []int64) (map[int64][]ExportedProvenance, error) {
	var recs []provenanceRecord
	if err := db.Where("agent_pk IN ?", pks).Order("agent_pk, first_at, pk").Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("exporting provenance: %w", err)
	}
	out := make(map[int64][]ExportedProvenance, len(pks))
	for _, r := range recs {
		p := r.provenance()
		p.FirstAt, p.LastAt, p.EndedAt = exportTime(p.FirstAt), exportTime(p.LastAt), ExportTimePtr(p.EndedAt)
		out[r.AgentPK] = append(out[r.AgentPK], ExportedProvenance{Provenance: p, OriginKey: r.OriginKey})
	}
	return out, nil
}

// restoreProvenance replaces the provenance rows the import's own writes
// made for agent pk with the exported ones, and sets its facet column
// from them (none for a removed agent: it vouches for nothing).
func restoreProvenance(tx *txn, pk int64, ps []ExportedProvenance, removed bool) error {
	if err := tx.Exec("DELETE FROM agent_provenance WHERE agent_pk = ?", pk).Error; err != nil {
		return fmt.Errorf("restoring provenance: %w", err)
	}
	recs := make([]provenanceRecord, len(ps))
	for i, p := range ps {
		recs[i] = provenanceRecord{AgentPK: pk, Kind: p.Kind, OriginKey: p.OriginKey, ByName: cleanText(p.By), SourceID: p.SourceID,
			SourceURL: cleanText(p.SourceURL), ManifestURL: cleanText(p.ManifestURL), EntryID: cleanText(p.EntryID), Relation: p.Relation,
			FirstAt: p.FirstAt.UTC(), LastAt: p.LastAt.UTC(), EndedAt: utcPtr(p.EndedAt)}
	}
	for chunk := range slices.Chunk(recs, 200) {
		if err := tx.Create(&chunk).Error; err != nil {
			return fmt.Errorf("restoring provenance: %w", translate(err))
		}
	}
	col := ""
	if !removed {
		facets, err := provenanceFacetsOf(tx, []int64{pk})
		if err != nil {
			return err
		}
		col = facets[pk]
	}
	if err := tx.Exec("UPDATE agents SET provenance = ? WHERE pk = ?", col, pk).Error; err != nil {
		return fmt.Errorf("restoring provenance: %w", err)
	}
	return nil
}

// Check refuses an exported provenance row a live write could not have
// made.
func (p ExportedProvenance) Check() error {
	switch p.Kind {
	case ProvenanceRegistered, ProvenanceSeeded, ProvenanceImported:
		if p.SourceID != "" || p.Relation != "" {
			return fmt.Errorf("%w: a %s provenance names a source", ErrInvalidImport, p.Kind)
		}
	case ProvenanceSource:
		if err := CheckID(p.SourceID); err != nil {
			return err
		}
		if !slices.Contains([]string{RelationPublishedFrom, RelationDiscoveredFrom, RelationFederatedFrom}, p.Relation) {
			return fmt.Errorf("%w: unknown provenance relation %q", ErrInvalidImport, p.Relation)
		}
	default:
		return fmt.Errorf("%w: unknown provenance kind %q", ErrInvalidImport, p.Kind)
	}
	if p.FirstAt.IsZero() || p.LastAt.Before(p.FirstAt) {
		return fmt.Errorf("%w: a provenance row's times are out of order", ErrInvalidImport)
	}
	return nil
}

// ExportSources calls fn with every source and the entries of its last
// check, oldest first.
func (s *Store) ExportSources(ctx context.Context, fn func(ExportedSource) error) error {
	srcs, err := s.Sources(ctx)
	if err != nil {
		return fmt.Errorf("exporting sources: %w", err)
	}
	for _, src := range srcs {
		entries, err := s.SourceEntries(ctx, src.ID)
		if err != nil {
			return fmt.Errorf("exporting sources: %w", err)
		}
		src.CreatedAt, src.NextCheckAt = exportTime(src.CreatedAt), exportTime(src.NextCheckAt)
		src.CheckedAt, src.ChangedAt = ExportTimePtr(src.CheckedAt), ExportTimePtr(src.ChangedAt)
		if err := fn(ExportedSource{Source: src, Entries: entries}); err != nil {
			return err
		}
	}
	return nil
}

// Check refuses an exported source a live write could not have made.
func (e ExportedSource) Check() error {
	if err := CheckID(e.ID); err != nil {
		return err
	}
	if err := CheckCardURL(e.URL); err != nil {
		return fmt.Errorf("source %s: %w", e.ID, err)
	}
	if e.Kind != "" && e.Kind != SourceManifest && e.Kind != SourceRegistry {
		return fmt.Errorf("%w: source %s: unknown kind %q", ErrInvalidImport, e.ID, e.Kind)
	}
	if !slices.Contains([]string{SourcePending, SourceOK, SourceFailed}, e.Status) {
		return fmt.Errorf("%w: source %s: unknown status %q", ErrInvalidImport, e.ID, e.Status)
	}
	for _, en := range e.Entries {
		if en.Outcome == "" || strings.ContainsAny(en.Outcome, " \n") {
			return fmt.Errorf("%w: source %s: an entry without an outcome", ErrInvalidImport, e.ID)
		}
	}
	return nil
}

// RestoreSource stores an exported source with its entries, due when it
// was (its lease not kept), and re-indexes the agents whose
// representative queries its entries add. ErrConflict when a source has
// its id or URL already.
func (s *Store) RestoreSource(ctx context.Context, actor Actor, e ExportedSource) error {
	if err := actor.validate(); err != nil {
		return err
	}
	rec := sourceRecord{ID: e.ID, URL: e.URL, CreatedAt: e.CreatedAt.UTC(), CreatedBy: cleanText(e.CreatedBy),
		ResolvedURL: cleanText(e.ResolvedURL), ResolvedVia: e.ResolvedVia, Status: e.Status, Problem: e.Problem,
		Message: cleanText(e.Message), ETag: cleanText(e.ETag), LastModified: cleanText(e.LastModified),
		CheckedAt: utcPtr(e.CheckedAt), ChangedAt: utcPtr(e.ChangedAt), NextCheckAt: e.NextCheckAt.UTC(),
		ConsecutiveFailures: e.ConsecutiveFailures, EntryCount: e.EntryCount, Kind: e.Kind, FeedCursor: cleanText(e.Cursor),
		ParentID: e.ParentID, PeerID: cleanText(e.PeerID), PeerURL: cleanText(e.PeerURL), PeerName: cleanText(e.PeerName)}
	if rec.Kind == "" {
		rec.Kind = SourceManifest
	}
	var requeried []int64
	err := s.transact(ctx, func(tx *txn) error {
		var n int64
		if err := tx.Model(&sourceRecord{}).Where("id = ? OR url = ?", e.ID, e.URL).Count(&n).Error; err != nil {
			return fmt.Errorf("looking up source: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("source %s: %w", e.URL, ErrConflict)
		}
		if err := tx.Create(&rec).Error; err != nil {
			return fmt.Errorf("restoring source %s: %w", e.ID, translate(err))
		}
		named := make([]string, 0, len(e.Entries))
		for _, en := range e.Entries {
			named = append(named, en.AgentID)
		}
		var err error
		requeried, err = requery(tx, e.ID, named, time.Now().UTC(), func() error { return replaceEntries(tx, e.ID, e.Entries) })
		return err
	})
	if err != nil {
		return err
	}
	s.afterRequery(ctx, requeried)
	return nil
}
