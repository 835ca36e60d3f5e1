-- +goose Up
-- One row per deleted agent, so that replicas' search indexes drop it on
-- their next sync (agents rows are gone, nothing else would tell them).
-- seq comes from agent_seq like every agents write.
CREATE TABLE agent_tombstones (
    pk         BIGINT      PRIMARY KEY,
    agent_id   TEXT        NOT NULL,
    seq        BIGINT      NOT NULL,
    deleted_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX agent_tombstones_deleted_at ON agent_tombstones (deleted_at);

-- +goose Down
DROP TABLE agent_tombstones;
