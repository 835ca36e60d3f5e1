-- +goose Up
-- A digest of the rows a card version derives (skills, interfaces, security
-- schemes, lint findings). A new version whose derived rows are the same as
-- the stored ones (most edits change a description or a version string)
-- keeps them instead of deleting and inserting them again. Empty means not
-- known: the next version rewrites the rows and records it.
ALTER TABLE agents ADD COLUMN derived_sha256 TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE agents DROP COLUMN derived_sha256;
