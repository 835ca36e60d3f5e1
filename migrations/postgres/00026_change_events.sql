-- +goose Up
-- Events beside the change feed: agent.health, agent.signature,
-- agent.listing, agent.withdrawn, agent.content_finding and source.failed
-- are rows of changes (written in the transaction of what they report, so
-- webhooks keep the feed as their outbox) whose kind the public feed
-- leaves out; detail is the event's JSON data ({"from":…,"to":…}).
ALTER TABLE changes ADD COLUMN detail TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE changes DROP COLUMN detail;
