-- +goose Up
-- The `works` search facet: whether the interfaces the agent's card
-- declares really work, from its latest declared-vs-working check (a runs
-- row of kind 'check', whose state is all, some, none or unchecked).
-- Written with the check, in its transaction, bumping the agent's seq and
-- updated_at so that every replica's index picks it up (catalog Sync).
ALTER TABLE agents ADD COLUMN works TEXT NOT NULL DEFAULT 'unchecked';
UPDATE agents SET works = (
    SELECT r.state FROM runs r WHERE r.agent_pk = agents.pk AND r.kind = 'check'
    ORDER BY r.created_at DESC, r.id DESC LIMIT 1)
WHERE EXISTS (SELECT 1 FROM runs r WHERE r.agent_pk = agents.pk AND r.kind = 'check');

-- +goose Down
ALTER TABLE agents DROP COLUMN works;
