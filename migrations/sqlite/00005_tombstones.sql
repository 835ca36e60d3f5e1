-- +goose Up
-- One row per deleted agent, so that replicas' search indexes drop it on
-- their next sync (agents rows are gone, nothing else would tell them).
-- pk and seq are those of the agents row's last state: keeping them here
-- also keeps SQLite's MAX()+1 allocation from ever reusing a deleted
-- agent's pk or seq.
CREATE TABLE agent_tombstones (
    pk         INTEGER  PRIMARY KEY,
    agent_id   TEXT     NOT NULL,
    seq        INTEGER  NOT NULL,
    deleted_at DATETIME NOT NULL
);
CREATE INDEX agent_tombstones_deleted_at ON agent_tombstones (deleted_at);

-- +goose Down
DROP TABLE agent_tombstones;
