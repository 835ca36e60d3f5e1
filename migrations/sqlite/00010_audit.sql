-- +goose Up
-- The audit log: one row per write a person made (or the registry made on
-- a request's behalf, as for the local admin of development mode), written
-- in the same transaction as the write, so a change without its row or a
-- row without its change cannot exist. The crawler's and the verifier's
-- own background writes are not recorded. Who is a snapshot at the time of
-- the write: subject is stable, email, name and role are as they were.
-- detail_json holds what the action changed (a card URL, a version, a
-- key's kid). Rows are never updated; newest first is id descending.
CREATE TABLE audit_log (
    id           INTEGER  PRIMARY KEY AUTOINCREMENT,
    at           DATETIME NOT NULL,
    actor_kind   TEXT     NOT NULL,
    subject      TEXT     NOT NULL,
    name         TEXT     NOT NULL DEFAULT '',
    email        TEXT     NOT NULL DEFAULT '',
    role         TEXT     NOT NULL DEFAULT '',
    action       TEXT     NOT NULL,
    target_kind  TEXT     NOT NULL,
    target_id    TEXT     NOT NULL,
    detail_json  TEXT     NOT NULL DEFAULT '{}',
    request_id   TEXT     NOT NULL DEFAULT '',
    client_addr  TEXT     NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_target ON audit_log (target_kind, target_id, id);

-- +goose Down
DROP TABLE audit_log;
