-- +goose Up
-- Operator-owned facts about an agent (owning team, contact, data
-- classification, labels, internal notes), kept apart from the verbatim
-- card: no card version or card byte ever holds them. Keyed by the card
-- URL, the agent's one stable identity, without a foreign key: they
-- survive a new card version, and the agent's removal and registration
-- again (which makes a new agent id). labels is a JSON object of strings.
CREATE TABLE annotations (
    card_url       TEXT     PRIMARY KEY,
    owner_team     TEXT     NOT NULL DEFAULT '',
    contact        TEXT     NOT NULL DEFAULT '',
    classification TEXT     NOT NULL DEFAULT '',
    labels         TEXT     NOT NULL DEFAULT '{}',
    notes          TEXT     NOT NULL DEFAULT '',
    changed_at     TIMESTAMPTZ NOT NULL,
    changed_by     TEXT     NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE annotations;
