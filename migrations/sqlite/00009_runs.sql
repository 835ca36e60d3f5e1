-- +goose Up
-- Test runs against agents (the built-in A2A client): one row per
-- conversation a tester started (kind 'run'), or per declared-vs-working
-- check of every interface (kind 'check'). transcript_json is the evidence: the
-- request without credentials, every event with its timing, interfaces
-- tried, protocol violations. Credentials never reach this table. Rows
-- older than the retention are pruned.
CREATE TABLE runs (
    id               TEXT     PRIMARY KEY,
    agent_pk         INTEGER  NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    kind             TEXT     NOT NULL DEFAULT 'run',
    subject          TEXT     NOT NULL DEFAULT '',
    interface_url    TEXT     NOT NULL DEFAULT '',
    binding          TEXT     NOT NULL DEFAULT '',
    protocol_version TEXT     NOT NULL DEFAULT '',
    state            TEXT     NOT NULL,
    context_id       TEXT     NOT NULL DEFAULT '',
    task_id          TEXT     NOT NULL DEFAULT '',
    error_code       TEXT     NOT NULL DEFAULT '',
    transcript_json  TEXT     NOT NULL DEFAULT '{}',
    -- revision counts updates: several requests may add to one run (a
    -- cancel while a stream runs), each updating only the revision it read.
    revision         INTEGER  NOT NULL DEFAULT 0,
    created_at       DATETIME NOT NULL,
    updated_at       DATETIME NOT NULL
) WITHOUT ROWID;
CREATE INDEX runs_agent_created ON runs (agent_pk, kind, created_at);
CREATE INDEX runs_updated_at ON runs (updated_at);

-- +goose Down
DROP TABLE runs;
