-- +goose Up
-- The listing lifecycle of an agent: pending, approved, deprecated or
-- rejected, with the reason, the replacement of a deprecated agent, who made
-- the last transition and when. approved_version is the card version last
-- approved (0: never), so a review shows the diff from it to the current
-- one. visibility and collections are derived from collection membership
-- (see 00012 and catalog/collections.go) and kept on the row, so the search
-- index is built from, and other replicas sync, one row per agent:
-- visibility is a JSON array of "public" or "group:<value>" tokens,
-- collections the JSON array of the collection names the agent is in.
-- Agents catalogued before this migration are approved as they are.
ALTER TABLE agents ADD COLUMN listing TEXT NOT NULL DEFAULT 'approved';
ALTER TABLE agents ADD COLUMN listing_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN listing_replacement TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN listing_by TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN listing_at TIMESTAMPTZ;
ALTER TABLE agents ADD COLUMN approved_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN visibility TEXT NOT NULL DEFAULT '["public"]';
ALTER TABLE agents ADD COLUMN collections TEXT NOT NULL DEFAULT '[]';
UPDATE agents SET approved_version = current_version;
CREATE INDEX agents_listing ON agents (listing, pk);

-- +goose Down
DROP INDEX agents_listing;
ALTER TABLE agents DROP COLUMN collections;
ALTER TABLE agents DROP COLUMN visibility;
ALTER TABLE agents DROP COLUMN approved_version;
ALTER TABLE agents DROP COLUMN listing_at;
ALTER TABLE agents DROP COLUMN listing_by;
ALTER TABLE agents DROP COLUMN listing_replacement;
ALTER TABLE agents DROP COLUMN listing_reason;
ALTER TABLE agents DROP COLUMN listing;
