-- +goose Up
-- agent_facets held 37 of the 44 derived rows of every card version and was
-- read only when the search index was built. The index now derives facets
-- from agents.summary, signature_status and health; the one facet no card
-- holds, the security-audit finding codes of the verifier's report, moves
-- to agents.audit_codes (a sorted JSON array).
ALTER TABLE agents ADD COLUMN audit_codes TEXT NOT NULL DEFAULT '[]';
UPDATE agents SET audit_codes = (
    SELECT json_group_array(value) FROM (
        SELECT value FROM agent_facets WHERE agent_pk = agents.pk AND field = 'audit' ORDER BY value))
WHERE EXISTS (SELECT 1 FROM agent_facets WHERE agent_pk = agents.pk AND field = 'audit');
DROP TABLE agent_facets;

-- +goose Down
-- Only the facets that do not come from the card are restored; a binary of
-- the previous schema re-derives the others when it next stores each card.
CREATE TABLE agent_facets (
    agent_pk INTEGER NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    field    TEXT    NOT NULL,
    value    TEXT    NOT NULL,
    PRIMARY KEY (agent_pk, field, value)
) WITHOUT ROWID;
INSERT INTO agent_facets (agent_pk, field, value) SELECT pk, 'signature', signature_status FROM agents;
INSERT INTO agent_facets (agent_pk, field, value) SELECT pk, 'health', health FROM agents;
INSERT INTO agent_facets (agent_pk, field, value)
SELECT a.pk, 'audit', j.value FROM agents a, json_each(a.audit_codes) j;
ALTER TABLE agents DROP COLUMN audit_codes;
