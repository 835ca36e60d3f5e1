-- +goose Up
-- The confusable keys (UTS #39 skeletons, see internal/contentscan) of the
-- name and provider of each agent's current card, written with its
-- verification report, so the content scan of one card finds the agents
-- whose name looks the same by an index lookup instead of reading every
-- agent. name_key is "name:<key>" or "provider:<key>"; text is the name or
-- provider as written.
CREATE TABLE agent_name_keys (
    name_key TEXT    NOT NULL,
    agent_pk INTEGER NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    text     TEXT    NOT NULL,
    PRIMARY KEY (name_key, agent_pk)
) WITHOUT ROWID;
CREATE INDEX agent_name_keys_agent ON agent_name_keys (agent_pk);
-- Reports made before the content scan existed are due again, so every
-- agent gets its content findings and its keys.
UPDATE verifications SET recheck_at = verified_at;

-- +goose Down
DROP TABLE agent_name_keys;
