-- +goose Up
-- Webhook subscriptions and their deliveries (Standard Webhooks). Events
-- are the change feed: its rows are written in the transaction of the
-- write they describe, so the feed is the outbox. webhook_cursor is the
-- last feed seq fanned out into webhook_deliveries; the cursor moves in the
-- transaction that inserts the deliveries, so a crash loses none and a
-- seq is fanned out once. secret is the signing key (whsec_ without the
-- prefix), kept because every delivery must be signed with it.
CREATE TABLE webhooks (
    id              TEXT     PRIMARY KEY,
    url             TEXT     NOT NULL,
    event_types     TEXT     NOT NULL,
    filter          TEXT     NOT NULL DEFAULT '',
    secret          TEXT     NOT NULL,
    created_at      DATETIME NOT NULL,
    created_by      TEXT     NOT NULL DEFAULT '',
    disabled_at     DATETIME,
    disabled_reason TEXT     NOT NULL DEFAULT ''
);

CREATE TABLE webhook_cursor (
    id  INTEGER PRIMARY KEY,
    seq BIGINT  NOT NULL
);
INSERT INTO webhook_cursor (id, seq) SELECT 1, COALESCE(MAX(seq), 0) FROM changes;

CREATE TABLE webhook_deliveries (
    pk               INTEGER  PRIMARY KEY AUTOINCREMENT,
    webhook_id       TEXT     NOT NULL,
    seq              BIGINT   NOT NULL,
    agent_id         TEXT     NOT NULL,
    event_type       TEXT     NOT NULL,
    payload          TEXT     NOT NULL,
    state            TEXT     NOT NULL,
    attempts         INTEGER  NOT NULL DEFAULT 0,
    created_at       DATETIME NOT NULL,
    next_attempt_at  DATETIME NOT NULL,
    lease_until      DATETIME,
    first_failure_at DATETIME,
    last_attempt_at  DATETIME,
    last_status      INTEGER  NOT NULL DEFAULT 0,
    last_error       TEXT     NOT NULL DEFAULT ''
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (webhook_id, agent_id, seq);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhook_cursor;
DROP TABLE webhooks;
