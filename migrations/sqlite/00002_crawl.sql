-- +goose Up
-- Crawl schedule and state, one row per agent. Leases let several crawlers
-- share the work: a claimed row is skipped until lease_until passes.
CREATE TABLE crawl_state (
    agent_pk             INTEGER PRIMARY KEY REFERENCES agents (pk) ON DELETE CASCADE,
    next_check_at        DATETIME NOT NULL,
    paused               INTEGER  NOT NULL DEFAULT 0,
    etag                 TEXT     NOT NULL DEFAULT '',
    last_modified        TEXT     NOT NULL DEFAULT '',
    served_url           TEXT     NOT NULL DEFAULT '',
    legacy_path          INTEGER  NOT NULL DEFAULT 0,
    consecutive_failures INTEGER  NOT NULL DEFAULT 0,
    last_check_at        DATETIME,
    last_success_at      DATETIME,
    last_error_class     TEXT     NOT NULL DEFAULT '',
    last_error_message   TEXT     NOT NULL DEFAULT '',
    last_error_status    INTEGER  NOT NULL DEFAULT 0,
    last_error_at        DATETIME,
    lease_owner          TEXT     NOT NULL DEFAULT '',
    lease_until          DATETIME
);
CREATE INDEX crawl_state_due ON crawl_state (next_check_at) WHERE paused = 0;

-- Every check's outcome, kept for a retention period, for uptime figures.
CREATE TABLE fetch_log (
    id           INTEGER  PRIMARY KEY,
    agent_pk     INTEGER  NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    at           DATETIME NOT NULL,
    ok           INTEGER  NOT NULL,
    not_modified INTEGER  NOT NULL,
    status       INTEGER  NOT NULL,
    latency_ms   INTEGER  NOT NULL,
    class        TEXT     NOT NULL DEFAULT '',
    message      TEXT     NOT NULL DEFAULT ''
);
CREATE INDEX fetch_log_agent_at ON fetch_log (agent_pk, at);
CREATE INDEX fetch_log_at ON fetch_log (at);

-- The change feed. No foreign key: entries outlive the agents they name.
CREATE TABLE changes (
    seq      INTEGER  PRIMARY KEY AUTOINCREMENT,
    agent_pk INTEGER  NOT NULL,
    agent_id TEXT     NOT NULL,
    card_url TEXT     NOT NULL,
    kind     TEXT     NOT NULL,
    version  INTEGER  NOT NULL DEFAULT 0,
    at       DATETIME NOT NULL
);

-- Agents that exist already: imported cards stay paused (they may be
-- offline copies), the others are due now; the feed starts with them.
INSERT INTO crawl_state (agent_pk, next_check_at, paused)
SELECT a.pk, a.fetched_at, CASE WHEN v.source = 'import' THEN 1 ELSE 0 END
FROM agents a JOIN card_versions v ON v.agent_pk = a.pk AND v.number = 1;
INSERT INTO changes (agent_pk, agent_id, card_url, kind, version, at)
SELECT pk, id, card_url, 'created', current_version, created_at FROM agents ORDER BY pk;

-- +goose Down
DROP TABLE changes;
DROP TABLE fetch_log;
DROP TABLE crawl_state;
