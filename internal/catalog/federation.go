package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Source kinds.
const (
	// SourceManifest is an ARD or AI Catalog manifest, or an origin
	// resolved to one.
	SourceManifest = "manifest"
	// SourceRegistry is a peer registry the registry federates from.
	SourceRegistry = "registry"
)

// ErrInvalidSource is returned for a source the catalog cannot store as
// asked (an unknown kind).
var ErrInvalidSource = errors.New("catalog: invalid source")

// SecretRegistryID names the random value this registry's id is derived
// from (RegistryID).
const SecretRegistryID = "registry_id"

// sourceTokenAt names the row a sealed peer token belongs to.
func sourceTokenAt(id string) string { return "sources.token:" + id }

// SourceToken returns the bearer token stored for peer source id ("" when
// none). Only the federation client reads it: it is never shown.
func (s *Store) SourceToken(ctx context.Context, id string) (string, error) {
	var stored []string
	if err := s.db.WithContext(ctx).Raw("SELECT token FROM sources WHERE id = ?", id).Scan(&stored).Error; err != nil {
		return "", fmt.Errorf("token of source %s: %w", id, err)
	}
	if len(stored) == 0 {
		return "", fmt.Errorf("source %s: %w", id, ErrNotFound)
	}
	return s.seal.open(sourceTokenAt(id), stored[0])
}

// RegistryID is this registry's own id: the same for every replica of
// one database and across restarts, advertised to peers (the ARD
// manifest's registry entry, the change feed) so that a registry never
// federates from itself. It is derived from a stored random secret by a
// one-way hash, so publishing it reveals nothing of the secret.
func (s *Store) RegistryID(ctx context.Context) (string, error) {
	key, err := s.Secret(ctx, SecretRegistryID)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte("a2a-registry-id\x00"), key...))
	return hex.EncodeToString(sum[:16]), nil
}

func entryIDs(entries []SourceEntry) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Identifier)
	}
	return out
}

// applyIncremental stores the entries of an incremental check in place
// of the stored ones of the same identifiers, drops those of c.Removed,
// and returns how many entries the source has now.
func applyIncremental(tx *txn, c SourceCheck) (int, error) {
	ids := append(entryIDs(c.Entries), c.Removed...)
	for chunk := range slices.Chunk(ids, 500) {
		if err := tx.Exec("DELETE FROM source_entries WHERE source_id = ? AND identifier IN ?", c.SourceID, chunk).Error; err != nil {
			return 0, fmt.Errorf("replacing entries of source %s: %w", c.SourceID, err)
		}
	}
	var last *int
	if err := tx.Raw("SELECT MAX(position) FROM source_entries WHERE source_id = ?", c.SourceID).Scan(&last).Error; err != nil {
		return 0, fmt.Errorf("entries of source %s: %w", c.SourceID, err)
	}
	first := 0
	if last != nil {
		first = *last + 1
	}
	if err := insertEntries(tx, c.SourceID, first, c.Entries); err != nil {
		return 0, err
	}
	var n int64
	if err := tx.Table("source_entries").Where("source_id = ?", c.SourceID).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("entries of source %s: %w", c.SourceID, err)
	}
	return int(n), nil
}

// endEntriesProvenance ends the provenance rows of source sourceID whose
// entry is one of named and not in keep, withdraws the agents nothing
// else vouches for, and brings the others' provenance facet up to date;
// rows of entries it does not name stay as they are.
func endEntriesProvenance(tx *txn, actor Actor, sourceID string, named, keep []string, at time.Time, reason string) ([]string, []fieldUpdate, error) {
	kept := make(map[string]bool, len(keep))
	for _, k := range keep {
		kept[k] = true
	}
	var ending []string
	for _, id := range named {
		if !kept[id] {
			ending = append(ending, id)
		}
	}
	var ended []provenanceRecord
	for chunk := range slices.Chunk(ending, 500) {
		var recs []provenanceRecord
		if err := tx.Select("pk", "agent_pk").Where("source_id = ? AND kind = ? AND ended_at IS NULL AND entry_id IN ?",
			sourceID, ProvenanceSource, chunk).Find(&recs).Error; err != nil {
			return nil, nil, fmt.Errorf("provenance of source %s: %w", sourceID, err)
		}
		ended = append(ended, recs...)
	}
	return endProvenanceRows(tx, actor, ended, at, sourceID, reason)
}
