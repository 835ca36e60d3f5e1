package catalog

import (
	"context"
	"fmt"

	"github.com/a2aregistry/registry/internal/card"
)

// Agent returns one agent with the normalized view of its current card.
func (s *Store) Agent(ctx context.Context, id string) (Agent, error) {
	return s.agentWhere(ctx, "id = ?", id)
}

// AgentByURL returns the agent registered under a card URL.
func (s *Store) AgentByURL(ctx context.Context, cardURL string) (Agent, error) {
	return s.agentWhere(ctx, "card_url = ?", cardURL)
}

func (s *Store) agentWhere(ctx context.Context, cond string, arg string) (Agent, error) {
	var rec agentRecord
	if err := s.db.WithContext(ctx).Where(cond, arg).Take(&rec).Error; err != nil {
		return Agent{}, fmt.Errorf("agent %s: %w", arg, translate(err))
	}
	var v cardVersionRecord
	if err := s.db.WithContext(ctx).Where("agent_pk = ? AND number = ?", rec.PK, rec.CurrentVersion).
		Take(&v).Error; err != nil {
		return Agent{}, fmt.Errorf("current version of agent %s: %w", rec.ID, translate(err))
	}
	// The normalized view is derived, so it is rebuilt from the stored
	// bytes: a parser fix shows up without a data migration.
	c, err := card.Parse(v.Raw, s.limits)
	if err != nil {
		return Agent{}, fmt.Errorf("re-parsing stored card of agent %s: %w", rec.ID, err)
	}
	return agentOf(rec, c), nil
}

func agentOf(rec agentRecord, c *card.Card) Agent {
	return Agent{
		ID:              rec.ID,
		CardURL:         rec.CardURL,
		Card:            c,
		SignatureStatus: rec.SignatureStatus,
		Health:          rec.Health,
		CurrentVersion:  rec.CurrentVersion,
		CreatedAt:       rec.CreatedAt.UTC(),
		UpdatedAt:       rec.UpdatedAt.UTC(),
		FetchedAt:       rec.FetchedAt.UTC(),
	}
}

// RawCard returns the current card of an agent exactly as it was received.
func (s *Store) RawCard(ctx context.Context, id string) ([]byte, error) {
	var raw []byte
	err := s.db.WithContext(ctx).Raw(
		`SELECT v.raw FROM card_versions v JOIN agents a ON a.pk = v.agent_pk AND a.current_version = v.number
		 WHERE a.id = ?`, id).Row().Scan(&raw)
	if err != nil {
		return nil, fmt.Errorf("raw card of agent %s: %w", id, translateRow(err))
	}
	return raw, nil
}

// Versions lists the stored versions of an agent's card, newest first.
func (s *Store) Versions(ctx context.Context, id string) ([]VersionSummary, error) {
	pk, err := s.pkOf(ctx, id)
	if err != nil {
		return nil, err
	}
	var recs []cardVersionRecord
	if err := s.db.WithContext(ctx).Select("number", "sha256", "size", "source", "received_at").
		Where("agent_pk = ?", pk).Order("number DESC").Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("versions of agent %s: %w", id, err)
	}
	out := make([]VersionSummary, len(recs))
	for i, r := range recs {
		out[i] = versionSummary(r)
	}
	return out, nil
}

// Version returns version n (1-based) of an agent's card with its raw bytes.
func (s *Store) Version(ctx context.Context, id string, n int) (Version, error) {
	pk, err := s.pkOf(ctx, id)
	if err != nil {
		return Version{}, err
	}
	var r cardVersionRecord
	if err := s.db.WithContext(ctx).Where("agent_pk = ? AND number = ?", pk, n).Take(&r).Error; err != nil {
		return Version{}, fmt.Errorf("version %d of agent %s: %w", n, id, translate(err))
	}
	return Version{VersionSummary: versionSummary(r), Raw: r.Raw}, nil
}

func versionSummary(r cardVersionRecord) VersionSummary {
	return VersionSummary{Number: r.Number, SHA256: r.SHA256, Size: r.Size, Source: r.Source, ReceivedAt: r.ReceivedAt.UTC()}
}

func (s *Store) pkOf(ctx context.Context, id string) (int64, error) {
	var pk int64
	err := s.db.WithContext(ctx).Raw("SELECT pk FROM agents WHERE id = ?", id).Row().Scan(&pk)
	if err != nil {
		return 0, fmt.Errorf("agent %s: %w", id, translateRow(err))
	}
	return pk, nil
}
