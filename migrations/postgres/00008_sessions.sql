-- +goose Up
-- Console sign-in sessions, one row per signed-in browser, so any replica
-- sharing the catalog serves them. The cookie holds a random token; only
-- its SHA-256 is stored, so reading this table does not let anyone sign
-- in. The principal is a snapshot taken at sign-in: a role changed at the
-- provider applies from the next sign-in. A row is dead once now passes
-- idle_expires_at (moved forward while the browser is active, never past
-- expires_at) or expires_at; dead rows are pruned.
CREATE TABLE sessions (
    id_hash         TEXT        PRIMARY KEY,
    subject         TEXT        NOT NULL,
    email           TEXT        NOT NULL DEFAULT '',
    name            TEXT        NOT NULL DEFAULT '',
    role            TEXT        NOT NULL,
    groups_json     TEXT        NOT NULL DEFAULT '[]',
    created_at      TIMESTAMPTZ NOT NULL,
    last_seen_at    TIMESTAMPTZ NOT NULL,
    idle_expires_at TIMESTAMPTZ NOT NULL,
    expires_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX sessions_idle_expires_at ON sessions (idle_expires_at);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

-- +goose Down
DROP TABLE sessions;
