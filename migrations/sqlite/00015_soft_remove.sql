-- +goose Up
-- Removing an agent (admin) is a state of its row, not a delete: its
-- versions, verification reports, fetch log, runs and audit rows stay
-- readable by admins, and registering its card URL again restores it with
-- the same id. removed_at is NULL for a listed agent; removed_by names who
-- removed it, for the console's banner (the audit log has the rest).
-- Replicas learn of a removal or a restore as of any write: the row's seq
-- and updated_at change (see catalog.Store.Sync).
--
-- Agents deleted before this migration (hard deletes that left a row in
-- agent_tombstones) are gone for good: their versions were deleted with
-- them. Their tombstones stay, read by Sync and by pk/seq allocation.
ALTER TABLE agents ADD COLUMN removed_at DATETIME;
ALTER TABLE agents ADD COLUMN removed_by TEXT NOT NULL DEFAULT '';
CREATE INDEX agents_removed ON agents (removed_at, pk) WHERE removed_at IS NOT NULL;

-- +goose Down
DROP INDEX agents_removed;
ALTER TABLE agents DROP COLUMN removed_by;
ALTER TABLE agents DROP COLUMN removed_at;
