-- +goose Up
-- agent_facets held 37 of the 44 derived rows of every card version and was
-- read only when the search index was built. The index now derives facets
-- from agents.summary, signature_status and health; the one facet no card
-- holds, the security-audit finding codes of the verifier's report, moves
-- to agents.audit_codes (a sorted JSON array).
ALTER TABLE agents ADD COLUMN audit_codes TEXT NOT NULL DEFAULT '[]';
UPDATE agents a SET audit_codes = f.codes FROM (
    SELECT agent_pk, json_agg(value ORDER BY value)::text AS codes
    FROM agent_facets WHERE field = 'audit' GROUP BY agent_pk) f
WHERE f.agent_pk = a.pk;
DROP TABLE agent_facets;

-- +goose Down
-- Only the facets that do not come from the card are restored; a binary of
-- the previous schema re-derives the others when it next stores each card.
CREATE TABLE agent_facets (
    agent_pk BIGINT NOT NULL REFERENCES agents (pk) ON DELETE CASCADE,
    field    TEXT   NOT NULL,
    value    TEXT   NOT NULL,
    PRIMARY KEY (agent_pk, field, value)
);
INSERT INTO agent_facets (agent_pk, field, value) SELECT pk, 'signature', signature_status FROM agents;
INSERT INTO agent_facets (agent_pk, field, value) SELECT pk, 'health', health FROM agents;
INSERT INTO agent_facets (agent_pk, field, value)
SELECT a.pk, 'audit', j.value FROM agents a, json_array_elements_text(a.audit_codes::json) j(value);
ALTER TABLE agents DROP COLUMN audit_codes;
