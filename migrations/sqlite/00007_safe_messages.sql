-- +goose Up
-- Failure messages used to be the Go error text, which names the address a
-- host resolved to, socket addresses and the resolver's address. They are
-- shown to anyone reading an agent, so the stored ones are replaced by
-- their failure class; the next check writes a worded message (crawler
-- Problem). Verification reports carried the same text in probe and
-- OpenID findings: marking them stale has the verifier redo them.
UPDATE crawl_state SET last_error_message = last_error_class WHERE last_error_class <> '';
UPDATE fetch_log SET message = class WHERE class <> '';
UPDATE verifications SET stale = 1;

-- What vouched for the key of a verified signature (a pinned key, a
-- trusted origin, or only the card's own origin): a filter and facet of
-- its own. Reports are redone (above), which fills it.
ALTER TABLE agents ADD COLUMN signature_trust TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE agents DROP COLUMN signature_trust;
-- The original texts are gone; nothing to restore.
SELECT 1;
