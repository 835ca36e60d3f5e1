-- +goose Up
-- A nested catalog a source's manifest links (an entry of outcome
-- followed) keeps the ETag and Last-Modified it was read with, so a check
-- whose top manifest answers 304 still asks each nested catalog with its
-- own conditional request, and a change there is not missed until the
-- top changes.
ALTER TABLE source_entries ADD COLUMN etag TEXT NOT NULL DEFAULT '';
ALTER TABLE source_entries ADD COLUMN last_modified TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE source_entries DROP COLUMN last_modified;
ALTER TABLE source_entries DROP COLUMN etag;
