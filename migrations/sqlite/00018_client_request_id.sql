-- +goose Up
-- The request id an audit row names is the registry's own, generated for
-- every request; a client's X-Request-Id is kept beside it, length-capped,
-- so a client can neither forge nor collide with the id operators search
-- the logs for.
ALTER TABLE audit_log ADD COLUMN client_request_id TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE audit_log DROP COLUMN client_request_id;
