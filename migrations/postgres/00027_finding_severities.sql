-- +goose Up
-- The severities (error, warning, info) of the current card version's
-- security-audit and content findings, a sorted JSON array beside
-- audit_codes: a code's severity is not fixed (invalid_scheme takes the
-- lint finding's), so the severity facet cannot be derived from codes.
-- Filled from the stored report of the current version; agents without
-- one get theirs from their first verification.
ALTER TABLE agents ADD COLUMN finding_severities TEXT NOT NULL DEFAULT '[]';
UPDATE agents a SET finding_severities = s.sevs FROM (
    SELECT r.agent_pk, json_agg(DISTINCT f.sev ORDER BY f.sev)::text AS sevs
    FROM agents c
    JOIN verifications r ON r.agent_pk = c.pk AND r.version = c.current_version
    CROSS JOIN LATERAL (
        SELECT e->>'severity' AS sev FROM json_array_elements(CASE WHEN json_typeof(r.report::json->'security_findings') = 'array'
            THEN r.report::json->'security_findings' ELSE '[]'::json END) e
        UNION ALL
        SELECT e->>'severity' FROM json_array_elements(CASE WHEN json_typeof(r.report::json->'content_findings') = 'array'
            THEN r.report::json->'content_findings' ELSE '[]'::json END) e
    ) f
    WHERE f.sev IN ('error', 'warning', 'info')
    GROUP BY r.agent_pk
) s
WHERE a.pk = s.agent_pk;

-- +goose Down
ALTER TABLE agents DROP COLUMN finding_severities;
