-- +goose Up
-- The severities (error, warning, info) of the current card version's
-- security-audit and content findings, a sorted JSON array beside
-- audit_codes: a code's severity is not fixed (invalid_scheme takes the
-- lint finding's), so the severity facet cannot be derived from codes.
-- Filled from the stored report of the current version; agents without
-- one get theirs from their first verification.
ALTER TABLE agents ADD COLUMN finding_severities TEXT NOT NULL DEFAULT '[]';
UPDATE agents SET finding_severities = (
    SELECT json_group_array(sev) FROM (
        SELECT DISTINCT json_extract(f.value, '$.severity') AS sev
        FROM verifications r, json_each(r.report, '$.security_findings') f
        WHERE r.agent_pk = agents.pk AND r.version = agents.current_version
          AND json_type(r.report, '$.security_findings') = 'array'
        UNION
        SELECT json_extract(f.value, '$.severity')
        FROM verifications r, json_each(r.report, '$.content_findings') f
        WHERE r.agent_pk = agents.pk AND r.version = agents.current_version
          AND json_type(r.report, '$.content_findings') = 'array'
        ORDER BY 1
    ) WHERE sev IN ('error', 'warning', 'info')
)
WHERE EXISTS (SELECT 1 FROM verifications r WHERE r.agent_pk = agents.pk AND r.version = agents.current_version);

-- +goose Down
ALTER TABLE agents DROP COLUMN finding_severities;
