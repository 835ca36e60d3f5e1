-- +goose Up
-- Federation (docs/sources.md#federation): a source is a manifest (kind
-- 'manifest', as before) or a peer registry (kind 'registry'). A peer's
-- optional bearer token is stored sealed like webhook secrets (seal.go);
-- feed_cursor is the last change-feed seq read from a peer of this kind;
-- parent_id names the manifest source whose registry entry made this
-- source ('' for one added by hand); peer_id is the peer's registry id as
-- it last advertised it, so a peer that is this registry is refused;
-- peer_url and peer_name are its ARD search base and name (the referrals
-- of ARD federation=referrals).
ALTER TABLE sources ADD COLUMN kind TEXT NOT NULL DEFAULT 'manifest';
ALTER TABLE sources ADD COLUMN token TEXT NOT NULL DEFAULT '';
ALTER TABLE sources ADD COLUMN feed_cursor TEXT NOT NULL DEFAULT '';
ALTER TABLE sources ADD COLUMN parent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sources ADD COLUMN peer_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sources ADD COLUMN peer_url TEXT NOT NULL DEFAULT '';
ALTER TABLE sources ADD COLUMN peer_name TEXT NOT NULL DEFAULT '';
-- A change-feed sync replaces the entries it names, not the whole list.
CREATE INDEX source_entries_identifier ON source_entries (source_id, identifier);

-- +goose Down
DROP INDEX source_entries_identifier;
ALTER TABLE sources DROP COLUMN peer_name;
ALTER TABLE sources DROP COLUMN peer_url;
ALTER TABLE sources DROP COLUMN peer_id;
ALTER TABLE sources DROP COLUMN parent_id;
ALTER TABLE sources DROP COLUMN feed_cursor;
ALTER TABLE sources DROP COLUMN token;
ALTER TABLE sources DROP COLUMN kind;
